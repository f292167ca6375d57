/* kernel_groups.c - the groups of cuda_gpu_kern_sum: GPU time per kernel
 * name, and per CUDA graph for the graph launches recorded whole, sorted by
 * total time, whole or as runs (groups.h). */
#include "model/groups.h"
#include "model/names.h"
#include "model/rows.h"
#include "model/sql.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"

/* Grouped by string id: names are interned, so equal names share an id. */
#define KERNELS "SELECT NULL AS l1, NULL AS l2, " PROF_SQL_KERNEL_NAME_ID("") " AS k, " \
		"end - start AS v, " SUM_BAD_SPAN("") " AS bad FROM " PROF_T_KERNEL
/* A graph recorded whole (--cuda-graph-trace=graph) is one row a launch and
 * no row of its kernels: its launches are a group of their own, by graph. */
#define GRAPHS "SELECT NULL AS l1, NULL AS l2, graphId AS k, end - start AS v, " \
	       SUM_BAD_SPAN("") " AS bad FROM " PROF_T_GRAPH_TRACE

bool sum_group__is_graph(const struct sum_group *g)
{
	return g->label2 && strcmp(g->label2, SUM_GRAPH_GROUP) == 0;
}

/* A graph's group: named after the graph, label2 saying what it is. */
static int graph_label(struct sum_group *g, struct prof_error *err)
{
	char name[96];

	sum_graph_launch_name(name, sizeof name, !g->key_is_null, g->key);
	free(g->label);
	free(g->label2);
	g->label = strdup(name);
	g->label2 = strdup(SUM_GRAPH_GROUP);
	if (!g->label || !g->label2)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return 0;
}

int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	size_t kernels;
	int rc;

	rc = sum_groups__collect(gs, s, KERNELS, err);
	if (rc >= 0)
		rc = sum_groups__label_from_strings(gs, s, err);
	kernels = gs->n;
	if (rc >= 0)
		rc = sum_groups__collect(gs, s, GRAPHS, err);
	for (size_t i = kernels; rc >= 0 && i < gs->n; i++)
		rc = graph_label(&gs->g[i], err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	return rc;
}

/* The runs of each kernel id, passed on under the kernel's name. */
struct named_runs {
	struct sum_runs_walk *w;
	struct prof_store *s;
	struct prof_error *err;
	int64_t key;      /* the id whose name is held */
	bool have;
	char *name;
};

static int name_run(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
		    struct sum_run run)
{
	struct named_runs *n = ctx;
	int rc;

	(void)l1;
	(void)l2;
	if (!key_is_null && (!n->have || key != n->key)) {
		free(n->name);
		rc = sum_string(n->s, key, &n->name, n->err);
		if (rc < 0)
			return rc;
		n->key = key;
		n->have = true;
	}
	return n->w->run(n->w->ctx, key_is_null ? NULL : n->name, NULL, key_is_null, 0, run);
}

/* The runs of each graph's launches, under the labels graph_label gives. */
static int graph_run(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
		     struct sum_run run)
{
	struct sum_runs_walk *w = ctx;
	char name[96];

	(void)l1;
	(void)l2;
	sum_graph_launch_name(name, sizeof name, !key_is_null, key);
	return w->run(w->ctx, name, SUM_GRAPH_GROUP, false, 0, run);
}

int sum_kernel_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err)
{
	struct named_runs n = { .w = w, .s = s, .err = err };
	struct sum_runs_walk inner = { .run = name_run, .ctx = &n };
	struct sum_runs_walk graphs = { .run = graph_run, .ctx = w };
	int rc;

	rc = sum_groups__runs(s, KERNELS, &inner, err);
	w->rows_left_out += inner.rows_left_out;
	free(n.name);
	if (rc >= 0)
		rc = sum_groups__runs(s, GRAPHS, &graphs, err);
	w->rows_left_out += graphs.rows_left_out;
	return rc;
}

int64_t sum_groups__graph_launches(const struct sum_groups *gs)
{
	int64_t launches = 0;

	for (size_t i = 0; i < gs->n; i++)
		if (sum_group__is_graph(&gs->g[i]))
			launches += gs->g[i].n;
	return launches;
}

struct rpt_note sum_graph_launches__note(int64_t launches, char *text, size_t cap)
{
	snprintf(text, cap,
		 "%" PRId64 " CUDA graph launch%s recorded whole (--cuda-graph-trace=graph): each "
		 "graph's launches are one row, \"CUDA graph ID (nodes not recorded)\", and the "
		 "kernels inside them are not in the capture (--cuda-graph-trace=node records them)",
		 launches, launches == 1 ? " was" : "es were");
	return (struct rpt_note){ SUM_NOTE_GRAPH_LAUNCHES, launches, text };
}

/* The kernels' table, with the note that says which rows are graph
 * launches and that their kernels were not recorded. */
static int emit_kernels(const struct sum_groups *gs, struct rpt_sink *sink, const char *report,
			const char *title, size_t limit, struct prof_error *err)
{
	char text[SUM_GRAPH_NOTE_MAX];
	struct rpt_note note = sum_graph_launches__note(sum_groups__graph_launches(gs), text,
							sizeof text);
	struct sum_time_table t = { report, title, "Instances", NULL, "Name", RPT_SYMBOL, limit,
				    &note };

	return sum_groups__emit_table(gs, sink, &t, err);
}

int sum_kernel_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink,
			    struct prof_error *err)
{
	return emit_kernels(gs, sink, "cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", 0, err);
}

int sum_kernel_groups__emit_top(const struct sum_groups *gs, struct rpt_sink *sink,
				const char *report, const char *title, size_t limit,
				struct prof_error *err)
{
	return emit_kernels(gs, sink, report, title, limit, err);
}
