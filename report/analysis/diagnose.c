/* diagnose.c - the engine of `perfkit diagnose`: finds the analysis window
 * (the steady-state loop), loads the GPU busy intervals, runs every rule
 * family and sorts the findings by the share of run time they touch. */
#include "diagnose.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "summary/query.h"

const char *diag_severity__name(enum diag_severity s)
{
	static const char *const names[] = { "info", "low", "medium", "high" };
	return (s >= DIAG_INFO && s <= DIAG_HIGH) ? names[s] : "?";
}

char *diag__fmt(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

double diag__get(const struct diag_context *ctx, const char *key)
{
	return diag_settings__get(ctx->settings, key);
}

int64_t diag__window_ns(const struct diag_context *ctx)
{
	int64_t d = ctx->w->end_ns - ctx->w->start_ns;
	return d > 0 ? d : 1;
}

int diag__open_window(const struct diag_context *ctx, const char *sql, enum diag_side side,
		      struct prof_cursor **out, struct prof_error *err)
{
	int rc = prof_cursor__open(ctx->store, sql, out, err);

	if (rc)
		return rc;
	prof_cursor__bind_int64(*out, 1, ctx->w->start_ns);
	prof_cursor__bind_int64(*out, 2, side == DIAG_HOST_SIDE ? ctx->w->host_end_ns : ctx->w->end_ns);
	return 0;
}

/* Under kernel replay the window is mostly the profiler's own time: shares
 * are then of what the GPU did in it. */
double diag__share(const struct diag_context *ctx, int64_t ns)
{
	int64_t base = ctx->report->replayed ? (ctx->busy_ns > 0 ? ctx->busy_ns : 1) : diag__window_ns(ctx);
	double s = (double)ns / (double)base;
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

double diag__per_iter(const struct diag_context *ctx)
{
	return ctx->w->iterations > 0 ? (double)ctx->w->iterations : 1.0;
}

const char *diag__ns(char *buf, size_t cap, int64_t ns)
{
	double v = (double)ns;

	if (ns >= 1000000000)
		snprintf(buf, cap, "%.3f s", v / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.3f ms", v / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.2f us", v / 1e3);
	else
		snprintf(buf, cap, "%lld ns", (long long)ns);
	return buf;
}

const char *diag__bytes(char *buf, size_t cap, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, cap, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024.0 * 1024)
		snprintf(buf, cap, "%.2f MiB", bytes / (1024.0 * 1024));
	else if (bytes >= 1024.0)
		snprintf(buf, cap, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, cap, "%.0f B", bytes);
	return buf;
}

int64_t diag__busy_in(const struct diag_context *ctx, int64_t a, int64_t b)
{
	int lo = 0, hi = ctx->nbusy;
	int64_t sum = 0;

	/* first interval ending after a */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ctx->busy[mid].end_ns <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = lo; i < ctx->nbusy && ctx->busy[i].start_ns < b; i++) {
		int64_t s = ctx->busy[i].start_ns > a ? ctx->busy[i].start_ns : a;
		int64_t e = ctx->busy[i].end_ns < b ? ctx->busy[i].end_ns : b;
		if (e > s)
			sum += e - s;
	}
	return sum;
}

int64_t diag__idle_after(const struct diag_context *ctx, int64_t t)
{
	int lo = 0, hi = ctx->nbusy;

	if (t >= ctx->w->end_ns)
		return 0;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ctx->busy[mid].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ctx->nbusy && ctx->busy[lo].start_ns <= t)
		return 0; /* the GPU is busy at t */
	if (lo < ctx->nbusy)
		return (ctx->busy[lo].start_ns < ctx->w->end_ns ? ctx->busy[lo].start_ns : ctx->w->end_ns) - t;
	return ctx->w->end_ns - t;
}

