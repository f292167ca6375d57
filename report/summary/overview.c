/* overview.c - the one-screen overview `perfkit report FILE` prints: run
 * metadata, GPU busy time per device, top kernels, transfers by direction
 * and host memory kind, top NVTX ranges, and a warning when records were
 * dropped. Each section is a small report on the same sink, so the JSON
 * overview carries the same data as the text one. */
#include "summary_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof/tables.h"

#define MB 1e6

/* ---- GPU busy ---------------------------------------------------------- */

struct device_busy {
	int64_t device_id;
	int64_t busy_ns;
};

struct busy {
	struct device_busy *dev;
	size_t n, cap;
	int64_t first_ns, last_ns; /* span of all GPU activity */
	bool any;
	int64_t rows_left_out;     /* rows with a bad span (SUM_BAD_SPAN) */
};

static int busy_add(struct busy *b, int64_t device_id, int64_t busy_ns)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4;
		struct device_busy *d = realloc(b->dev, cap * sizeof *d);

		if (!d)
			return PROF_E_NOMEM;
		b->dev = d;
		b->cap = cap;
	}
	b->dev[b->n++] = (struct device_busy){ device_id, busy_ns };
	return 0;
}

static int64_t clipped(int64_t start, int64_t end, int64_t lo, int64_t hi)
{
	if (start < lo)
		start = lo;
	if (end > hi)
		end = hi;
	return end > start ? sum_span_saturated(start, end) : 0;
}

/* Merge kernel, copy and memset intervals per device in start order: the
 * union counts overlapping work (concurrent streams) once. Intervals are
 * clipped to [lo, hi], the capture span when the store records one; rows
 * with a bad span are left out and counted. */
static int busy_collect(struct prof_store *s, struct busy *b, int64_t lo, int64_t hi,
			struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const parts[] = {
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_KERNEL,
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_MEMCPY,
		"SELECT deviceId, start, end, " SUM_BAD_SPAN("") " FROM " PROF_T_MEMSET,
	};
	static const char order[] = " ORDER BY 1, 2";
	struct prof_cursor *c = NULL;
	int64_t dev = 0, cur_start = 0, cur_end = 0, busy_ns = 0;
	bool open = false;
	char *src, *sql = NULL;
	int rc;

	src = sum_union(s, tables, parts, 3, &rc, err);
	if (!src)
		return rc;
	sql = malloc(strlen(src) + sizeof order);
	if (!sql) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	strcpy(sql, src);
	strcat(sql, order);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		goto out;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t d = prof_cursor__int64(c, 0);
		int64_t start = prof_cursor__int64(c, 1), end = prof_cursor__int64(c, 2);

		if (prof_cursor__int64(c, 3)) {
			b->rows_left_out++;
			continue;
		}
		if (!b->any || start < b->first_ns)
			b->first_ns = start;
		if (!b->any || end > b->last_ns)
			b->last_ns = end;
		b->any = true;
		if (open && d == dev && start <= cur_end) {
			if (end > cur_end)
				cur_end = end;
			continue;
		}
		if (open)
			busy_ns = sum_add_saturated(busy_ns, clipped(cur_start, cur_end, lo, hi));
		if (open && d != dev) {
			rc = busy_add(b, dev, busy_ns);
			if (rc < 0)
				break;
			busy_ns = 0;
		}
		dev = d;
		cur_start = start;
		cur_end = end;
		open = true;
	}
	if (rc >= 0 && open) {
		busy_ns = sum_add_saturated(busy_ns, clipped(cur_start, cur_end, lo, hi));
		rc = busy_add(b, dev, busy_ns);
	}
	if (rc == PROF_E_NOMEM)
		prof_error__set(err, rc, "out of memory");
out:
	if (c)
		prof_cursor__close(c);
	free(sql);
	free(src);
	return rc < 0 ? rc : 0;
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

