/* diff_profile.c - summarising one capture for diff, baseline and gate:
 * per kernel shape, NVTX range and copy kind the count, total, median and
 * quartiles of duration, and what of it ran in the steady-state loop; plus
 * totals (GPU time, wall time, kernel and allocation counts), the loop's
 * iterations and the capture's identity (program, GPU).
 *
 * Rows are streamed ordered by key and duration, so only one group's
 * durations are held at a time (the median needs them); nothing loads a
 * whole table. Works on perfkit captures and nsys exports: tables nsys did
 * not create give empty sections. */
#include "diff.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/event.h"
#include "prof/strfmt.h"
#include "prof/tables.h"
#include "diff_job.h"
#include "program_id.h"
#include "model/capture_windows.h"
#include "model/names.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/sums.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"


/* Durations of the group being read, sorted by the query. */
struct group {
	int64_t *d;
	size_t n, cap;
	int64_t total_ns, bytes;
	int64_t loop_count, loop_total_ns, loop_bytes; /* of those in the loop */
};

static int group__add(struct group *g, int64_t d_ns, int64_t bytes, bool in_loop)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		int64_t *d = realloc(g->d, cap * sizeof *d);

		if (!d)
			return PROF_E_NOMEM;
		g->d = d;
		g->cap = cap;
	}
	g->d[g->n++] = d_ns;
	g->total_ns = prof_add_saturated(g->total_ns, d_ns);
	g->bytes = prof_add_saturated(g->bytes, bytes);
	if (in_loop) {
		g->loop_count++;
		g->loop_total_ns = prof_add_saturated(g->loop_total_ns, d_ns);
		g->loop_bytes = prof_add_saturated(g->loop_bytes, bytes);
	}
	return 0;
}

/* The value at fraction num/den of the sorted durations, interpolated
 * between the two nearest ranks (1/2: the median). */
static int64_t group__quantile(const struct group *g, int num, int den)
{
	size_t pos, lo;
	int64_t rem, span;

	if (g->n == 0)
		return 0;
	pos = (g->n - 1) * (size_t)num;
	lo = pos / (size_t)den;
	rem = (int64_t)(pos % (size_t)den);
	if (rem == 0)
		return g->d[lo];
	/* Durations are not negative (bad spans are left out), so neither is
	 * the step between two of them. */
	span = g->d[lo + 1] - g->d[lo];
	return g->d[lo] + sum_fraction_of(span, rem, den);
}

static struct diff_stat *section__push(struct diff_section *sec)
{
	if (sec->n == sec->cap) {
		size_t cap = sec->cap ? 2 * sec->cap : 32;
		struct diff_stat *v = realloc(sec->v, cap * sizeof *v);

		if (!v)
			return NULL;
		sec->v = v;
		sec->cap = cap;
	}
	memset(&sec->v[sec->n], 0, sizeof sec->v[0]);
	return &sec->v[sec->n++];
}

/* Close the current group into a new entry of sec. */
static int group__emit(struct group *g, struct diff_section *sec, const char *name,
		       const int32_t grid[3], const int32_t block[3], int32_t copy_kind)
{
	struct diff_stat *st;

	if (g->n == 0)
		return 0;
	st = section__push(sec);
	if (!st)
		return PROF_E_NOMEM;
	st->name = strdup(name ? name : "");
	if (!st->name) {
		sec->n--;
		return PROF_E_NOMEM;
	}
	if (grid)
		memcpy(st->grid, grid, sizeof st->grid);
	if (block)
		memcpy(st->block, block, sizeof st->block);
	st->copy_kind = copy_kind;
	st->count = (int64_t)g->n;
	st->total_ns = g->total_ns;
	st->median_ns = group__quantile(g, 1, 2);
	st->q1_ns = group__quantile(g, 1, 4);
	st->q3_ns = group__quantile(g, 3, 4);
	st->bytes = g->bytes;
	st->loop_count = g->loop_count;
	st->loop_total_ns = g->loop_total_ns;
	st->loop_bytes = g->loop_bytes;
	g->n = 0;
	g->total_ns = g->bytes = 0;
	g->loop_count = g->loop_total_ns = g->loop_bytes = 0;
	return 0;
}

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* Which end of the loop window a row's start is judged against: GPU work
 * runs on to the end of what the loop launched, host-side rows (ranges,
 * allocations) stop where the loop's host side does. */