static enum diag_severity severity_of(const struct diag_context *ctx, double share)
{
	if (share >= diag__get(ctx, "severity.high"))
		return DIAG_HIGH;
	if (share >= diag__get(ctx, "severity.medium"))
		return DIAG_MEDIUM;
	if (share >= diag__get(ctx, "severity.low"))
		return DIAG_LOW;
	return DIAG_INFO;
}

struct diag_finding *diag__add(struct diag_context *ctx, const char *rule_id, const char *title,
			       double share, int64_t time_ns, enum diag_severity max_severity,
			       char *evidence, char *change)
{
	struct diag_report *r = ctx->report;
	struct diag_finding *f;

	if (!evidence || !change)
		goto fail;
	if (r->nfindings == r->cap_findings) {
		int cap = r->cap_findings ? r->cap_findings * 2 : 16;
		struct diag_finding *n = realloc(r->findings, sizeof *n * (size_t)cap);
		if (!n)
			goto fail;
		r->findings = n;
		r->cap_findings = cap;
	}
	f = &r->findings[r->nfindings++];
	memset(f, 0, sizeof *f);
	f->rule_id = rule_id;
	f->title = title;
	f->share = share < 0 ? 0 : share > 1 ? 1 : share;
	f->time_ns = time_ns;
	f->severity = severity_of(ctx, f->share);
	if (f->severity > max_severity)
		f->severity = max_severity;
	f->evidence = evidence;
	f->change = change;
	return f;
fail:
	free(evidence);
	free(change);
	return NULL;
}

struct diag_finding *diag__add_ranked(struct diag_context *ctx, struct diag_tally *t,
				      const char *rule_id, const char *title, int64_t time_ns,
				      enum diag_severity max_severity, char *evidence, char *change)
{
	struct diag_finding *f;

	diag_tally__sort_by_time(t);
	f = diag__add(ctx, rule_id, title, diag__share(ctx, time_ns), time_ns, max_severity, evidence,
		      change);
	diag_tally__offenders(t, f);
	return f;
}

void diag__offender(struct diag_finding *f, const char *name, int64_t count, int64_t time_ns,
		    int64_t bytes)
{
	struct diag_offender *o;

	if (!f || f->ntop >= DIAG_MAX_OFFENDERS)
		return;
	o = &f->top[f->ntop];
	o->name = strdup(name ? name : "?");
	if (!o->name)
		return;
	o->count = count;
	o->time_ns = time_ns;
	o->bytes = bytes;
	f->ntop++;
}

int diag__skip(struct diag_context *ctx, const char *rule_id, const char *fmt, ...)
{
	struct diag_report *r = ctx->report;
	va_list ap;
	char *reason;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	reason = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!reason)
		return PROF_E_NOMEM;
	va_start(ap, fmt);
	vsnprintf(reason, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (r->nskips == r->cap_skips) {
		int cap = r->cap_skips ? r->cap_skips * 2 : 8;
		struct diag_skip *s = realloc(r->skips, sizeof *s * (size_t)cap);
		if (!s) {
			free(reason);
			return PROF_E_NOMEM;
		}
		r->skips = s;
		r->cap_skips = cap;
	}
	r->skips[r->nskips].rule_id = strdup(rule_id);
	if (!r->skips[r->nskips].rule_id) {
		free(reason);
		return PROF_E_NOMEM;
	}
	r->skips[r->nskips].reason = reason;
	r->nskips++;
	return 0;
}

void diag_report__delete(struct diag_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nfindings; i++) {
		free(r->findings[i].evidence);
		free(r->findings[i].change);
		for (int j = 0; j < r->findings[i].ntop; j++)
			free(r->findings[i].top[j].name);
	}
	for (int i = 0; i < r->nskips; i++) {
		free(r->skips[i].rule_id);
		free(r->skips[i].reason);
	}
	free(r->findings);
	free(r->skips);
	free(r->path);
	free(r);
}

/* ---- the capture's extent ------------------------------------------- */

