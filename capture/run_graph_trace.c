/* run_graph_trace.c - --cuda-graph-trace=node|graph, as Nsight Systems
 * spells it. node (the default) records each node of a launched CUDA graph
 * as its own kernel, copy or memset, which every rule and report reads;
 * graph records one row a graph launch (CUPTI's graph trace) and none for
 * its nodes, which is cheaper where a program replays many small graphs,
 * and leaves the analysis blind inside them. graph is the `graphs` word of
 * --trace, added to the list the collector is handed. */
#include "run_session_parts.h"

#include <stdio.h>
#include <string.h>

#include "prof/trace_opts.h"

int run__graph_trace_check(struct run_session *s)
{
	const char *mode = s->opt.cuda_graph_trace;
	const char *list = s->opt.trace_list;
	int n;

	if (!mode || !strcmp(mode, "node")) {
		if (mode && (s->trace & PROF_TRACE_GRAPH_LEVEL)) {
			s->msg->error("--cuda-graph-trace=node and --trace=...,graphs contradict "
				      "each other: choose one");
			return -1;
		}
		return 0;
	}
	if (strcmp(mode, "graph")) {
		s->msg->error("--cuda-graph-trace: '%s' is neither node nor graph", mode);
		return -1;
	}
	if (s->trace & PROF_TRACE_GRAPH_LEVEL)
		return 0;
	n = snprintf(s->trace_list_graphs, sizeof s->trace_list_graphs, "%s,graphs",
		     list && *list ? list : PROF_TRACE_DEFAULT_LIST);
	if (n < 0 || (size_t)n >= sizeof s->trace_list_graphs) {
		s->msg->error("--trace: the list is too long");
		return -1;
	}
	s->opt.trace_list = s->trace_list_graphs;
	s->trace |= PROF_TRACE_GRAPH_LEVEL;
	return 0;
}
