/* summary_nvtx.c - nvtx_sum (time per NVTX range name and style) and
 * nvtx_kern_sum (GPU kernel time attributed to the innermost push/pop range
 * that enclosed the launching API call on the launching thread). */
#include "summary_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sql.h"
#include "prof/error.h"
#include "prof/tables.h"

int summary__nvtx_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_groups gs = { 0 };
	int rc;

	rc = sum_nvtx_groups(s, &gs, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&gs, sink, "nvtx_sum", "NVTX Range Summary", "Instances",
					   "Style", "Range", RPT_TEXT, 0, err);
	sum_groups__exit(&gs);
	return rc;
}

/* The launching call is found by correlationId (within the kernel's process:
 * ids are per process), the range by the call's thread and start time
 * (SUM_LAUNCHED_BY, SUM_NVTX_OPEN_AT_CALL); the innermost enclosing range is
 * the latest-starting one (the shorter one when two start together). Kernels
 * launched outside any range are left out.
 *
 * The latest start comes first, from a backward walk of the (globalTid,
 * start) index that stops at the first open range; the shorter of equal
 * starts is then picked among those few rows. One ORDER BY start DESC,
 * end ASC would sort every earlier range of the thread for every kernel. */
#define ATTRIBUTED                                                                       \
	"SELECT * FROM (SELECT "                                                         \
	"(SELECT coalesce(s.value, n.text) FROM " PROF_T_NVTX " AS n "                   \
	"  LEFT JOIN " PROF_T_STRINGS " AS s ON s.id = n.textId "                        \
	"  WHERE " SUM_NVTX_OPEN_AT_CALL("n", "a") " AND n.start = "                     \
	"    (SELECT o.start FROM " PROF_T_NVTX " AS o "                                 \
	"     WHERE " SUM_NVTX_OPEN_AT_CALL("o", "a") " ORDER BY o.start DESC LIMIT 1) " \
	"  ORDER BY n.end ASC LIMIT 1) AS l1, "                                          \
	"NULL AS l2, " PROF_SQL_KERNEL_NAME_ID("k.") " AS k, k.end - k.start AS v, "      \
	SUM_BAD_SPAN("k.") " AS bad "                                                    \
	"FROM " PROF_T_KERNEL " AS k JOIN (%s) AS a "                                    \
	"  ON " SUM_LAUNCHED_BY("k", "a") ") "                                           \
	"WHERE l1 IS NOT NULL"

/* The API calls (sum_api_calls) once each: a call recorded twice would
 * attribute its kernels twice. */
static int attributed_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	char *calls, *src;
	size_t len;
	int rc;

	calls = sum_api_calls(s, &rc, err);
	if (!calls)
		return rc;
	len = sizeof ATTRIBUTED + strlen(calls);
	src = malloc(len);
	if (!src) {
		free(calls);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	snprintf(src, len, ATTRIBUTED, calls);
	rc = sum_groups__collect(gs, s, src, err);
	/* The kernel name sits in label2 so label stays the range. */
	for (size_t i = 0; rc >= 0 && i < gs->n; i++)
		rc = gs->g[i].key_is_null ? 0 : sum_string(s, gs->g[i].key, &gs->g[i].label2, err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	free(src);
	free(calls);
	return rc;
}

static void nvtx_kern_cells(const struct sum_group *g, struct rpt_cell *cells)
{
	const struct rpt_cell row[] = {
		sum_text(g->label), sum_text(g->label2), sum_int(g->n),
		sum_int(g->total), sum_real(g->mean), sum_real(g->median),
		sum_int(g->min), sum_int(g->max), sum_real(g->stddev),
	};

	memcpy(cells, row, sizeof row);
}

int summary__nvtx_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "NVTX Range", RPT_TEXT, 0 },
		{ "Kernel Name", RPT_SYMBOL, 0 },
		{ "Instances", RPT_INT, 0 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ "Avg (ns)", RPT_REAL, 1 },
		{ "Med (ns)", RPT_REAL, 1 },
		{ "Min (ns)", RPT_INT, 0 },
		{ "Max (ns)", RPT_INT, 0 },
		{ "StdDev (ns)", RPT_REAL, 1 },
	};
	struct sum_groups gs = { 0 };
	int rc;

	rc = attributed_groups(s, &gs, err);
	if (rc < 0)
		goto out;
	rc = sum_groups__emit(&gs, sink, "nvtx_kern_sum", "NVTX Range Kernel Summary", cols, 9,
			      nvtx_kern_cells, err);
out:
	sum_groups__exit(&gs);
	return rc;
}