static int capture_extent(struct diag_context *ctx, struct diag_window *w, struct prof_error *err)
{
	static const char *const tables[] = {
		PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET, PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_NVTX,
	};
	static const char *const sql[] = {
		"SELECT min(start), max(end) FROM " PROF_T_KERNEL,
		"SELECT min(start), max(end) FROM " PROF_T_MEMCPY,
		"SELECT min(start), max(end) FROM " PROF_T_MEMSET,
		"SELECT min(start), max(end) FROM " PROF_T_RUNTIME,
		"SELECT min(start), max(end) FROM " PROF_T_DRIVER,
		"SELECT min(start), max(coalesce(end, start)) FROM " PROF_T_NVTX
		" WHERE eventType != " PROF_SQL_NVTX_DOMAIN_CREATE,
	};
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		struct prof_cursor *c;
		int rc;

		if (!prof_store__has_table(ctx->store, tables[i]))
			continue;
		rc = prof_cursor__open(ctx->store, sql[i], &c, err);
		if (rc)
			return rc;
		rc = prof_cursor__next(c, err);
		if (rc == 1 && !prof_cursor__is_null(c, 0)) {
			int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);
			if (a < lo)
				lo = a;
			if (b > hi)
				hi = b;
		}
		prof_cursor__close(c);
		if (rc < 0)
			return rc;
	}
	if (lo == INT64_MAX)
		lo = hi = 0;
	w->capture_start_ns = lo;
	w->capture_end_ns = hi;
	return 0;
}

/* The repeated NVTX ranges of the capture: name, count and cover (summed
 * duration), the warm-up instance of each name on each thread left out. */
#define NVTX_INSTANCES_SQL \
	"WITH r AS (SELECT coalesce(s.value, n.text) AS name, n.globalTid AS tid, n.start, n.end," \
	"  row_number() OVER (PARTITION BY coalesce(s.value, n.text), n.globalTid" \
	"   ORDER BY n.start) AS k" \
	"  FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId" \
	"  WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.end IS NOT NULL AND n.end > n.start)"

struct loop_candidate {
	char *name;                 /* whole: nested_fraction looks it up */
	int64_t count, start_ns, end_ns;
	double cover;
};

/* Of the instances of `inner` (warm-up left out), the fraction that lie
 * inside an instance of `outer` on the same thread. Ranges of one name on
 * one thread follow each other, so the latest `outer` to start before an
 * `inner` is the only one that can hold it: a running maximum of their ends
 * answers it in one ordered pass. */
