/* overview.c - the one-screen overview `perfkit report FILE` prints: run
 * metadata, GPU busy time per device, top kernels, transfers by direction
 * and host memory kind, top NVTX ranges, and a warning when records were
 * dropped. Each section is a small report on the same sink, so the JSON
 * overview carries the same data as the text one. Read from one store or
 * put together from a job's captures (report/job), so it lives in the read
 * model; summary/summary_overview.c runs it as the report "overview". */
#include "model/capture_windows.h"
#include "model/context_failure.h"
#include "model/groups.h"
#include "model/job_time.h"
#include "model/names.h"
#include "model/overview.h"
#include "model/rows.h"
#include "model/sql.h"
#include "model/sums.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof/tables.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define MB 1e6

/* ---- GPU busy ---------------------------------------------------------- */

static int busy_add(struct sum_overview *o, int64_t device_id, int64_t busy_ns)
{
	if (sum_array__grow(&o->busy, &o->busy_cap, o->nbusy, sizeof *o->busy))
		return PROF_E_NOMEM;
	o->busy[o->nbusy++] = (struct sum_busy_device){ device_id, busy_ns };
	return 0;
}

int64_t sum_busy__clipped(int64_t start, int64_t end, int64_t lo, int64_t hi)
{
	if (start < lo)
		start = lo;
	if (end > hi)
		end = hi;
	return end > start ? prof_span_saturated(start, end) : 0;
}

int sum_busy__walk(struct prof_store *s, const struct sum_time_move *move,
		   struct sum_busy_walk *w, struct prof_error *err)
{
	/* a graph recorded whole (--cuda-graph-trace=graph) is its nodes'
	 * kernels, copies and memsets */
	static const char *const tables[] = { PROF_T_GPU_WORK_TABLES };
	static const char *const parts[] = {
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_KERNEL,
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_MEMCPY,
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_MEMSET,
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_GRAPH_TRACE,
	};
	static const char order[] = " ORDER BY 1, 2";
	struct prof_cursor *c = NULL;
	int64_t dev = 0, cur_start = 0, cur_end = 0;
	bool open = false;
	char *sql;
	int rc;

	sql = sum_union_then(s, tables, parts, 4, order, &rc, err);
	if (!sql)
		return rc;
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		goto out;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t d = prof_cursor__int64(c, 0);
		int64_t start = prof_cursor__int64(c, 1), end = prof_cursor__int64(c, 2);

		if (prof_cursor__int64(c, 3)) {
			w->rows_left_out++;
			continue;
		}
		if (move) {
			/* a row moves by the offset at its start: its length stays */
			int64_t by = move->offset_at(move->ctx, start);

			start += by;
			end += by;
		}
		if (!w->any || start < w->first_ns)
			w->first_ns = start;
		if (!w->any || end > w->last_ns)
			w->last_ns = end;
		w->any = true;
		if (open && d == dev && start <= cur_end) {
			if (end > cur_end)
				cur_end = end;
			continue;
		}
		if (open && (rc = w->interval(w->ctx, dev, cur_start, cur_end)) < 0)
			break;
		dev = d;
		cur_start = start;
		cur_end = end;
		open = true;
	}
	if (rc >= 0 && open)
		rc = w->interval(w->ctx, dev, cur_start, cur_end);
	if (rc == PROF_E_NOMEM)
		prof_error__set(err, rc, "out of memory");
out:
	if (c)
		prof_cursor__close(c);
	free(sql);
	return rc < 0 ? rc : 0;
}

/* Busy time per device, each union interval clipped to [lo, hi]. */
struct busy_sum {
	struct sum_overview *o;
	int64_t lo, hi;
	const struct sum_busy_tap *tap;
};

static int busy_interval(void *ctx, int64_t device_id, int64_t start, int64_t end)
{
	struct busy_sum *b = ctx;
	struct sum_overview *o = b->o;
	int64_t ns = sum_busy__clipped(start, end, b->lo, b->hi);

	if (b->tap)
		b->tap->interval(b->tap->ctx, device_id, start, end);
	if (o->nbusy && o->busy[o->nbusy - 1].device_id == device_id) {
		o->busy[o->nbusy - 1].busy_ns = prof_add_saturated(o->busy[o->nbusy - 1].busy_ns, ns);
		return 0;
	}
	return busy_add(o, device_id, ns);
}

