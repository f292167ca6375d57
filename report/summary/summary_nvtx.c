/* summary_nvtx.c - nvtx_sum (time per NVTX range name and style) and
 * nvtx_kern_sum (GPU kernel time attributed to the innermost push/pop range
 * that enclosed the launching API call on the launching thread: the launch
 * found by correlationId within the kernel's process, SUM_LAUNCHED_BY; the
 * range by the call's thread and start, SUM_NVTX_OPEN_AT_CALL; kernels
 * launched outside any range left out; a CUDA graph's launches recorded
 * whole attributed alike, a row a range and graph, named as
 * cuda_gpu_kern_sum names them). */
#include "summary_impl.h"

#include <string.h>

#include "prof/error.h"
#include "prof/tables.h"

int summary__nvtx_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_groups gs = { 0 };
	int rc;

	rc = sum_nvtx_groups(s, &gs, err);
	if (rc >= 0)
		rc = sum_nvtx_groups__emit(&gs, sink, err);
	sum_groups__exit(&gs);
	return rc;
}

/* The kernels under each range (sum_nvtx_kernel_groups: one sweep of the
 * launches and ranges in time order), the kernel name in label2 so that
 * label stays the range; a graph's groups come named. */
static int attributed_groups(struct prof_store *s, struct sum_groups *gs, int64_t *graph_launches,
			     struct prof_error *err)
{
	int rc = sum_nvtx_kernel_groups(s, gs, graph_launches, err);

	for (size_t i = 0; rc >= 0 && i < gs->n; i++)
		rc = gs->g[i].key_is_null || gs->g[i].label2
			     ? 0
			     : sum_string(s, gs->g[i].key, &gs->g[i].label2, err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
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
	int64_t launches;
	char text[SUM_GRAPH_NOTE_MAX];
	struct rpt_note note;
	int rc;

	rc = attributed_groups(s, &gs, &launches, err);
	if (rc < 0)
		goto out;
	note = sum_graph_launches__note(launches, text, sizeof text);
	/* cuda_gpu_kern_sum's note, where the capture recorded graphs whole:
	 * a capture without them keeps its table as it was */
	rc = sum_groups__emit_noted(&gs, sink, "nvtx_kern_sum", "NVTX Range Kernel Summary", cols, 9,
				    nvtx_kern_cells,
				    prof_store__has_table(s, PROF_T_GRAPH_TRACE) ? &note : NULL, err);
out:
	sum_groups__exit(&gs);
	return rc;
}