static int nested_fraction(struct diag_context *ctx, const char *inner, const char *outer, double *fraction,
			   struct prof_error *err)
{
	const char *sql = NVTX_INSTANCES_SQL ","
		" x AS (SELECT name, k, end, max(CASE WHEN name = ?2 THEN end END)"
		"  OVER (PARTITION BY tid ORDER BY start, name = ?1 ROWS UNBOUNDED PRECEDING) AS outer_end"
		"  FROM r WHERE name IN (?1, ?2))"
		" SELECT count(*), sum(outer_end >= end) FROM x WHERE name = ?1 AND k > 1";
	struct prof_cursor *c;
	int rc = prof_cursor__open(ctx->store, sql, &c, err);

	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, inner);
	prof_cursor__bind_text(c, 2, outer);
	*fraction = 0;
	rc = prof_cursor__next(c, err);
	if (rc == 1 && prof_cursor__int64(c, 0) > 0)
		*fraction = prof_cursor__double(c, 1) / prof_cursor__double(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A phase of a step: a candidate whose instances mostly sit inside those of a
 * less frequent candidate without tiling it (covering less than
 * iterations.tiling of it). Steps tile an epoch and stay; "load/transfer"
 * done 32 times inside each step covers 70% of it and is a phase. */
static int is_phase(struct diag_context *ctx, const struct loop_candidate *cand, int n, int i, bool *phase,
		    struct prof_error *err)
{
	*phase = false;
	for (int j = 0; j < n && !*phase; j++) {
		double nested;
		int rc;

		if (j == i || cand[j].count >= cand[i].count ||
		    cand[i].cover >= cand[j].cover * diag__get(ctx, "iterations.tiling"))
			continue;
		rc = nested_fraction(ctx, cand[i].name, cand[j].name, &nested, err);
		if (rc)
			return rc;
		*phase = nested > 0.5;
	}
	return 0;
}

/* The loop from NVTX: among range names repeated at least iterations.min
 * times, those covering at least iterations.coverage of the best-covering
 * one and not a phase of another (is_phase); of these the most frequent. An
 * outer "train" range (once), inner "copy" ranges (short) and phases of the
 * step repeated within it all lose to "step".
 *
 * The first instance of each name on each thread is left out, of the
 * ranking and of the window: it is the warm-up (module loading, library handles, first-touch
 * allocations) rather than the steady state, and a name used once for setup
 * ("load/transfer" around the initial upload) would otherwise outweigh the
 * loop it also appears in. */
static int window_from_nvtx(struct diag_context *ctx, struct diag_window *w, struct prof_error *err)
{
	const char *sql = NVTX_INSTANCES_SQL
		" SELECT name, count(*), sum(end - start), min(start), max(end) FROM r"
		" WHERE k > 1 GROUP BY name HAVING count(*) + 1 >= ?1 AND name IS NOT NULL"
		" ORDER BY sum(end - start) DESC";
	enum { MAX_CANDIDATES = 16 };
	struct loop_candidate cand[MAX_CANDIDATES];
	struct prof_cursor *c;
	int64_t best_count = 0;
	int n = 0, rc;

	if (!prof_store__has_table(ctx->store, PROF_T_NVTX))
		return 0;
	rc = prof_cursor__open(ctx->store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, (int64_t)diag__get(ctx, "iterations.min"));
	while (n < MAX_CANDIDATES && (rc = prof_cursor__next(c, err)) == 1) {
		struct loop_candidate *k = &cand[n];

		k->cover = prof_cursor__double(c, 2);
		if (n > 0 && k->cover < cand[0].cover * diag__get(ctx, "iterations.coverage"))
			break;
		k->name = strdup(prof_cursor__text(c, 0));
		if (!k->name) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		k->count = prof_cursor__int64(c, 1);
		k->start_ns = prof_cursor__int64(c, 3);
		k->end_ns = prof_cursor__int64(c, 4);
		n++;
	}
	prof_cursor__close(c);
	for (int i = 0; rc >= 0 && i < n; i++) {
		bool phase;

		if (cand[i].count <= best_count)
			continue;
		rc = is_phase(ctx, cand, n, i, &phase, err);
		if (rc < 0 || phase)
			continue;
		best_count = cand[i].count;
		w->iterations = (int)cand[i].count;
		w->start_ns = cand[i].start_ns;
		w->end_ns = cand[i].end_ns;
		snprintf(w->source, sizeof w->source, "NVTX range \"%s\" x %lld", cand[i].name,
			 (long long)cand[i].count);
		w->step_marker = DIAG_STEP_NVTX;
		snprintf(w->step_range, sizeof w->step_range, "%s", cand[i].name);
	}
	for (int i = 0; i < n; i++)
		free(cand[i].name);
	return rc < 0 ? rc : 0;
}

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The loop without NVTX: the kernel name that repeats the fewest times (at
 * least iterations.min) marks one iteration per launch; of several such names
 * the one launched first. Iterations run from one of its launches to the
 * next; the last lasts the median period. As with NVTX, the first iteration
 * is the warm-up and stays out of the window. */
static int window_from_kernels(struct diag_context *ctx, struct diag_window *w, struct prof_error *err)
{
	const char *pick =
		"SELECT k.demangledName, count(*), min(k.start) FROM " PROF_T_KERNEL " k"
		" GROUP BY k.demangledName HAVING count(*) >= max(?1, 3)"
		" ORDER BY count(*) ASC, min(k.start) ASC LIMIT 1";
	const char *starts =
		"SELECT k.start FROM " PROF_T_KERNEL " k WHERE k.demangledName = ?1 ORDER BY k.start";
	struct prof_cursor *c = NULL;
	int64_t name_id, count, *t = NULL, *gaps = NULL;
	int n = 0, rc;

	if (!ctx->has_kernel)
		return 0;
	rc = prof_cursor__open(ctx->store, pick, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, (int64_t)diag__get(ctx, "iterations.min"));
	rc = prof_cursor__next(c, err);
	if (rc != 1)
		goto out;
	name_id = prof_cursor__int64(c, 0);
	count = prof_cursor__int64(c, 1);
	prof_cursor__close(c);
	c = NULL;
	t = malloc(sizeof *t * (size_t)count);
	gaps = malloc(sizeof *gaps * (size_t)count);
	if (!t || !gaps) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = prof_cursor__open(ctx->store, starts, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, name_id);
	while ((rc = prof_cursor__next(c, err)) == 1 && n < count)
		t[n++] = prof_cursor__int64(c, 0);
	if (rc < 0 || n < 3)
		goto out;
	for (int i = 1; i < n; i++)
		gaps[i - 1] = t[i] - t[i - 1];
	qsort(gaps, (size_t)(n - 1), sizeof *gaps, cmp_int64);
	w->start_ns = t[1];
	w->end_ns = t[n - 1] + gaps[(n - 1) / 2]; /* the last iteration lasts the median period */
	w->iterations = n - 1;
	w->step_marker = DIAG_STEP_KERNEL;
	w->step_kernel_id = name_id;
	{
		struct prof_cursor *nc;
		const char *name_sql = "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1";
		char name[160] = "?";
		if (!prof_cursor__open(ctx->store, name_sql, &nc, err)) {
			prof_cursor__bind_int64(nc, 1, name_id);
			if (prof_cursor__next(nc, err) == 1 && prof_cursor__text(nc, 0))
				snprintf(name, sizeof name, "%s", prof_cursor__text(nc, 0));
			prof_cursor__close(nc);
		}
		snprintf(w->source, sizeof w->source, "kernel \"%s\" launched %d times", name, n);
	}
	rc = 0;
out:
	prof_cursor__close(c);
	free(t);
	free(gaps);
	return rc < 0 ? rc : 0;
}

/* NVTX ranges are host time: an asynchronous loop enqueues its steps and
 * races ahead while the GPU works through them later. The window therefore
 * ends where the GPU finishes the last work that a runtime or driver call
 * inside it launched (joined by correlation id within one process), or at
 * the ranges' end when that comes later. */
static int extend_to_launched_work(struct diag_context *ctx, struct diag_window *w,
				   struct prof_error *err)
{
	static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	static const char *const gpu_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	char sql[4096];
	size_t len = 0, n = 0;
	struct prof_cursor *c;
	int rc;

	len += (size_t)snprintf(sql + len, sizeof sql - len, "SELECT max(e) FROM (");
	for (size_t a = 0; a < sizeof api_tables / sizeof api_tables[0]; a++) {
		/* an export without these columns cannot be joined: no extension */
		if (!prof_store__has_column(ctx->store, api_tables[a], "globalTid") ||
		    !prof_store__has_column(ctx->store, api_tables[a], "correlationId"))
			continue;
		for (size_t g = 0; g < sizeof gpu_tables / sizeof gpu_tables[0]; g++) {
			if (!prof_store__has_column(ctx->store, gpu_tables[g], "globalPid") ||
			    !prof_store__has_column(ctx->store, gpu_tables[g], "correlationId"))
				continue;
			len += (size_t)snprintf(sql + len, sizeof sql - len,
						"%sSELECT max(g.end) AS e FROM %s g JOIN %s r"
						" ON r.correlationId = g.correlationId"
						" AND (r.globalTid >> 24) = (g.globalPid >> 24)"
						" WHERE r.start >= ?1 AND r.start < ?2",
						n++ ? " UNION ALL " : "", gpu_tables[g], api_tables[a]);
		}
	}
	if (n == 0)
		return 0;
	snprintf(sql + len, sizeof sql - len, ")");
	rc = prof_cursor__open(ctx->store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, w->start_ns);
	prof_cursor__bind_int64(c, 2, w->end_ns);
	rc = prof_cursor__next(c, err);
	if (rc == 1 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) > w->end_ns)
		w->end_ns = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int find_window(struct diag_context *ctx, struct diag_window *w, struct prof_error *err)
{
	int rc = capture_extent(ctx, w, err);

	if (rc)
		return rc;
	w->start_ns = w->capture_start_ns;
	w->end_ns = w->host_end_ns = w->capture_end_ns;
	w->iterations = 0;
	w->step_marker = DIAG_STEP_NONE;
	snprintf(w->source, sizeof w->source, "whole capture");
	if (diag__get(ctx, "window.whole_run") != 0) {
		w->whole_run = true;
		return 0;
	}
	rc = window_from_nvtx(ctx, w, err);
	w->host_end_ns = w->end_ns;
	if (rc == 0 && w->iterations > 0)
		rc = extend_to_launched_work(ctx, w, err);
	if (rc)
		return rc;
	if (w->iterations == 0)
		rc = window_from_kernels(ctx, w, err);
	if (rc)
		return rc;
	w->whole_run = w->iterations == 0;
	/* a loop found by kernels may end past the capture; keep it inside */
	if (w->end_ns > w->capture_end_ns)
		w->end_ns = w->capture_end_ns;
	if (w->iterations == 0 || w->host_end_ns <= w->start_ns || w->host_end_ns > w->end_ns)
		w->host_end_ns = w->end_ns;
	if (w->end_ns <= w->start_ns) {
		w->start_ns = w->capture_start_ns;
		w->end_ns = w->host_end_ns = w->capture_end_ns;
		w->iterations = 0;
		w->whole_run = true;
		w->step_marker = DIAG_STEP_NONE;
		snprintf(w->source, sizeof w->source, "whole capture");
	}
	return 0;
}

/* ---- the steps of the loop ------------------------------------------- */

static int push_step(struct diag_step **v, int *n, int *cap, int64_t start_ns, int64_t end_ns,
		     int64_t tid)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		struct diag_step *nv = realloc(*v, sizeof *nv * (size_t)ncap);

		if (!nv)
			return PROF_E_NOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct diag_step){ start_ns, end_ns, tid };
	return 0;
}