/* GPU names from TARGET_INFO_GPU, "0: NVIDIA H100; 1: ..." (malloc'd). */
static int gpu_names(struct prof_store *s, char **out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (!prof_store__has_table(s, PROF_T_GPU))
		return 0;
	rc = prof_cursor__open(s, "SELECT id, name FROM " PROF_T_GPU " ORDER BY id", &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		const char *name = prof_cursor__text(c, 1);
		char item[320];
		int n = snprintf(item, sizeof item, "%s%" PRId64 ": %s", len ? "; " : "",
				 prof_cursor__int64(c, 0), name ? name : "?");
		char *grown = realloc(*out, len + (size_t)n + 1);

		if (!grown) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		*out = grown;
		memcpy(*out + len, item, (size_t)n + 1);
		len += (size_t)n;
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

	if (!prof_store__has_table(s, PROF_T_SESSION_START))
		return false;
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

struct run_info {
	char *command, *host, *gpu, *start, *duration, *exit_status;
	int64_t start_ns, duration_ns;
	bool have_span; /* start_ns and duration_ns both recorded */
};

static void run_info__exit(struct run_info *r)
{
	free(r->command);
	free(r->host);
	free(r->gpu);
	free(r->start);
	free(r->duration);
	free(r->exit_status);
}

static void run_info__read(struct prof_store *s, struct run_info *r)
{
	memset(r, 0, sizeof *r);
	r->command = prof_store__meta(s, "command");
	r->host = prof_store__meta(s, "host");
	r->gpu = prof_store__meta(s, "gpu");
	r->start = prof_store__meta(s, "start_ns");
	r->duration = prof_store__meta(s, "duration_ns");
	r->exit_status = prof_store__meta(s, "exit_status");
	r->have_span = parse_int64(r->start, &r->start_ns) &&
		       parse_int64(r->duration, &r->duration_ns) && r->duration_ns > 0;
}

static int section_run(struct prof_store *s, struct rpt_sink *sink, const struct run_info *r,
		       const struct busy *b, int64_t dropped, struct prof_error *err)
{
	static const struct rpt_column cols[] = { { "Item", RPT_TEXT, 0 }, { "Value", RPT_TEXT, 0 } };
	char buf[64], *gpus = NULL;
	int64_t start_ns;
	int rc;

	if (!r->gpu) {
		rc = gpu_names(s, &gpus, err);
		if (rc < 0)
			return rc;
	}
	rc = sink->begin(sink, "overview_run", "Run", cols, 2);
	if (rc >= 0)
		rc = emit_pair(sink, "File", prof_store__path(s));
	if (rc >= 0)
		rc = emit_pair(sink, "Format", prof_store__kind(s) == PROF_STORE_NSYS
					? "Nsight Systems SQLite export" : "perfkit capture");
	if (rc >= 0 && r->command)
		rc = emit_pair(sink, "Command", r->command);
	if (rc >= 0 && r->host)
		rc = emit_pair(sink, "Host", r->host);
	if (rc >= 0 && (r->gpu || gpus))
		rc = emit_pair(sink, "GPU", r->gpu ? r->gpu : gpus);
	if (rc >= 0 && (parse_int64(r->start, &start_ns) || nsys_start(s, &start_ns))) {
		format_utc(buf, sizeof buf, start_ns);
		rc = emit_pair(sink, "Start", buf);
	}
	if (rc >= 0 && r->have_span) {
		snprintf(buf, sizeof buf, "%" PRId64, r->duration_ns);
		rc = emit_pair(sink, "Duration (ns)", buf);
	} else if (rc >= 0 && b->any) {
		snprintf(buf, sizeof buf, "%" PRId64, sum_span_saturated(b->first_ns, b->last_ns));
		rc = emit_pair(sink, "GPU activity span (ns)", buf);
	}
	if (rc >= 0 && r->exit_status)
		rc = emit_pair(sink, "Exit status", r->exit_status);
	if (rc >= 0) {
		snprintf(buf, sizeof buf, "%" PRId64, dropped);
		rc = emit_pair(sink, "Dropped records", buf);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	free(gpus);
	return sum_sink_error(rc, err);
}

static int section_busy(struct rpt_sink *sink, const struct busy *b, int64_t span_ns,
			struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Device", RPT_INT, 0 },
		{ "Busy (%)", RPT_PERCENT, 1 },
		{ "Busy Time (ns)", RPT_INT, 0 },
		{ "Span (ns)", RPT_INT, 0 },
	};
	int rc = sink->begin(sink, "overview_gpu_busy", "GPU Busy (kernels, copies, memsets)",
			     cols, 4);

	if (rc >= 0)
		rc = sum_groups__note_left_out(&(struct sum_groups){ .rows_left_out = b->rows_left_out },
					       sink);

	for (size_t i = 0; rc >= 0 && i < b->n; i++) {
		struct rpt_cell cells[4] = {
			sum_int(b->dev[i].device_id),
			span_ns > 0 ? sum_real((double)b->dev[i].busy_ns * 100.0 / (double)span_ns)
				    : sum_null(),
			sum_int(b->dev[i].busy_ns),
			sum_int(span_ns),
		};
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

/* Copies per direction and host memory kind: the host side decides whether
 * a copy can be asynchronous (pinned) or is staged by the driver (pageable). */
static int section_transfers(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Direction", RPT_TEXT, 0 },
		{ "Host Memory", RPT_TEXT, 0 },
		{ "Count", RPT_INT, 0 },
		{ "Total (MB)", RPT_REAL, 3 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ "Throughput (GB/s)", RPT_REAL, 3 },
	};
	struct prof_cursor *c = NULL;
	struct sum_groups bad = { 0 };
	int rc;

	/* copyKind 1, 11: from host (srcKind); 2, 12: to host (dstKind);
	 * 9 host-to-host (srcKind). */
	if (prof_store__has_table(s, PROF_T_MEMCPY)) {
		rc = prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_MEMCPY " WHERE "
				       SUM_BAD_SPAN(""), &c, err);
		if (rc < 0)
			return rc;
		rc = prof_cursor__next(c, err);
		bad.rows_left_out = rc > 0 ? prof_cursor__int64(c, 0) : 0;
		prof_cursor__close(c);
		c = NULL;
		if (rc < 0)
			return rc;
		rc = prof_cursor__open(s,
			"SELECT copyKind, CASE WHEN copyKind IN (1, 9, 11) THEN srcKind "
			"WHEN copyKind IN (2, 12) THEN dstKind END AS hostKind, "
			"count(*), sum(bytes), sum(end - start) FROM " PROF_T_MEMCPY " "
			"WHERE NOT " SUM_BAD_SPAN("") " "
			"GROUP BY 1, 2 ORDER BY sum(bytes) DESC, 1, 2", &c, err);
		if (rc < 0)
			return rc;
	}
	rc = sink->begin(sink, "overview_transfers", "Transfers", cols, 6);
	if (rc >= 0)
		rc = sum_groups__note_left_out(&bad, sink);
	if (rc < 0) {
		rc = sum_sink_error(rc, err);
		goto out;
	}
	while (c && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t bytes = prof_cursor__int64(c, 3), time_ns = prof_cursor__int64(c, 4);
		struct rpt_cell cells[6] = {
			sum_text(sum_copy_direction(prof_cursor__int64(c, 0))),
			prof_cursor__is_null(c, 1) ? sum_null()
						   : sum_text(sum_mem_kind(prof_cursor__int64(c, 1))),
			sum_int(prof_cursor__int64(c, 2)),
			sum_real((double)bytes / MB),
			sum_int(time_ns),
			/* bytes per ns is GB/s */
			time_ns > 0 ? sum_real((double)bytes / (double)time_ns) : sum_null(),
		};
		rc = sink->row(sink, cells);
		if (rc < 0) {
			rc = sum_sink_error(rc, err);
			goto out;
		}
	}
	if (rc >= 0)
		rc = sum_sink_error(sink->end(sink), err);
out:
	if (c)
		prof_cursor__close(c);
	return rc;
}

/* How many ranks of a job these tables add up (0 when the capture is no
 * job, or --rank chose one rank). */
static int ranks_summed(struct prof_store *s, struct prof_error *err, int *n)
{
	struct sum_ranks r;
	int rc;

	*n = 0;
	if (!sum_ranks__may_be_job(s))
		return 0;
	rc = sum_ranks__load(s, &r, err);
	if (rc)
		return rc;
	if (sum_ranks__is_job(&r))
		for (int i = 0; i < r.n; i++)
			*n += r.p[i].rank >= 0 && r.p[i].selected;
	if (*n < 2)
		*n = 0;
	sum_ranks__exit(&r);
	return 0;
}

/* What the capture lost: records CUPTI dropped, and rows the writer could
 * not write because the disk filled (the writer's rows_not_written); and
 * that a job's tables add its ranks up. */
static int section_warnings(struct rpt_sink *sink, int64_t dropped, int64_t not_written, int ranks,
			    struct prof_error *err)
{
	static const struct rpt_column cols[] = { { "Warning", RPT_TEXT, 0 } };
	char msg[192];
	int rc;

	if (dropped <= 0 && not_written <= 0 && ranks < 2)
		return 0;
	rc = sink->begin(sink, "overview_warnings", "Warnings", cols, 1);
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
	if (rc >= 0 && ranks >= 2) {
		snprintf(msg, sizeof msg,
			 "a job of %d ranks: these tables add them up; --report=rank_sum compares "
			 "them, --rank=N shows one", ranks);
		rc = emit_pair(sink, msg, NULL);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

int summary__overview(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct run_info run;
	struct busy busy = { 0 };
	struct sum_groups kernels = { 0 }, ranges = { 0 };
	int64_t dropped = prof_store__counter(s, "dropped_records"), span_ns;
	int64_t not_written = prof_store__counter(s, "rows_not_written");
	int rc, ranks = 0;

	run_info__read(s, &run);
	if (run.have_span)
		rc = busy_collect(s, &busy, run.start_ns, sum_add_saturated(run.start_ns, run.duration_ns), err);
	else
		rc = busy_collect(s, &busy, INT64_MIN, INT64_MAX, err);
	if (rc < 0)
		goto out;
	span_ns = run.have_span ? run.duration_ns : sum_span_saturated(busy.first_ns, busy.last_ns);
	rc = sum_kernel_groups(s, &kernels, err);
	if (rc >= 0)
		rc = sum_nvtx_groups(s, &ranges, err);
	if (rc >= 0)
		rc = ranks_summed(s, err, &ranks);
	if (rc >= 0)
		rc = section_warnings(sink, dropped, not_written, ranks, err);
	if (rc >= 0)
		rc = section_run(s, sink, &run, &busy, dropped, err);
	if (rc >= 0)
		rc = section_busy(sink, &busy, span_ns, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&kernels, sink, "overview_top_kernels", "Top Kernels",
					   "Instances", NULL, "Name", RPT_SYMBOL, SUMMARY_OVERVIEW_TOP,
					   err);
	if (rc >= 0)
		rc = section_transfers(s, sink, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&ranges, sink, "overview_top_ranges", "Top NVTX Ranges",
					   "Instances", "Style", "Range", RPT_TEXT, SUMMARY_OVERVIEW_TOP,
					   err);
out:
	sum_groups__exit(&kernels);
	sum_groups__exit(&ranges);
	free(busy.dev);
	run_info__exit(&run);
	return rc;
}
