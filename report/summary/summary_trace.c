/* summary_trace.c - cuda_gpu_trace: every kernel, copy and memset in start
 * order, one row each, and each launch of a CUDA graph recorded whole
 * (--cuda-graph-trace=graph) as one row named after its graph, streamed
 * from the store (never loaded whole), its start counted from the
 * capture's start (sum_capture__time) as every time perfkit shows. Rows
 * with a bad span are left out and counted, as every summary leaves them
 * out: a row of negative duration, or one 292 years long, is no trace. */
#include "summary_impl.h"
#include "model/groups.h"
#include "model/names.h"
#include "model/rows.h"
#include "model/sql.h"
#include "model/window.h"

#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define MB 1e6

enum trace_kind { TRACE_KERNEL = 0, TRACE_MEMCPY = 1, TRACE_MEMSET = 2, TRACE_GRAPH = 3 };

/* Columns: 0 start, 1 duration, 2 correlationId, 3-8 grid/block, 9 registers,
 * 10 static shared, 11 dynamic shared, 12 bytes, 13 srcKind, 14 dstKind,
 * 15 deviceId, 16 contextId, 17 streamId, 18 kernel name, 19 copyKind (a
 * graph's: graphId), 20 trace_kind, 21 the span is bad. */
static const char *const trace_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET,
					    PROF_T_GRAPH_TRACE };
static const char *const trace_parts[] = {
	"SELECT k.start, k.end - k.start, k.correlationId, k.gridX, k.gridY, k.gridZ, "
	"k.blockX, k.blockY, k.blockZ, k.registersPerThread, k.staticSharedMemory, "
	"k.dynamicSharedMemory, NULL, NULL, NULL, k.deviceId, k.contextId, k.streamId, "
	"s.value, NULL, 0, " SUM_BAD_SPAN("k.") " FROM " PROF_T_KERNEL " AS k "
	"LEFT JOIN " PROF_T_STRINGS " AS s ON s.id = " PROF_SQL_KERNEL_NAME_ID("k."),
	"SELECT start, end - start, correlationId, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, bytes, srcKind, dstKind, deviceId, contextId, streamId, NULL, copyKind, 1, "
	SUM_BAD_SPAN("") " FROM " PROF_T_MEMCPY,
	"SELECT start, end - start, correlationId, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, bytes, NULL, memKind, deviceId, contextId, streamId, NULL, NULL, 2, "
	SUM_BAD_SPAN("") " FROM " PROF_T_MEMSET,
	"SELECT start, end - start, correlationId, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL, deviceId, contextId, streamId, NULL, graphId, 3, "
	SUM_BAD_SPAN("") " FROM " PROF_T_GRAPH_TRACE,
};

static const struct rpt_column trace_cols[] = {
	{ "Start (ns)", RPT_INT, 0 },
	{ "Duration (ns)", RPT_INT, 0 },
	{ "CorrId", RPT_INT, 0 },
	{ "GrdX", RPT_INT, 0 },
	{ "GrdY", RPT_INT, 0 },
	{ "GrdZ", RPT_INT, 0 },
	{ "BlkX", RPT_INT, 0 },
	{ "BlkY", RPT_INT, 0 },
	{ "BlkZ", RPT_INT, 0 },
	{ "Reg/Trd", RPT_INT, 0 },
	{ "StcSMem (MB)", RPT_REAL, 3 },
	{ "DymSMem (MB)", RPT_REAL, 3 },
	{ "Bytes (MB)", RPT_REAL, 3 },
	{ "Throughput (MB/s)", RPT_REAL, 3 },
	{ "SrcMemKd", RPT_TEXT, 0 },
	{ "DstMemKd", RPT_TEXT, 0 },
	{ "Device", RPT_INT, 0 },
	{ "Ctx", RPT_INT, 0 },
	{ "Strm", RPT_INT, 0 },
	{ "Name", RPT_SYMBOL, 0 },
};
#define NCOLS ((int)(sizeof trace_cols / sizeof trace_cols[0]))