/* The instances window_from_nvtx counted (warm-up left out), or the launches
 * window_from_kernels counted, each up to the next. */
int diag__steps(struct prof_store *store, const struct diag_window *w, struct diag_step **steps,
		int *n, struct prof_error *err)
{
	const char *nvtx_sql = NVTX_INSTANCES_SQL
		" SELECT start, end, tid FROM r WHERE name = ?1 AND k > 1 ORDER BY start";
	const char *kernel_sql = "SELECT start FROM " PROF_T_KERNEL
		" WHERE demangledName = ?1 AND start >= ?2 AND start < ?3 ORDER BY start";
	struct prof_cursor *c;
	int cap = 0, rc;
	bool have_prev = false;
	int64_t prev = 0;

	*steps = NULL;
	*n = 0;
	if (w->step_marker == DIAG_STEP_NONE || w->iterations == 0)
		return 0;
	rc = prof_cursor__open(store, w->step_marker == DIAG_STEP_NVTX ? nvtx_sql : kernel_sql, &c, err);
	if (rc)
		return rc;
	if (w->step_marker == DIAG_STEP_NVTX) {
		prof_cursor__bind_text(c, 1, w->step_range);
	} else {
		prof_cursor__bind_int64(c, 1, w->step_kernel_id);
		prof_cursor__bind_int64(c, 2, w->start_ns);
		prof_cursor__bind_int64(c, 3, w->end_ns);
	}
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t start = prof_cursor__int64(c, 0);

		if (w->step_marker == DIAG_STEP_NVTX) {
			rc = push_step(steps, n, &cap, start, prof_cursor__int64(c, 1), prof_cursor__int64(c, 2));
		} else {
			rc = have_prev ? push_step(steps, n, &cap, prev, start, 0) : 0;
			have_prev = true;
			prev = start;
		}
		if (rc) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc == 0 && have_prev && prev < w->end_ns &&
	    push_step(steps, n, &cap, prev, w->end_ns, 0))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0) {
		free(*steps);
		*steps = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}