enum loop_side { LOOP_GPU_SIDE, LOOP_HOST_SIDE };

/* Open sql with ?1 and ?2 bound to the loop window, for its in-loop flag. */
static int open_in_loop(const struct diff_profile *p, struct prof_store *s, const char *sql,
			enum loop_side side, struct prof_cursor **c, struct prof_error *err)
{
	int rc = prof_cursor__open(s, sql, c, err);

	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(*c, 1, p->loop.start_ns);
	prof_cursor__bind_int64(*c, 2, side == LOOP_HOST_SIDE ? p->loop.host_end_ns : p->loop.end_ns);
	return 0;
}

/* Kernels grouped by name id and launch shape. The name is the demangled one
 * (what nsys reports show), the short name when a row has none. */
static int load_kernels(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char sql[] =
		"SELECT coalesce(k.demangledName, 0), coalesce(k.shortName, 0),"
		" coalesce(ds.value, ss.value, ''),"
		" k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.\"end\" - k.start,"
		" k.start >= ?1 AND k.start < ?2, " SUM_BAD_SPAN("k.")
		" FROM " PROF_T_KERNEL " k"
		" LEFT JOIN " PROF_T_STRINGS " ds ON ds.id = k.demangledName"
		" LEFT JOIN " PROF_T_STRINGS " ss ON ss.id = k.shortName"
		" ORDER BY 1, 2, 4, 5, 6, 7, 8, 9, 10";
	struct diff_section *sec = &p->sec[DIFF_KERNELS];
	struct prof_cursor *c = NULL;
	struct group g = { 0 };
	int64_t key[8] = { 0 };
	int32_t grid[3] = { 0 }, block[3] = { 0 };
	char *name = NULL;
	int rc;

	rc = open_in_loop(p, s, sql, LOOP_GPU_SIDE, &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t row[8];
		bool same = g.n > 0;

		if (prof_cursor__int64(c, 11)) {
			p->rows_left_out++;
			continue;
		}
		row[0] = prof_cursor__int64(c, 0);
		row[1] = prof_cursor__int64(c, 1);
		for (int i = 0; i < 6; i++)
			row[2 + i] = prof_cursor__int64(c, 3 + i);
		for (int i = 0; i < 8 && same; i++)
			same = row[i] == key[i];
		if (!same) {
			rc = group__emit(&g, sec, name, grid, block, PROF_COPY_UNKNOWN);
			if (rc < 0)
				goto out_nomem;
			memcpy(key, row, sizeof key);
			for (int i = 0; i < 3; i++) {
				grid[i] = (int32_t)row[2 + i];
				block[i] = (int32_t)row[5 + i];
			}
			free(name);
			name = strdup(prof_cursor__text(c, 2) ? prof_cursor__text(c, 2) : "");
			if (!name) {
				rc = PROF_E_NOMEM;
				goto out_nomem;
			}
		}
		rc = group__add(&g, prof_cursor__int64(c, 9), 0, prof_cursor__int64(c, 10));
		if (rc < 0)
			goto out_nomem;
	}
	if (rc < 0)
		goto out;
	rc = group__emit(&g, sec, name, grid, block, PROF_COPY_UNKNOWN);
	if (rc < 0)
		goto out_nomem;
	for (size_t i = 0; i < sec->n; i++) {
		p->kernel_count += sec->v[i].count;
		p->loop_kernel_count += sec->v[i].loop_count;
	}
	goto out;
out_nomem:
	rc = nomem(err);
out:
	free(name);
	free(g.d);
	prof_cursor__close(c);
	return rc;
}

const char *diff_copy_kind__name(int32_t copy_kind)
{
	const char *name = sum_copy_short(copy_kind);

	return name ? name : "unknown";
}

/* Static allocations behave as their kind does: one label for both. */
static const char *mem_kind_name(int64_t kind)
{
	if (kind == PROF_MEM_MANAGED_STATIC)
		kind = PROF_MEM_MANAGED;
	else if (kind == PROF_MEM_DEVICE_STATIC)
		kind = PROF_MEM_DEVICE;
	return sum_mem_word(kind);
}