/* Merge kernel, copy and memset intervals per device in start order: the
 * union counts overlapping work (concurrent streams) once. Intervals are
 * clipped to [lo, hi], the capture span when the store records one; rows
 * with a bad span are left out and counted. */
static int busy_collect(struct prof_store *s, struct sum_overview *o, int64_t lo, int64_t hi,
			const struct sum_busy_tap *tap, struct prof_error *err)
{
	struct busy_sum b = { o, lo, hi, tap };
	struct sum_busy_walk w = { .interval = busy_interval, .ctx = &b };
	int rc = sum_busy__walk(s, NULL, &w, err);

	o->busy_first_ns = w.first_ns;
	o->busy_last_ns = w.last_ns;
	o->busy_any = w.any;
	o->busy_left_out = w.rows_left_out;
	return rc;
}

/* How many capture windows the capture has, and the time they recorded
 * inside [lo, hi) (nothing to count when it has none). */
static int recorded(struct prof_store *s, struct sum_overview *o, int64_t lo, int64_t hi,
		    struct prof_error *err)
{
	struct sum_stretches st;
	int rc = sum_stretches__load(s, lo, hi, &st, err);

	if (rc)
		return rc;
	o->windows = st.windows;
	o->recorded_ns = st.windows ? sum_stretches__covered(&st, lo, hi) : 0;
	sum_stretches__exit(&st);
	return 0;
}

/* ---- sections ---------------------------------------------------------- */

static int emit_pair(struct rpt_sink *sink, const char *key, const char *value)
{
	struct rpt_cell cells[2] = { sum_text(key), sum_text(value) };

	return sink->row(sink, cells);
}

static bool parse_int64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	v = strtoll(s, &end, 10);
	if (*end)
		return false;
	*out = v;
	return true;
}

static void format_utc(char *buf, size_t cap, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
	else
		snprintf(buf, cap, "%" PRId64 " ns", ns);
}

int sum_gpu_names__add(char **names, int64_t id, const char *name)
{
	size_t len = *names ? strlen(*names) : 0;
	char item[320];
	int n = snprintf(item, sizeof item, "%s%" PRId64 ": %s", len ? "; " : "", id,
			 name ? name : "?");
	char *grown = realloc(*names, len + (size_t)n + 1);

	if (!grown)
		return PROF_E_NOMEM;
	*names = grown;
	memcpy(*names + len, item, (size_t)n + 1);
	return 0;
}