/* ---- GPU busy intervals --------------------------------------------- */

static int add_interval(struct diag_context *ctx, int *cap, int64_t s, int64_t e)
{
	if (ctx->nbusy == *cap) {
		int ncap = *cap ? *cap * 2 : 1024;
		struct diag_interval *n = realloc(ctx->busy, sizeof *n * (size_t)ncap);
		if (!n)
			return PROF_E_NOMEM;
		ctx->busy = n;
		*cap = ncap;
	}
	ctx->busy[ctx->nbusy].start_ns = s;
	ctx->busy[ctx->nbusy].end_ns = e;
	ctx->nbusy++;
	return 0;
}

static int load_busy(struct diag_context *ctx, struct prof_error *err)
{
	char sql[512];
	bool first = true;
	struct prof_cursor *c;
	int cap = 0, rc;
	int64_t cur_s = 0, cur_e = INT64_MIN;

	sql[0] = 0;
	/* table names are constants of this file, never data */
	if (ctx->has_kernel) {
		strcat(sql, "SELECT start, end FROM " PROF_T_KERNEL " WHERE end > ?1 AND start < ?2");
		first = false;
	}
	if (ctx->has_memcpy) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMCPY " WHERE end > ?1 AND start < ?2");
		first = false;
	}
	if (ctx->has_memset) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMSET " WHERE end > ?1 AND start < ?2");
		first = false;
	}
	if (first)
		return 0;
	strcat(sql, " ORDER BY 1");
	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);

		if (s < ctx->w->start_ns)
			s = ctx->w->start_ns;
		if (e > ctx->w->end_ns)
			e = ctx->w->end_ns;
		if (e <= s)
			continue;
		if (s > cur_e) {
			if (cur_e != INT64_MIN && add_interval(ctx, &cap, cur_s, cur_e))
				goto nomem;
			cur_s = s;
			cur_e = e;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (cur_e != INT64_MIN && add_interval(ctx, &cap, cur_s, cur_e))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; i < ctx->nbusy; i++)
		ctx->busy_ns += ctx->busy[i].end_ns - ctx->busy[i].start_ns;
	return 0;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* ---- running ---------------------------------------------------------- */

