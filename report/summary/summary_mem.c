/* summary_mem.c - cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum: GPU
 * copies and memsets per operation ("[CUDA memcpy Host-to-Device]",
 * "[CUDA memset]"), by time and by size. Sizes are in MB of 10^6 bytes, as
 * nsys prints them. */
#include "summary_impl.h"
#include "model/groups.h"
#include "model/names.h"
#include "model/rows.h"
#include "model/sql.h"

#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/error.h"

#define MB 1e6

/* Copies are keyed by copyKind, memsets by -1 (no copy kind is negative).
 * Rows with a bad span are left out of both reports, so that their counts
 * agree. */
static int mem_groups(struct prof_store *s, bool by_size, struct sum_groups *gs,
		      struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const time_parts[] = {
		"SELECT NULL AS l1, NULL AS l2, copyKind AS k, end - start AS v, "
		SUM_BAD_SPAN("") " AS bad FROM " PROF_T_MEMCPY,
		"SELECT NULL AS l1, NULL AS l2, -1 AS k, end - start AS v, "
		SUM_BAD_SPAN("") " AS bad FROM " PROF_T_MEMSET,
	};
	static const char *const size_parts[] = {
		"SELECT NULL AS l1, NULL AS l2, copyKind AS k, bytes AS v, "
		SUM_BAD_SPAN("") " AS bad FROM " PROF_T_MEMCPY,
		"SELECT NULL AS l1, NULL AS l2, -1 AS k, bytes AS v, "
		SUM_BAD_SPAN("") " AS bad FROM " PROF_T_MEMSET,
	};
	char *src;
	int rc;

	src = sum_union(s, tables, by_size ? size_parts : time_parts, 2, &rc, err);
	if (!src)
		return rc;
	rc = sum_groups__collect(gs, s, src, err);
	free(src);
	for (size_t i = 0; rc >= 0 && i < gs->n; i++) {
		struct sum_group *g = &gs->g[i];

		g->label = strdup(g->key < 0 ? SUM_MEMSET_OPERATION : sum_copy_operation(g->key));
		if (!g->label)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	return rc;
}

int summary__cuda_gpu_mem_time_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err)
{
	struct sum_groups gs = { 0 };
	int rc;

	rc = mem_groups(s, false, &gs, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&gs, sink, "cuda_gpu_mem_time_sum",
					   "CUDA GPU MemOps Summary (by Time)", "Count", NULL,
					   "Operation", RPT_TEXT, 0, err);
	sum_groups__exit(&gs);
	return rc;
}

static void mem_size_cells(const struct sum_group *g, struct rpt_cell *cells)
{
	const struct rpt_cell row[] = {
		sum_real((double)g->total / MB), sum_int(g->n),
		sum_real(g->mean / MB), sum_real(g->median / MB),
		sum_real((double)g->min / MB), sum_real((double)g->max / MB),
		sum_real(g->stddev / MB), sum_text(g->label),
	};

	memcpy(cells, row, sizeof row);
}

int summary__cuda_gpu_mem_size_sum(struct prof_store *s, struct rpt_sink *sink,
				   struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Total (MB)", RPT_REAL, 3 },
		{ "Count", RPT_INT, 0 },
		{ "Avg (MB)", RPT_REAL, 3 },
		{ "Med (MB)", RPT_REAL, 3 },
		{ "Min (MB)", RPT_REAL, 3 },
		{ "Max (MB)", RPT_REAL, 3 },
		{ "StdDev (MB)", RPT_REAL, 3 },
		{ "Operation", RPT_TEXT, 0 },
	};
	struct sum_groups gs = { 0 };
	int rc;

	rc = mem_groups(s, true, &gs, err);
	if (rc < 0)
		goto out;
	rc = sum_groups__emit(&gs, sink, "cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)",
			      cols, 8, mem_size_cells, err);
out:
	sum_groups__exit(&gs);
	return rc;
}