/* GPU names from TARGET_INFO_GPU, "0: NVIDIA H100; 1: ..." (malloc'd). */
static int gpu_names(struct prof_store *s, char **out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	*out = NULL;
	rc = prof_cursor__open(s, "SELECT id, name FROM " PROF_T_GPU " ORDER BY id", &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		if (sum_gpu_names__add(out, prof_cursor__int64(c, 0), prof_cursor__text(c, 1)) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* nsys exports record the session start in TARGET_INFO_SESSION_START_TIME. */
static bool nsys_start(struct prof_store *s, int64_t *start_ns)
{
	struct prof_error ignored;
	struct prof_cursor *c = NULL;
	bool found = false;

	if (prof_cursor__open(s, "SELECT utcEpochNs FROM " PROF_T_SESSION_START " LIMIT 1",
			      &c, &ignored) < 0)
		return false;
	if (prof_cursor__next(c, &ignored) > 0 && !prof_cursor__is_null(c, 0)) {
		*start_ns = prof_cursor__int64(c, 0);
		found = true;
	}
	prof_cursor__close(c);
	return found;
}

bool sum_job_time__describe(const char *hosts, const char *base, const char *collectives,
			    const char *error_ns, struct sum_job_time *t)
{
	int64_t nhosts, matched, error;

	memset(t, 0, sizeof *t);
	if (!parse_int64(hosts, &nhosts) || nhosts < 2 || !base)
		return false;
	if (parse_int64(collectives, &matched))
		snprintf(t->base, sizeof t->base, "%s (%" PRId64 " matched across hosts)", base, matched);
	else
		snprintf(t->base, sizeof t->base, "%s", base);
	if (parse_int64(error_ns, &error))
		snprintf(t->error, sizeof t->error, "%.3f us", (double)error / 1e3);
	else if (!strncmp(base, "unaligned", 9))
		snprintf(t->error, sizeof t->error, "unknown (hosts without clock pairs are not moved)");
	else
		snprintf(t->error, sizeof t->error,
			 "unknown (the hosts' realtime clocks are taken to agree)");
	return true;
}

bool sum_job_time__load(struct prof_store *s, struct sum_job_time *t)
{
	char *hosts = prof_store__meta(s, "job_hosts"), *base = prof_store__meta(s, "time_base");
	char *collectives = prof_store__meta(s, "time_collectives");
	char *error = prof_store__meta(s, "time_error_ns");
	bool is = sum_job_time__describe(hosts, base, collectives, error, t);

	free(hosts);
	free(base);
	free(collectives);
	free(error);
	return is;
}

void sum_overview__exit(struct sum_overview *o)
{
	free(o->name);
	free(o->command);
	free(o->host);
	free(o->gpu);
	free(o->start);
	free(o->duration);
	free(o->exit_status);
	free(o->gpu_names);
	free(o->busy);
	free(o->transfers);
	sum_groups__exit(&o->kernels);
	sum_groups__exit(&o->ranges);
	memset(o, 0, sizeof *o);
}

bool sum_overview__span(const struct sum_overview *o, int64_t *start_ns, int64_t *duration_ns)
{
	return parse_int64(o->start, start_ns) && parse_int64(o->duration, duration_ns) &&
	       *duration_ns > 0;
}

static int section_run(struct rpt_sink *sink, const struct sum_overview *o, struct prof_error *err)
{
	static const struct rpt_column cols[] = { { "Item", RPT_TEXT, 0 }, { "Value", RPT_TEXT, 0 } };
	char buf[64];
	int64_t start_ns, duration_ns;
	bool span = sum_overview__span(o, &start_ns, &duration_ns);
	int rc;

	rc = sink->begin(sink, "overview_run", "Run", cols, 2);
	if (rc >= 0)
		rc = emit_pair(sink, "File", o->name);
	if (rc >= 0)
		rc = emit_pair(sink, "Format", o->nsys ? "Nsight Systems SQLite export" : "perfkit capture");
	if (rc >= 0 && o->command)
		rc = emit_pair(sink, "Command", o->command);
	if (rc >= 0 && o->host)
		rc = emit_pair(sink, "Host", o->host);
	if (rc >= 0 && (o->gpu || o->gpu_names))
		rc = emit_pair(sink, "GPU", o->gpu ? o->gpu : o->gpu_names);
	if (rc >= 0 && (parse_int64(o->start, &start_ns) || o->has_session_start)) {
		format_utc(buf, sizeof buf, parse_int64(o->start, &start_ns) ? start_ns
									      : o->session_start_ns);
		rc = emit_pair(sink, "Start", buf);
	}
	if (rc >= 0 && span) {
		snprintf(buf, sizeof buf, "%" PRId64, duration_ns);
		rc = emit_pair(sink, "Duration (ns)", buf);
	} else if (rc >= 0 && o->busy_any) {
		snprintf(buf, sizeof buf, "%" PRId64, prof_span_saturated(o->busy_first_ns, o->busy_last_ns));
		rc = emit_pair(sink, "GPU activity span (ns)", buf);
	}
	if (rc >= 0 && o->windows) {
		snprintf(buf, sizeof buf, "%d", o->windows);
		rc = emit_pair(sink, "Capture windows", buf);
	}
	if (rc >= 0 && o->windows) {
		snprintf(buf, sizeof buf, "%" PRId64, o->recorded_ns);
		rc = emit_pair(sink, "Recorded (ns)", buf);
	}
	if (rc >= 0 && o->has_job_time)
		rc = emit_pair(sink, "Time base", o->job_time.base);
	if (rc >= 0 && o->has_job_time)
		rc = emit_pair(sink, "Alignment error", o->job_time.error);
	if (rc >= 0 && o->exit_status)
		rc = emit_pair(sink, "Exit status", o->exit_status);
	if (rc >= 0) {
		snprintf(buf, sizeof buf, "%" PRId64, o->dropped);
		rc = emit_pair(sink, "Dropped records", buf);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

static int section_busy(struct rpt_sink *sink, const struct sum_overview *o, int64_t span_ns,
			struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Device", RPT_INT, 0 },
		{ "Busy (%)", RPT_PERCENT, 1 },
		{ "Busy Time (ns)", RPT_INT, 0 },
		{ "Span (ns)", RPT_INT, 0 },
	};
	/* a graph recorded whole is one row a launch, counted as the graph's
	 * work (sum_busy__walk), so the title names it where there are any */
	int rc = sink->begin(sink, "overview_gpu_busy",
			     sum_groups__graph_launches(&o->kernels)
				     ? "GPU Busy (kernels, CUDA graphs, copies, memsets)"
				     : "GPU Busy (kernels, copies, memsets)",
			     cols, 4);

	if (rc >= 0)
		rc = sum_groups__note_left_out(&(struct sum_groups){ .rows_left_out = o->busy_left_out },
					       sink);

	for (size_t i = 0; rc >= 0 && i < o->nbusy; i++) {
		struct rpt_cell cells[4] = {
			sum_int(o->busy[i].device_id),
			span_ns > 0 ? sum_real((double)o->busy[i].busy_ns * 100.0 / (double)span_ns)
				    : sum_null(),
			sum_int(o->busy[i].busy_ns),
			sum_int(span_ns),
		};
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

int sum_transfers__add(struct sum_overview *o, const struct sum_transfer *t)
{
	if (sum_array__grow(&o->transfers, &o->transfers_cap, o->ntransfers, sizeof *o->transfers))
		return PROF_E_NOMEM;
	o->transfers[o->ntransfers++] = *t;
	return 0;
}

/* Copies per direction and host memory kind: the host side decides whether
 * a copy can be asynchronous (pinned) or is staged by the driver (pageable).
 * In the order the section shows them: most bytes first. */
int sum_overview__load_transfers(struct prof_store *s, struct sum_overview *o,
				 struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	rc = prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_MEMCPY " WHERE "
			       SUM_BAD_SPAN(""), &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	o->transfers_left_out = rc > 0 ? prof_cursor__int64(c, 0) : 0;
	prof_cursor__close(c);
	c = NULL;
	if (rc < 0)
		return rc;
	/* copyKind 1, 11: from host (srcKind); 2, 12: to host (dstKind);
	 * 9 host-to-host (srcKind). */
	rc = prof_cursor__open(s,
		"SELECT copyKind, CASE WHEN copyKind IN (1, 9, 11) THEN srcKind "
		"WHEN copyKind IN (2, 12) THEN dstKind END AS hostKind, "
		"count(*), " SUM_TOTAL_SATURATED("bytes") ", " SUM_TOTAL_SATURATED("end - start") " "
		"FROM " PROF_T_MEMCPY " WHERE NOT " SUM_BAD_SPAN("") " "
		"GROUP BY 1, 2 ORDER BY 4 DESC, 1, 2", &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		struct sum_transfer t = {
			.copy_kind = prof_cursor__int64(c, 0),
			.host_kind = prof_cursor__int64(c, 1),
			.host_kind_null = prof_cursor__is_null(c, 1),
			.count = prof_cursor__int64(c, 2),
			.bytes = prof_cursor__int64(c, 3),
			.time_ns = prof_cursor__int64(c, 4),
		};

		if (sum_transfers__add(o, &t) < 0)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	if (c)
		prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int section_transfers(struct rpt_sink *sink, const struct sum_overview *o,
			     struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Direction", RPT_TEXT, 0 },
		{ "Host Memory", RPT_TEXT, 0 },
		{ "Count", RPT_INT, 0 },
		{ "Total (MB)", RPT_REAL, 3 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ "Throughput (GB/s)", RPT_REAL, 3 },
	};
	int rc;

	rc = sink->begin(sink, "overview_transfers", "Transfers", cols, 6);
	if (rc >= 0)
		rc = sum_groups__note_left_out(&(struct sum_groups){ .rows_left_out =
									     o->transfers_left_out },
					       sink);
	for (size_t i = 0; rc >= 0 && i < o->ntransfers; i++) {
		const struct sum_transfer *t = &o->transfers[i];
		struct rpt_cell cells[6] = {
			sum_text(sum_copy_direction(t->copy_kind)),
			t->host_kind_null ? sum_null() : sum_text(sum_mem_kind(t->host_kind)),
			sum_int(t->count),
			sum_real((double)t->bytes / MB),
			sum_int(t->time_ns),
			/* bytes per ns is GB/s */
			t->time_ns > 0 ? sum_real((double)t->bytes / (double)t->time_ns) : sum_null(),
		};
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

/* Managed memory's page faults (its migrations are among the transfers),
 * where the capture has any. */
static int load_um_faults(struct prof_store *s, struct sum_overview *o, struct prof_error *err)
{
	static const struct { const char *table, *sql; } q[] = {
		{ PROF_T_UM_CPU_FAULTS, "SELECT count(*), count(*) FROM " PROF_T_UM_CPU_FAULTS },
		{ PROF_T_UM_GPU_FAULTS, "SELECT count(*), coalesce(" SUM_TOTAL_SATURATED("numberOfPageFaults")
					", 0) FROM " PROF_T_UM_GPU_FAULTS },
	};
	int64_t *out[2][2] = { { &o->um_cpu_faults, &o->um_cpu_faults },
			       { &o->um_gpu_groups, &o->um_gpu_faults } };
	int rc = 0;

	for (size_t i = 0; i < 2 && rc >= 0; i++) {
		struct prof_cursor *c = NULL;

		if (!prof_store__has_table(s, q[i].table))
			continue;
		rc = prof_cursor__open(s, q[i].sql, &c, err);
		if (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
			*out[i][0] = prof_cursor__int64(c, 0);
			*out[i][1] = prof_cursor__int64(c, 1);
		}
		prof_cursor__close(c);
	}
	return rc < 0 ? rc : 0;
}

static int section_um_faults(struct rpt_sink *sink, const struct sum_overview *o,
			     struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Side", RPT_TEXT, 0 }, { "Events", RPT_INT, 0 }, { "Page Faults", RPT_INT, 0 },
	};
	int rc;

	if (!o->um_cpu_faults && !o->um_gpu_groups)
		return 0;
	rc = sink->begin(sink, "overview_um_faults", "Unified Memory Page Faults", cols, 3);
	if (rc >= 0)
		rc = sink->row(sink, (struct rpt_cell[]){ sum_text("CPU"), sum_int(o->um_cpu_faults),
							  sum_int(o->um_cpu_faults) });
	if (rc >= 0)
		rc = sink->row(sink, (struct rpt_cell[]){ sum_text("GPU"), sum_int(o->um_gpu_groups),
							  sum_int(o->um_gpu_faults) });
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

/* What the capture lost: records CUPTI dropped, rows the writer could
 * not write because the disk filled (the writer's rows_not_written),
 * sampled GPU metrics the sampling buffer had no room for, and GPU work
 * without times, with the context failure that took them. */
static int section_warnings(struct rpt_sink *sink, const struct sum_overview *o, struct prof_error *err)
{
	static const struct rpt_column cols[] = { { "Warning", RPT_TEXT, 0 } };
	int64_t dropped = o->dropped, not_written = o->not_written;
	char msg[192], failure[256], untimed[256];
	int rc;

	sum_context_failure__say(&o->failure, failure, sizeof failure);
	sum_context_failure__say_untimed(&o->failure, untimed, sizeof untimed);
	if (dropped <= 0 && not_written <= 0 && o->gm_samples_dropped <= 0 && o->gm_ended_early <= 0 &&
	    !failure[0] && !untimed[0])
		return 0;
	rc = sink->begin(sink, "overview_warnings", "Warnings", cols, 1);
	if (rc >= 0 && failure[0])
		rc = emit_pair(sink, failure, NULL);
	if (rc >= 0 && untimed[0])
		rc = emit_pair(sink, untimed, NULL);
	if (rc >= 0 && dropped > 0) {
		snprintf(msg, sizeof msg,
			 "%" PRId64 " activity records were dropped during capture; "
			 "totals and counts in these reports are lower than what ran", dropped);
		rc = emit_pair(sink, msg, NULL);
	}
	if (rc >= 0 && not_written > 0) {
		snprintf(msg, sizeof msg,
			 "%" PRId64 " rows were not written because the disk filled during capture; "
			 "the capture ends early and its totals are lower than what ran", not_written);
		rc = emit_pair(sink, msg, NULL);
	}
	if (rc >= 0 && o->gm_samples_dropped > 0) {
		snprintf(msg, sizeof msg,
			 "%" PRId64 " GPU metric samples were dropped during capture (the sampler fell behind "
			 "the hardware); the sample after each gap stands for the whole gap",
			 o->gm_samples_dropped);
		rc = emit_pair(sink, msg, NULL);
	}
	if (rc >= 0 && o->gm_ended_early > 0) {
		snprintf(msg, sizeof msg,
			 "GPU metric sampling of %" PRId64 " GPU(s) ended before the program did (the "
			 "hardware buffer overflowed); no samples after that point", o->gm_ended_early);
		rc = emit_pair(sink, msg, NULL);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

int sum_overview__load(struct prof_store *s, struct sum_overview *o, struct prof_error *err)
{
	return sum_overview__load_tapped(s, o, NULL, err);
}

int sum_overview__load_tapped(struct prof_store *s, struct sum_overview *o,
			      const struct sum_busy_tap *tap, struct prof_error *err)
{
	int64_t start_ns, duration_ns;
	int rc = 0;

	memset(o, 0, sizeof *o);
	o->name = strdup(prof_store__path(s));
	if (!o->name)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	o->nsys = prof_store__kind(s) == PROF_STORE_NSYS;
	o->dropped = prof_store__counter(s, "dropped_records");
	o->not_written = prof_store__counter(s, "rows_not_written");
	o->gm_samples_dropped = prof_store__counter(s, PROF_COUNTER_GPU_METRIC_SAMPLES_DROPPED);
	o->gm_ended_early = prof_store__counter(s, PROF_COUNTER_GPU_METRIC_ENDED_EARLY);
	rc = sum_context_failure__find(s, &o->failure, err);
	o->command = prof_store__meta(s, "command");
	o->host = prof_store__meta(s, "host");
	o->gpu = prof_store__meta(s, "gpu");
	o->start = prof_store__meta(s, "start_ns");
	o->duration = prof_store__meta(s, "duration_ns");
	o->exit_status = prof_store__meta(s, "exit_status");
	o->has_session_start = nsys_start(s, &o->session_start_ns);
	o->has_job_time = sum_job_time__load(s, &o->job_time);
	if (rc >= 0 && !o->gpu)
		rc = gpu_names(s, &o->gpu_names, err);
	if (rc >= 0 && sum_overview__span(o, &start_ns, &duration_ns))
		rc = busy_collect(s, o, start_ns, prof_add_saturated(start_ns, duration_ns), tap, err);
	else if (rc >= 0)
		rc = busy_collect(s, o, INT64_MIN, INT64_MAX, tap, err);
	if (rc >= 0 && sum_overview__span(o, &start_ns, &duration_ns))
		rc = recorded(s, o, start_ns, prof_add_saturated(start_ns, duration_ns), err);
	else if (rc >= 0)
		rc = recorded(s, o, o->busy_first_ns, o->busy_last_ns, err);
	if (rc >= 0)
		rc = sum_kernel_groups(s, &o->kernels, err);
	if (rc >= 0)
		rc = sum_nvtx_groups(s, &o->ranges, err);
	if (rc >= 0)
		rc = sum_overview__load_transfers(s, o, err);
	if (rc >= 0)
		rc = load_um_faults(s, o, err);
	if (rc < 0)
		sum_overview__exit(o);
	return rc < 0 ? rc : 0;
}

int sum_overview__emit(const struct sum_overview *o, struct rpt_sink *sink,
		       struct prof_error *err)
{
	int64_t start_ns, span_ns;
	int rc;

	if (!sum_overview__span(o, &start_ns, &span_ns))
		span_ns = prof_span_saturated(o->busy_first_ns, o->busy_last_ns);
	if (o->windows)
		span_ns = o->recorded_ns;
	rc = section_warnings(sink, o, err);
	if (rc >= 0)
		rc = section_run(sink, o, err);
	if (rc >= 0)
		rc = section_busy(sink, o, span_ns, err);
	if (rc >= 0)
		rc = sum_kernel_groups__emit_top(&o->kernels, sink, "overview_top_kernels",
						 "Top Kernels", SUMMARY_OVERVIEW_TOP, err);
	if (rc >= 0)
		rc = section_transfers(sink, o, err);
	if (rc >= 0)
		rc = section_um_faults(sink, o, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&o->ranges, sink, "overview_top_ranges", "Top NVTX Ranges",
					   "Instances", "Style", "Range", RPT_TEXT, SUMMARY_OVERVIEW_TOP,
					   err);
	return rc;
}
