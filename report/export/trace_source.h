/* trace_source.h - one source of the timeline merge (trace_merge.h): the
 * kinds of rows, and a source's statement and current row, which the
 * merge steps in place or the feed (trace_feed.h) on a thread of its
 * own. */
#ifndef REPORT_TRACE_SOURCE_H
#define REPORT_TRACE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/store.h"

/* The sources, in tie-break order. TM_GRAPH: a launch of a CUDA graph
 * recorded whole (--cuda-graph-trace=graph), one row with no node of it. */
enum tm_kind { TM_NVTX, TM_GPU_NVTX, TM_RUNTIME, TM_DRIVER, TM_KERNEL, TM_MEMCPY, TM_MEMSET,
	       TM_GRAPH, TM_MEMORY, TM__COUNT };
#define TM_GPU_KINDS 4 /* TM_KERNEL..TM_GRAPH: GPU work */

static inline bool tm_kind__is_gpu(enum tm_kind k)
{
	return k >= TM_KERNEL && k <= TM_GRAPH;
}

struct tm_feed;

struct tm_source {
	enum tm_kind kind;
	struct prof_cursor *cur; /* NULL for TM_GPU_NVTX, which reads proj.done */
	bool has_row;
	int64_t start_ns;
	int64_t last_rowid;      /* GPU sources: the row handed out last */
	int fed;                 /* 1 + its place in the feed (trace_feed.h), whose
				  * copies cur reads; 0: stepped in place */
	struct tm_feed *feed;    /* that feed */
};

#endif