static struct rpt_cell int_or_null(struct prof_cursor *c, int col)
{
	return prof_cursor__is_null(c, col) ? sum_null() : sum_int(prof_cursor__int64(c, col));
}

static struct rpt_cell mb_or_null(struct prof_cursor *c, int col)
{
	return prof_cursor__is_null(c, col) ? sum_null()
					     : sum_real((double)prof_cursor__int64(c, col) / MB);
}

static struct rpt_cell kind_or_null(struct prof_cursor *c, int col)
{
	return prof_cursor__is_null(c, col) ? sum_null()
					     : sum_text(sum_mem_kind(prof_cursor__int64(c, col)));
}

static int trace_row(struct prof_cursor *c, int64_t zero_ns, struct rpt_sink *sink)
{
	struct rpt_cell cells[NCOLS];
	int64_t dur_ns = prof_cursor__int64(c, 1);
	enum trace_kind kind = (enum trace_kind)prof_cursor__int64(c, 20);
	char graph[96];

	for (int i = 0; i <= 9; i++)
		cells[i] = int_or_null(c, i);
	if (!prof_cursor__is_null(c, 0))
		cells[0] = sum_int(prof_span_saturated(zero_ns, prof_cursor__int64(c, 0)));
	cells[10] = mb_or_null(c, 10);
	cells[11] = mb_or_null(c, 11);
	cells[12] = mb_or_null(c, 12);
	/* bytes per ns * 1e9 / 1e6 = MB/s */
	cells[13] = prof_cursor__is_null(c, 12) || dur_ns <= 0
			    ? sum_null()
			    : sum_real((double)prof_cursor__int64(c, 12) * 1e3 / (double)dur_ns);
	cells[14] = kind_or_null(c, 13);
	cells[15] = kind_or_null(c, 14);
	cells[16] = int_or_null(c, 15);
	cells[17] = int_or_null(c, 16);
	cells[18] = int_or_null(c, 17);
	if (kind == TRACE_KERNEL)
		cells[19] = sum_text(prof_cursor__text(c, 18));
	else if (kind == TRACE_MEMCPY)
		cells[19] = sum_text(sum_copy_operation(prof_cursor__int64(c, 19)));
	else if (kind == TRACE_MEMSET)
		cells[19] = sum_text(SUM_MEMSET_OPERATION);
	else {
		sum_graph_launch_name(graph, sizeof graph, !prof_cursor__is_null(c, 19),
				      prof_cursor__int64(c, 19));
		cells[19] = sum_text(graph);
	}
	return sink->row(sink, cells);
}

int summary__cuda_gpu_trace(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	static const char order[] = " ORDER BY 1, 3";
	struct sum_capture_time time;
	struct prof_cursor *c = NULL;
	char *sql;
	int64_t left_out = 0;
	int rc;

	rc = sum_capture__zero(s, &time, err);
	if (rc < 0)
		return rc;
	sql = sum_union_then(s, trace_tables, trace_parts, 4, order, &rc, err);
	if (rc < 0)
		return rc;
	if (sql) {
		rc = prof_cursor__open(s, sql, &c, err);
		if (rc < 0)
			goto out;
	}
	rc = sink->begin(sink, "cuda_gpu_trace", "CUDA GPU Trace", trace_cols, NCOLS);
	if (rc < 0) {
		rc = sum_sink_error(rc, err);
		goto out;
	}
	while (c && (rc = prof_cursor__next(c, err)) > 0) {
		if (prof_cursor__int64(c, 21)) {
			left_out++;
			continue;
		}
		rc = trace_row(c, time.zero_ns, sink);
		if (rc < 0) {
			rc = sum_sink_error(rc, err);
			goto out;
		}
	}
	if (rc < 0)
		goto out;
	rc = sum_groups__note_left_out(&(struct sum_groups){ .rows_left_out = left_out }, sink);
	rc = sum_sink_error(rc < 0 ? rc : sink->end(sink), err);
out:
	if (c)
		prof_cursor__close(c);
	free(sql);
	return rc;
}