static int by_share(const void *a, const void *b)
{
	const struct diag_finding *x = a, *y = b;

	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	if (x->severity != y->severity)
		return x->severity < y->severity ? 1 : -1;
	return strcmp(x->rule_id, y->rule_id);
}

/* The rules read CUDA API calls from one view over the runtime and driver
 * tables: libraries such as cuBLAS launch and allocate through the driver,
 * and the driver table holds only the calls made directly (the runtime's
 * own driver calls are not recorded twice). A temporary view lives in the
 * connection's temp database: the store stays read-only. */
static int create_api_view(struct diag_context *ctx, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	char part_sql[2][160];
	const char *parts[2];
	char *src, *view;
	int rc = prof_store__exec(ctx->store, "DROP VIEW IF EXISTS temp." DIAG_API_CALLS, err);

	if (rc)
		return rc;
	/* older nsys exports may lack the correlation id (no copy joins then)
	 * or the thread; table and column names are constants of this file */
	for (int i = 0; i < 2; i++) {
		bool corr = prof_store__has_column(ctx->store, tables[i], "correlationId");
		bool tid = prof_store__has_column(ctx->store, tables[i], "globalTid");

		snprintf(part_sql[i], sizeof part_sql[i], "SELECT start, end, nameId, %s, %s FROM %s",
			 corr ? "correlationId" : "NULL AS correlationId",
			 tid ? "globalTid" : "NULL AS globalTid", tables[i]);
		parts[i] = part_sql[i];
	}
	src = sum_union(ctx->store, tables, parts, 2, &rc, err);
	if (!src)
		return rc;
	ctx->has_api_calls = true;
	view = malloc(strlen(src) + sizeof "CREATE TEMP VIEW " DIAG_API_CALLS " AS ");
	if (view) {
		sprintf(view, "CREATE TEMP VIEW " DIAG_API_CALLS " AS %s", src);
		rc = prof_store__exec(ctx->store, view, err);
	} else {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	free(view);
	free(src);
	return rc;
}

/* Each id of a timing rule, skipped with the reason. */
static int skip_under_replay(struct diag_context *ctx, const struct diag_rule *rule, struct prof_error *err)
{
	for (const char *id = rule->id; *id;) {
		size_t len = strcspn(id, "+");
		char one[64];

		snprintf(one, sizeof one, "%.*s", (int)len, id);
		if (diag__skip(ctx, one, "kernel replay (--metrics) serialised and slowed this run, so its host "
					 "times, idle gaps and launch costs are the profiler's: for these rules, "
					 "diagnose a capture made without --metrics"))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		id += len + (id[len] == '+');
	}
	return 0;
}

int diag_context__init(struct diag_context *ctx, struct prof_store *store,
		       const struct diag_settings *settings, struct prof_error *err)
{
	struct diag_report *r = calloc(1, sizeof *r);
	int rc;

	memset(ctx, 0, sizeof *ctx);
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	ctx->report = r;
	r->path = strdup(prof_store__path(store));
	if (!r->path)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	ctx->store = store;
	ctx->settings = settings;
	ctx->w = &r->window;
	ctx->has_kernel = prof_store__has_table(store, PROF_T_KERNEL);
	ctx->has_memcpy = prof_store__has_table(store, PROF_T_MEMCPY);
	ctx->has_memset = prof_store__has_table(store, PROF_T_MEMSET);
	ctx->has_sync_table = prof_store__has_table(store, PROF_T_SYNC);
	ctx->has_memory_events = prof_store__has_table(store, PROF_T_MEMORY);
	rc = create_api_view(ctx, err);
	if (rc)
		return rc;
	/* the analysis tables are created together: rows, not tables, tell */
	r->has_metrics = prof_store__count(store, PROF_T_KERNEL_METRICS) > 0;
	r->has_peaks = prof_store__count(store, PROF_T_PEAKS) > 0;
	r->replayed = r->has_metrics;
	rc = find_window(ctx, &r->window, err);
	if (rc)
		return rc;
	return load_busy(ctx, err);
}

void diag_context__exit(struct diag_context *ctx)
{
	free(ctx->busy);
	ctx->busy = NULL;
	diag_report__delete(ctx->report);
	ctx->report = NULL;
}

int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err)
{
	const struct diag_rule *const families[] = {
		diag_rules_nsys, diag_rules_transfer, diag_rules_alloc,
		diag_rules_launch, diag_rules_kernel, diag_rules_host,
		diag_rules_critical_path,
	};
	struct diag_context ctx;
	struct diag_report *r;
	int rc;

	*out = NULL;
	rc = diag_context__init(&ctx, store, settings, err);
	if (rc)
		goto out;
	r = ctx.report;
	for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
		for (const struct diag_rule *rule = families[f]; rule->id; rule++) {
			rc = r->replayed && rule->timing ? skip_under_replay(&ctx, rule, err) : rule->run(&ctx, err);
			if (rc)
				goto out;
		}
	}
	if (r->nfindings > 1) /* findings is NULL while empty */
		qsort(r->findings, (size_t)r->nfindings, sizeof *r->findings, by_share);
	*out = r;
	ctx.report = NULL;
out:
	diag_context__exit(&ctx);
	return rc;
}