/* Copies grouped by direction and, for copies touching the host, the host
 * memory kind: a pageable HtoD copy and a pinned one behave differently. */
static int load_copies(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char sql[] =
		"SELECT copyKind,"
		" CASE WHEN copyKind IN (1, 3, 11) THEN srcKind"
		"      WHEN copyKind IN (2, 4, 12) THEN dstKind ELSE -1 END AS hostKind,"
		" \"end\" - start, bytes, start >= ?1 AND start < ?2, " SUM_BAD_COPY("")
		" FROM " PROF_T_MEMCPY " ORDER BY 1, 2, 3";
	struct diff_section *sec = &p->sec[DIFF_COPIES];
	struct prof_cursor *c = NULL;
	struct group g = { 0 };
	int64_t kind = 0, host = 0;
	char label[64] = "";
	int rc;

	rc = open_in_loop(p, s, sql, LOOP_GPU_SIDE, &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t k = prof_cursor__int64(c, 0);
		int64_t h = prof_cursor__is_null(c, 1) ? -1 : prof_cursor__int64(c, 1);

		if (prof_cursor__int64(c, 5)) {
			p->rows_left_out++;
			continue;
		}
		if (g.n == 0 || k != kind || h != host) {
			const char *hk = mem_kind_name(h);

			if (group__emit(&g, sec, label, NULL, NULL, (int32_t)kind) < 0)
				goto out_nomem;
			kind = k;
			host = h;
			snprintf(label, sizeof label, "%s%s%s", diff_copy_kind__name((int32_t)k),
				 hk ? " " : "", hk ? hk : "");
		}
		if (group__add(&g, prof_cursor__int64(c, 2), prof_cursor__int64(c, 3),
			       prof_cursor__int64(c, 4)) < 0)
			goto out_nomem;
	}
	if (rc >= 0 && group__emit(&g, sec, label, NULL, NULL, (int32_t)kind) < 0)
		goto out_nomem;
	goto out;
out_nomem:
	rc = nomem(err);
out:
	free(g.d);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Memsets are GPU time too; they form one "Memset" entry among the copies. */
static int load_memsets(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char sql[] =
		"SELECT \"end\" - start, bytes, start >= ?1 AND start < ?2, " SUM_BAD_COPY("")
		" FROM " PROF_T_MEMSET " ORDER BY 1";
	struct prof_cursor *c = NULL;
	struct group g = { 0 };
	int rc;

	rc = open_in_loop(p, s, sql, LOOP_GPU_SIDE, &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		if (prof_cursor__int64(c, 3))
			p->rows_left_out++;
		else if (group__add(&g, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
				    prof_cursor__int64(c, 2)) < 0)
			goto out_nomem;
	}
	if (rc >= 0 && group__emit(&g, &p->sec[DIFF_COPIES], "Memset", NULL, NULL, -1) < 0)
		goto out_nomem;
	goto out;
out_nomem:
	rc = nomem(err);
out:
	free(g.d);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Host-side spans grouped by name into sec. sql yields, ordered by name:
 * name, duration, in the loop (?1..?2), a bad span (left out and counted). */
static int load_host_spans(struct diff_profile *p, struct prof_store *s, const char *sql,
			   struct diff_section *sec, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	struct group g = { 0 };
	char *name = NULL;
	int rc;

	rc = open_in_loop(p, s, sql, LOOP_HOST_SIDE, &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) > 0) {
		const char *n = prof_cursor__text(c, 0);

		if (prof_cursor__int64(c, 3)) {
			p->rows_left_out++;
			continue;
		}
		if (!n)
			n = "";
		if (g.n == 0 || strcmp(n, name) != 0) {
			if (group__emit(&g, sec, name, NULL, NULL, -1) < 0)
				goto out_nomem;
			free(name);
			name = strdup(n);
			if (!name)
				goto out_nomem;
		}
		if (group__add(&g, prof_cursor__int64(c, 1), 0, prof_cursor__int64(c, 2)) < 0)
			goto out_nomem;
	}
	if (rc >= 0 && group__emit(&g, sec, name, NULL, NULL, -1) < 0)
		goto out_nomem;
	goto out;
out_nomem:
	rc = nomem(err);
out:
	free(name);
	free(g.d);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* NVTX push/pop and start/end ranges grouped by name (marks have no end). */
static int load_ranges(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char sql[] =
		"SELECT coalesce(s.value, e.text, '') AS name, e.\"end\" - e.start AS d,"
		" e.start >= ?1 AND e.start < ?2, " SUM_BAD_SPAN("e.")
		" FROM " PROF_T_NVTX " e LEFT JOIN " PROF_T_STRINGS " s ON s.id = e.textId"
		" WHERE e.eventType IN (" PROF_SQL_NVTX_RANGES ") AND e.\"end\" IS NOT NULL"
		" ORDER BY 1, 2";

	return load_host_spans(p, s, sql, &p->sec[DIFF_RANGES], err);
}

/* CUDA runtime and driver API calls grouped by name as the summary shows
 * it (version suffix dropped), each call once (sum_api_calls); host time,
 * so in no GPU total. */
static int load_api(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char fmt[] =
		"SELECT coalesce(" SUM_API_NAME("n.value") ", '') AS name, a.\"end\" - a.start AS d,"
		" a.start >= ?1 AND a.start < ?2, " SUM_BAD_SPAN("a.")
		" FROM (%s) AS a LEFT JOIN " PROF_T_STRINGS " n ON n.id = a.nameId ORDER BY 1, 2";
	char *calls, *sql;
	int rc;

	calls = sum_api_calls(s, &rc, err);
	if (rc < 0 || !calls)
		return rc < 0 ? rc : 0;
	sql = prof_strfmt(fmt, calls);
	free(calls);
	if (!sql)
		return nomem(err);
	rc = load_host_spans(p, s, sql, &p->sec[DIFF_API], err);
	free(sql);
	return rc;
}

/* A copy of the first text cell of a one-row query, NULL when none. */
static int query_text(struct prof_store *s, const char *sql, char **v, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(s, sql, &c, err);

	*v = NULL;
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0 && !prof_cursor__is_null(c, 0) && prof_cursor__text(c, 0)) {
		*v = strdup(prof_cursor__text(c, 0));
		if (!*v)
			rc = nomem(err);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int load_allocations(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	static const char sql[] = "SELECT count(*), coalesce(sum(start >= ?1 AND start < ?2), 0) FROM "
				  PROF_T_MEMORY " WHERE memoryOperationType = 0";
	struct prof_cursor *c = NULL;
	int rc;

	rc = open_in_loop(p, s, sql, LOOP_HOST_SIDE, &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0) {
		p->alloc_count = prof_cursor__int64(c, 0);
		p->loop_alloc_count = prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Wall time: the run's own measurement when perfkit recorded one; for nsys
 * exports (and cut-short captures) the span from the first to the last
 * record (sum_capture__time: rows without a real time, such as NVTX
 * domain registrations at 0, do not stretch it back to 1970); for a
 * capture made of capture windows, the time they recorded, so that two
 * captures (or one window of each, --window) compare what was recorded. */
static int load_wall(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	char *meta = prof_store__meta(s, "duration_ns");
	struct sum_capture_time time;
	struct sum_stretches st;
	int rc = sum_capture__time(s, &time, err);

	if (rc == 0)
		rc = sum_stretches__load(s, time.first_ns, time.last_ns, &st, err);
	if (rc < 0) {
		free(meta);
		return rc;
	}
	if (st.windows) {
		free(meta);
		p->wall_ns = sum_stretches__covered(&st, time.first_ns, time.last_ns);
		sum_stretches__exit(&st);
		return 0;
	}
	sum_stretches__exit(&st);
	if (meta) {
		char *end;
		long long v = strtoll(meta, &end, 10);
		bool ok = end != meta && *end == '\0' && v >= 0;

		free(meta);
		if (ok) {
			p->wall_ns = v;
			return 0;
		}
	}
	p->wall_ns = prof_span_saturated(time.first_ns, time.last_ns);
	return 0;
}

static int load_identity(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	char *cmd = prof_store__meta(s, "command");
	char *name = NULL;
	int rc = 0;

	if (cmd) {
		rc = program_id__parse(cmd, &p->program, &p->launcher);
		free(cmd);
		if (rc < 0)
			return nomem(err);
	} else {
		/* nsys exports: the process that launched kernels, else the first one. */
		const char *sql = "SELECT name FROM " PROF_T_PROCESSES " ORDER BY globalPid NOT IN"
				  " (SELECT globalPid FROM " PROF_T_KERNEL "), pid LIMIT 1";

		rc = query_text(s, sql, &name, err);
		if (rc < 0)
			return rc;
		/* a process name without its arguments: an interpreter's
		 * script is unknown ("", its launcher kept) */
		if (name) {
			rc = program_id__parse(name, &p->program, &p->launcher);
			free(name);
			if (rc < 0)
				return nomem(err);
		}
	}
	rc = query_text(s, "SELECT name FROM " PROF_T_GPU " ORDER BY id LIMIT 1", &p->gpu, err);
	if (rc < 0)
		return rc;
	if (!p->gpu)
		p->gpu = prof_store__meta(s, "gpu");
	if (!p->program)
		p->program = strdup("");
	if (!p->launcher)
		p->launcher = strdup("");
	if (!p->gpu)
		p->gpu = strdup("");
	if (!p->program || !p->launcher || !p->gpu)
		return nomem(err);
	return 0;
}

/* The loop as diagnose finds it with its default settings, or marked as
 * `like` is. */
static int load_loop(struct diff_profile *p, struct prof_store *s, const struct sum_window *like,
		     struct prof_error *err)
{
	struct sum_loop_options o;

	sum_loop_options__init(&o);
	if (like)
		return sum_window__find_marked(s, &o, like, &p->loop, err);
	return sum_window__find(s, &o, &p->loop, err);
}

static int int64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The q-th quarter (1, 2, 3) of n sorted values, interpolated. */
static int64_t quartile(const int64_t *v, int n, int q)
{
	struct group g = { .d = (int64_t *)v, .n = (size_t)n };

	return group__quantile(&g, q, 4);
}

/* Where each NVTX step's GPU work started: the first start of what the
 * calls made inside its range launched (-1: none), each launch placed in
 * the step open on its thread when the call ran. */
static int gpu_starts(struct prof_store *s, const struct sum_window *w, const struct sum_step *steps,
		      int n, int64_t *first, struct prof_error *err)
{
	static const char *const api[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	static const char *const gpu[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	char sql[4096];
	size_t len = 0;
	struct prof_cursor *c;
	int rc, k = 0;

	for (int i = 0; i < n; i++)
		first[i] = -1;
	len += (size_t)snprintf(sql, sizeof sql, "SELECT tid, at, g0 FROM (");
	for (size_t a = 0; a < 2; a++)
		for (size_t g = 0; g < 3; g++)
			len += (size_t)snprintf(sql + len, sizeof sql - len,
						"%sSELECT r.globalTid AS tid, r.start AS at, g.start AS g0"
						" FROM %s g JOIN %s r ON %s WHERE r.start >= ?1 AND"
						" r.start < ?2 AND NOT " SUM_BAD_SPAN("g."),
						k++ ? " UNION ALL " : "", gpu[g], api[a],
						SUM_LAUNCHED_BY("g", "r"));
	snprintf(sql + len, sizeof sql - len, ") ORDER BY at");
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, steps[0].start_ns);
	prof_cursor__bind_int64(c, 2, w->host_end_ns > w->end_ns ? w->host_end_ns : w->end_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t tid = prof_cursor__int64(c, 0), at = prof_cursor__int64(c, 1);
		int64_t g0 = prof_cursor__int64(c, 2);
		int lo = 0, hi = n;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (steps[mid].start_ns <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int i = lo - 1; i >= 0 && i >= lo - 8; i--) {
			if (steps[i].global_tid != tid || at >= steps[i].end_ns)
				continue;
			if (first[i] < 0 || g0 < first[i])
				first[i] = g0;
			break;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The wall time of the loop's steps as diagnose measures a rank's
 * (rank_time.c): each from the start of its GPU work to the start of the
 * next step's, since a host that enqueues and races ahead ends its NVTX
 * ranges long before their work runs; a step that launched nothing from
 * its host start; the last one to the loop's end. Steps marked by a
 * kernel are GPU periods already. */
static int load_steps(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	struct sum_step *steps = NULL;
	int64_t *d = NULL, *first = NULL;
	int n = 0, rc;

	if (p->loop.iterations <= 0)
		return 0;
	rc = sum_window__steps(s, &p->loop, &steps, &n, err);
	if (rc < 0 || n == 0)
		goto out;
	d = malloc((size_t)n * sizeof *d);
	first = malloc((size_t)n * sizeof *first);
	if (!d || !first) {
		rc = nomem(err);
		goto out;
	}
	if (p->loop.mark == SUM_LOOP_NVTX) {
		rc = gpu_starts(s, &p->loop, steps, n, first, err);
		if (rc < 0)
			goto out;
	} else {
		for (int i = 0; i < n; i++)
			first[i] = -1;
	}
	for (int i = 0; i < n; i++) {
		int64_t from = first[i] >= 0 ? first[i] : steps[i].start_ns;
		int64_t to = i + 1 < n ? (first[i + 1] >= 0 ? first[i + 1] : steps[i + 1].start_ns) :
					 (p->loop.end_ns > steps[i].end_ns ? p->loop.end_ns : steps[i].end_ns);

		d[i] = prof_span_saturated(from, to);
	}
	qsort(d, (size_t)n, sizeof *d, int64_cmp);
	p->nsteps = n;
	p->step_med_ns = quartile(d, n, 2);
	p->step_q1_ns = quartile(d, n, 1);
	p->step_q3_ns = quartile(d, n, 3);
out:
	free(d);
	free(first);
	free(steps);
	return rc < 0 ? rc : 0;
}

static int load(struct diff_profile *p, struct prof_store *s, const struct sum_window *like,
		struct prof_error *err)
{
	/* After the loop: the steps and sections are read inside its window. */
	static int (*const sections[])(struct diff_profile *, struct prof_store *,
				       struct prof_error *) = {
		load_steps, load_kernels, load_copies, load_memsets, load_ranges,
		load_api, load_allocations, load_wall,
	};
	int rc;

	memset(p, 0, sizeof *p);
	p->rank = -1;
	p->straggler_rank = -1;
	p->path = strdup(prof_store__path(s));
	if (!p->path)
		return nomem(err);
	rc = load_identity(p, s, err);
	if (rc >= 0)
		rc = load_loop(p, s, like, err);
	for (size_t i = 0; rc >= 0 && i < sizeof sections / sizeof sections[0]; i++)
		rc = sections[i](p, s, err);
	if (rc < 0) {
		diff_profile__exit(p);
		return rc;
	}
	for (int sec = DIFF_KERNELS; sec <= DIFF_COPIES; sec++) {
		for (size_t i = 0; i < p->sec[sec].n; i++) {
			p->gpu_time_ns = prof_add_saturated(p->gpu_time_ns, p->sec[sec].v[i].total_ns);
			p->loop_gpu_time_ns = prof_add_saturated(p->loop_gpu_time_ns,
								p->sec[sec].v[i].loop_total_ns);
		}
	}
	return 0;
}

/* A job's ranks, each profiled on its own rows with its own loop (marked
 * as `like` where that marker repeats in it), as diagnose finds a job's
 * loop rank by rank. */
static int load_ranks(struct diff_profile *p, struct prof_store *s, const struct sum_window *like,
		      struct prof_error *err)
{
	struct sum_ranks rk = { 0 };
	struct prof_error ignored = { 0 };
	int rc = sum_ranks__load(s, &rk, err), urc;

	if (rc < 0)
		return rc;
	if (!sum_ranks__is_job(&rk) || rk.nranks < 2)
		goto out;
	p->ranks = calloc((size_t)rk.nranks, sizeof *p->ranks);
	if (!p->ranks) {
		rc = nomem(err);
		goto out;
	}
	for (int i = 0; i < rk.n && rc >= 0; i++) {
		const struct sum_process *proc = &rk.p[i];
		struct diff_profile *r = &p->ranks[p->nranks];

		if (proc->rank < 0)
			continue;
		rc = sum_ranks__scope(s, proc->global_pid, err);
		if (rc >= 0) {
			rc = load(r, s, like, err);
			/* without that marker here, the loop its own search finds */
			if (rc >= 0 && like && r->loop.iterations == 0) {
				diff_profile__exit(r);
				rc = load(r, s, NULL, err);
			}
		}
		urc = sum_ranks__unscope(s, rc < 0 ? &ignored : err);
		if (rc >= 0 && urc < 0) {
			diff_profile__exit(r);
			rc = urc;
		}
		if (rc < 0)
			break;
		r->rank = proc->rank;
		sum_process__rank_name(proc, r->rank_name, sizeof r->rank_name);
		p->nranks++;
	}
	if (rc >= 0 && p->nranks > 0)
		p->loop = p->ranks[0].loop;
	if (rc >= 0)
		rc = diff_job__load_waits(p, s, &rk, err);
out:
	sum_ranks__exit(&rk);
	return rc < 0 ? rc : 0;
}

static void exit_ranks(struct diff_profile *p)
{
	for (int i = 0; i < p->nranks; i++)
		diff_profile__exit(&p->ranks[i]);
	free(p->ranks);
	p->ranks = NULL;
	p->nranks = 0;
}

/* The whole capture, then each rank of a job. */
static int load_job(struct diff_profile *p, struct prof_store *s, const struct sum_window *like,
		    struct prof_error *err)
{
	int rc = load(p, s, like, err);

	if (rc < 0)
		return rc;
	rc = load_ranks(p, s, like, err);
	if (rc < 0)
		diff_profile__exit(p);
	return rc;
}

int diff_profile__load(struct diff_profile *p, struct prof_store *s, struct prof_error *err)
{
	return load_job(p, s, NULL, err);
}

int diff_profile__load_path(struct diff_profile *p, const char *path, struct prof_error *err)
{
	struct prof_store *s = NULL;
	int rc = prof_store__open_capture(path, &s, err);

	if (rc < 0) {
		memset(p, 0, sizeof *p);
		return rc;
	}
	rc = prof_store__check_whole(s, err);
	if (rc < 0) {
		memset(p, 0, sizeof *p);
		prof_store__close(s);
		return rc;
	}
	rc = diff_profile__load(p, s, err);
	if (!rc)
		rc = prof_store__check_read(s, err);
	prof_store__close(s);
	if (rc < 0)
		diff_profile__exit(p);
	return rc;
}

/* p, loaded from s, summarised again with its loop marked as like's is. */
static int realign(struct diff_profile *p, struct prof_store *s, const struct sum_window *like,
		   struct prof_error *err)
{
	struct diff_profile again;
	int rc = load_job(&again, s, like, err);

	if (!rc && (rc = prof_store__check_read(s, err)) < 0)
		diff_profile__exit(&again);
	if (rc < 0)
		return rc;
	/* Without that marker repeating here, the loop found first stays. */
	if (again.loop.iterations == 0) {
		diff_profile__exit(&again);
		return 0;
	}
	diff_profile__exit(p);
	*p = again;
	return 0;
}

int diff_profile__load_like(struct diff_profile *p, struct prof_store *s,
			    const struct sum_window *like, struct prof_error *err)
{
	int rc = load_job(p, s, NULL, err);

	if (rc < 0 || !like || like->mark == SUM_LOOP_NONE || sum_window__same_mark(&p->loop, like))
		return rc;
	rc = realign(p, s, like, err);
	if (rc < 0)
		diff_profile__exit(p);
	return rc;
}

int diff_profiles__align_loops(struct diff_profile *p, size_t n, const struct sum_window *like,
			       struct prof_error *err)
{
	struct sum_window first;

	if (n == 0)
		return 0;
	first = like ? *like : p[0].loop;
	if (first.mark == SUM_LOOP_NONE)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct prof_store *s = NULL;
		int rc;

		if (sum_window__same_mark(&p[i].loop, &first))
			continue;
		rc = prof_store__open(p[i].path, &s, err);
		if (rc < 0)
			return rc;
		rc = realign(&p[i], s, &first, err);
		prof_store__close(s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void diff_profile__exit(struct diff_profile *p)
{
	exit_ranks(p);
	for (int sec = 0; sec < DIFF_NSECTIONS; sec++) {
		for (size_t i = 0; i < p->sec[sec].n; i++)
			free(p->sec[sec].v[i].name);
		free(p->sec[sec].v);
	}
	free(p->path);
	free(p->program);
	free(p->launcher);
	free(p->gpu);
	memset(p, 0, sizeof *p);
}
