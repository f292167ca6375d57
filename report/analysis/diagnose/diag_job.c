/* diag_job.c - a job's ranks and collectives as the job's rules read them
 * (diag_job.h): each rank's time, NCCL's calls matched into collectives and
 * how long each call waited for the last rank; the ranks whose own rules
 * run; a rank's work over a span. */
#include "diag_job.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "analysis/ranks/job_judge.h"
#include "prof/saturate.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* ---- what the job's rules read ---------------------------------------- */

const struct rank_time *diag_job__time_of(const struct diag_job *j, int64_t global_pid)
{
	for (int i = 0; i < j->times.n; i++)
		if (j->times.v[i].global_pid == global_pid)
			return &j->times.v[i];
	return NULL;
}

int64_t diag_job__step_ns(const struct diag_job *j)
{
	int64_t *v = malloc(sizeof *v * (size_t)(j->times.n ? j->times.n : 1)), med;
	int n = 0;

	if (!v)
		return -1;
	for (int i = 0; i < j->times.n; i++)
		if (j->times.v[i].step_med_ns > 0)
			v[n++] = j->times.v[i].step_med_ns;
	med = rank_time__percentile(v, n, 50);
	free(v);
	return med;
}

static bool in_window(const struct diag_job *j, const struct nccl_call *k)
{
	const struct rank_time *t = diag_job__time_of(j, k->global_pid);

	return t && k->start_ns >= t->w.start_ns && k->start_ns < t->w.end_ns;
}

/* Each call's wait at its collective, and whether every call of each
 * collective lies in its rank's window. */
static int waits(struct diag_job *j)
{
	j->wait_ns = malloc(sizeof *j->wait_ns * (size_t)(j->calls.n ? j->calls.n : 1));
	j->last_call = malloc(sizeof *j->last_call * (size_t)(j->cols.n ? j->cols.n : 1));
	j->in_window = malloc(sizeof *j->in_window * (size_t)(j->cols.n ? j->cols.n : 1));
	if (!j->wait_ns || !j->last_call || !j->in_window)
		return PROF_E_NOMEM;
	for (int c = 0; c < j->cols.n; c++) {
		const struct nccl_collective *col = &j->cols.v[c];

		j->in_window[c] = true;
		for (int i = 0; i < col->ncalls; i++)
			j->in_window[c] &= in_window(j, &j->calls.v[col->calls[i]]);
	}
	return nccl_collectives__waits(&j->calls, &j->cols, j->wait_ns, j->last_call);
}

static bool same_host(const struct sum_ranks *r)
{
	const char *first = NULL;
	bool any = false;

	for (int i = 0; i < r->n; i++) {
		const struct sum_process *p = &r->p[i];

		if (p->rank < 0 || !p->selected)
			continue;
		if (r->several_hosts && !p->host)
			return false;
		if (any && (!p->host) != (!first))
			return false;
		if (any && p->host && strcmp(p->host, first))
			return false;
		first = p->host;
		any = true;
	}
	return true;
}

int diag_job__note_rows(struct prof_store *s, struct prof_error *err)
{
	static const char *const tables[][2] = {
		{ "k", PROF_T_KERNEL }, { "c", PROF_T_MEMCPY }, { "s", PROF_T_MEMSET },
	};
	struct prof_error ignored = { 0 };
	char sql[512];
	int rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." DIAG_JOB_ROWS_TABLE "; CREATE TEMP TABLE "
				  DIAG_JOB_ROWS_TABLE " (tbl TEXT, pid INTEGER, lo INTEGER, hi INTEGER,"
				  " PRIMARY KEY (tbl, pid))", err);

	for (size_t i = 0; rc == 0 && i < sizeof tables / sizeof tables[0]; i++) {
		if (!prof_store__has_table(s, tables[i][1]))
			continue;
		snprintf(sql, sizeof sql, "INSERT INTO temp." DIAG_JOB_ROWS_TABLE " SELECT '%s', globalPid,"
			 " min(rowid), max(rowid) FROM %s WHERE globalPid IS NOT NULL GROUP BY globalPid",
			 tables[i][0], tables[i][1]);
		prof_store__exec(s, sql, &ignored);
	}
	return rc;
}

void diag_job__loop_options(const struct diag_settings *settings, struct sum_loop_options *o)
{
	*o = (struct sum_loop_options){
		.min_iterations = diag_settings__get(settings, "iterations.min"),
		.coverage = diag_settings__get(settings, "iterations.coverage"),
		.tiling = diag_settings__get(settings, "iterations.tiling"),
		.whole_run = diag_settings__get(settings, "window.whole_run") != 0,
	};
}

int diag_job__prepare(struct diag_job *j, const struct diag_settings *settings, struct prof_error *err)
{
	int rc = nccl_collectives__match(&j->calls, &j->cols, err);

	if (rc == 0 && waits(j))
		rc = nomem(err);
	j->one_host = same_host(j->ranks);
	{
		double up_to = diag_settings__get(settings, "job.every_rank_up_to");

		j->every_rank_up_to = up_to >= INT_MAX ? INT_MAX : (int)up_to;
	}
	return rc;
}

int diag_job__load(struct prof_store *s, const struct diag_settings *settings, const struct sum_ranks *ranks,
		   struct diag_job *j, struct prof_error *err)
{
	struct sum_loop_options o;
	int rc;

	diag_job__loop_options(settings, &o);
	j->ranks = ranks;
	rc = diag_job__note_rows(s, err);
	if (rc == 0)
		rc = rank_times__load(s, &o, RANK_TIME_JOB, &j->times, err);
	if (rc == 0)
		rc = nccl_calls__load(s, ranks, &j->calls, err);
	if (rc == 0)
		nccl_calls__size_evidence(s, &j->calls, &j->sizes);
	j->link_bytes_per_ns = nccl_link_bytes_per_ns(s);
	if (rc == 0)
		rc = diag_job__prepare(j, settings, err);
	return rc;
}

void diag_job__exit(struct diag_job *j)
{
	rank_times__exit(&j->times);
	nccl_calls__exit(&j->calls);
	nccl_collectives__exit(&j->cols);
	free(j->wait_ns);
	free(j->last_call);
	free(j->in_window);
}

/* ---- the ranks whose own rules run ------------------------------------------ */

/* A rank's step as the verdict counts it: its window over its iterations. */
static int64_t verdict_step(const struct rank_time *t)
{
	return t->w.iterations > 0 ? t->window_ns / t->w.iterations : t->window_ns;
}

struct ranked_step {
	int64_t step_ns;
	int i;
};

static int by_step(const void *a, const void *b)
{
	const struct ranked_step *x = a, *y = b;

	if (x->step_ns != y->step_ns)
		return x->step_ns < y->step_ns ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The rank the others waited for most, summed over the collectives it
 * arrived last at, into *best (-1 when no one waited). */
static int most_awaited(const struct diag_job *j, int *best)
{
	int64_t *waited = calloc((size_t)(j->times.n ? j->times.n : 1), sizeof *waited);

	*best = -1;
	if (!waited)
		return PROF_E_NOMEM;
	for (int c = 0; c < j->cols.n; c++) {
		const struct nccl_collective *col = &j->cols.v[c];
		int last = j->last_call[c], li;

		if (last < 0 || (li = diag_job__rank_index(j, j->calls.v[last].global_pid)) < 0)
			continue;
		for (int i = 0; i < col->ncalls; i++)
			if (col->calls[i] != last && j->wait_ns[col->calls[i]] > 0)
				waited[li] = prof_add_saturated(waited[li], j->wait_ns[col->calls[i]]);
	}
	for (int i = 0; i < j->times.n; i++)
		if (waited[i] > 0 && (*best < 0 || waited[i] > waited[*best]))
			*best = i;
	free(waited);
	return 0;
}

int diag_job__choose(const struct diag_job *j, unsigned *why)
{
	int n = j->times.n, slowest = -1, awaited, median, chosen = 0;
	struct ranked_step *order;

	memset(why, 0, sizeof *why * (size_t)(n ? n : 1));
	if (n <= j->every_rank_up_to) {
		for (int i = 0; i < n; i++)
			why[i] = DIAG_JOB_EVERY;
		return n;
	}
	/* the first of the longest, as the job's verdict takes it */
	for (int i = 0; i < n; i++)
		if (slowest < 0 || verdict_step(&j->times.v[i]) > verdict_step(&j->times.v[slowest]))
			slowest = i;
	why[slowest] |= DIAG_JOB_SLOWEST;
	order = malloc(sizeof *order * (size_t)n);
	if (!order || most_awaited(j, &awaited)) {
		free(order);
		return PROF_E_NOMEM;
	}
	for (int i = 0; i < n; i++)
		order[i] = (struct ranked_step){ verdict_step(&j->times.v[i]), i };
	qsort(order, (size_t)n, sizeof *order, by_step);
	/* the first rank of the median step, where several have it */
	median = (n - 1) / 2;
	while (median > 0 && order[median - 1].step_ns == order[median].step_ns)
		median--;
	why[order[median].i] |= DIAG_JOB_MEDIAN;
	free(order);
	if (awaited >= 0)
		why[awaited] |= DIAG_JOB_AWAITED;
	for (int i = 0; i < n; i++)
		chosen += why[i] != 0;
	return chosen;
}

void diag_job__why_words(unsigned why, char *buf, size_t cap)
{
	static const struct {
		unsigned bit;
		const char *words;
	} reasons[] = {
		{ DIAG_JOB_SLOWEST, "the slowest step" },
		{ DIAG_JOB_MEDIAN, "the median step" },
		{ DIAG_JOB_AWAITED, "the one the others wait for at the collectives" },
	};
	size_t len = 0;

	buf[0] = 0;
	for (size_t k = 0; k < sizeof reasons / sizeof reasons[0] && len < cap; k++)
		if (why & reasons[k].bit)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " and " : "", reasons[k].words);
}

/* ---- for the job's rules ---------------------------------------------------- */

int diag_job__rank_index(const struct diag_job *j, int64_t global_pid)
{
	for (int i = 0; i < j->times.n; i++)
		if (j->times.v[i].global_pid == global_pid)
			return i;
	return -1;
}

double diag_job__steps(const struct rank_time *t)
{
	return t->nsteps > 0 ? (double)t->nsteps : 1.0;
}

double diag_job__share(const struct rank_time *t, int64_t ns)
{
	double s = t->window_ns > 0 ? (double)ns / (double)t->window_ns : 0;

	return s < 0 ? 0 : s > 1 ? 1 : s;
}

int diag_job__set_ranks(struct diag_finding *f, const struct diag_job *j, const bool *on, const int64_t *ns,
			int share_rank)
{
	int n = 0;

	if (!f)
		return PROF_E_NOMEM;
	f->ranks = calloc((size_t)j->times.n, sizeof *f->ranks);
	if (!f->ranks)
		return PROF_E_NOMEM;
	for (int i = 0; i < j->times.n; i++)
		if (on[i])
			f->ranks[n++] = (struct diag_rank_share){ j->times.v[i].rank,
								  diag_job__share(&j->times.v[i], ns[i]), ns[i] };
	f->nranks = n;
	f->every_rank = n == j->times.n;
	f->share_rank = share_rank;
	return 0;
}

static const char *amount(char *buf, size_t cap, double v, enum diag_job_unit unit)
{
	if (unit == DIAG_JOB_NS)
		return diag__ns(buf, cap, (int64_t)v);
	snprintf(buf, cap, unit == DIAG_JOB_SHARE ? "%.1f%%" : "%.1f", unit == DIAG_JOB_SHARE ? 100 * v : v);
	return buf;
}

void diag_job__amounts(const struct diag_job *j, const bool *on, const double *v, enum diag_job_unit unit,
		       char *buf, size_t cap)
{
	size_t len = 0;
	int n = 0, lo = -1, hi = -1;
	char b[32], b2[32];

	buf[0] = 0;
	for (int i = 0; i < j->times.n; i++) {
		if (!on[i])
			continue;
		n++;
		if (lo < 0 || v[i] < v[lo])
			lo = i;
		if (hi < 0 || v[i] > v[hi])
			hi = i;
	}
	if (n > DIAG_JOB_LIST_RANKS) {
		snprintf(buf, cap, "from %s (rank %d) to %s (rank %d)", amount(b, sizeof b, v[lo], unit),
			 j->times.v[lo].rank, amount(b2, sizeof b2, v[hi], unit), j->times.v[hi].rank);
		return;
	}
	for (int i = 0; i < j->times.n && len < cap; i++)
		if (on[i])
			len += (size_t)snprintf(buf + len, cap - len, "%srank %d %s", len ? ", " : "",
						j->times.v[i].rank, amount(b, sizeof b, v[i], unit));
}

/* ---- a rank's work over a span ------------------------------------------------ */

/* The union of the (start, end) rows of sql (ordered by start; ?1, ?2 the
 * span, ?3 the process), each moved by by_ns; the starts into
 * starts->kernel_starts when starts is not NULL. */
static int load_union(struct prof_store *s, const char *sql, int64_t by_ns, int64_t lo, int64_t hi, int64_t pid,
		      struct diag_intervals *u, struct diag_rank_work *starts, struct prof_error *err)
{
	struct prof_cursor *c;
	char *copy = strdup(sql);
	int rc;

	if (!copy)
		return nomem(err);
	rc = range_cursor__open(s, copy, lo - by_ns, hi - by_ns, &pid, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0) + by_ns, b = prof_cursor__int64(c, 1) + by_ns;

		if (b < a)
			continue;
		if (diag_intervals__merge(u, a, b) ||
		    (starts && array__grow((void **)&starts->kernel_starts, &starts->cap_kernels,
					   starts->nkernels + 1, sizeof *starts->kernel_starts))) {
			rc = nomem(err);
			break;
		}
		if (starts)
			starts->kernel_starts[starts->nkernels++] = a;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int diag_job__load_work(const struct diag_job *j, struct diag_rank_work *w, int64_t lo, int64_t hi,
			bool with_api, struct prof_error *err)
{
	return j->src.load_work(j->src.arg, w->pid, lo, hi, with_api, w, err);
}

int diag_rank_work__load(struct prof_store *s, int64_t pid, int64_t by_ns, int64_t lo, int64_t hi,
			 const char *calls, struct diag_rank_work *w, struct prof_error *err)
{
	static const char kernels[] = "SELECT k.start, k.end FROM " PROF_T_KERNEL " k WHERE k.globalPid = ?3"
				      " AND " DIAG_JOB_ROWS("k.", "k") " AND k.end > ?1 AND k.start < ?2"
				      " AND NOT " SUM_BAD_SPAN("k.") " AND " DIAG_JOB_NOT_NCCL;
	static const char copies[] = "SELECT start, end FROM " PROF_T_MEMCPY " WHERE globalPid = ?3"
				     " AND " DIAG_JOB_ROWS("", "c") " AND end > ?1 AND start < ?2"
				     " AND NOT " SUM_BAD_SPAN("");
	static const char memsets[] = "SELECT start, end FROM " PROF_T_MEMSET " WHERE globalPid = ?3"
				      " AND " DIAG_JOB_ROWS("", "s") " AND end > ?1 AND start < ?2"
				      " AND NOT " SUM_BAD_SPAN("");
	bool has_kernel = prof_store__has_table(s, PROF_T_KERNEL);
	char sql[4096] = "", busy[8192];
	int rc = 0;

	w->loaded = true;
	if (has_kernel) {
		snprintf(busy, sizeof busy, "%s ORDER BY k.start", kernels);
		rc = load_union(s, busy, by_ns, lo, hi, pid, &w->compute, w, err);
	}
	if (prof_store__has_table(s, PROF_T_MEMCPY))
		strcat(sql, copies);
	if (prof_store__has_table(s, PROF_T_MEMSET))
		strcat(strcat(sql, sql[0] ? " UNION ALL " : ""), memsets);
	if (rc == 0 && sql[0]) {
		char ordered[sizeof sql + 16];

		snprintf(ordered, sizeof ordered, "%s ORDER BY 1", sql);
		rc = load_union(s, ordered, by_ns, lo, hi, pid, &w->copies, NULL, err);
	}
	snprintf(busy, sizeof busy, "SELECT * FROM (%s%s%s) ORDER BY 1", has_kernel ? kernels : "",
		 has_kernel && sql[0] ? " UNION ALL " : "", sql);
	if (rc == 0 && (has_kernel || sql[0]))
		rc = load_union(s, busy, by_ns, lo, hi, pid, &w->busy, NULL, err);
	if (rc == 0 && calls) {
		/* the one rank's calls, asked of the API tables themselves: a
		 * temporary copy of every call of the job, and its index, cost
		 * more than this scan, and the job's rules need at most two
		 * ranks' calls */
		char *api = prof_strfmt("SELECT start, end FROM (%s) WHERE NOT " SUM_BAD_SPAN("") " AND "
					PROF_SQL_GLOBAL_PID_OF_TID("globalTid") " = ?3 AND end > ?1 AND start < ?2"
					" ORDER BY start", calls);

		if (!api)
			return nomem(err);
		rc = load_union(s, api, by_ns, lo, hi, pid, &w->api, NULL, err);
		free(api);
	}
	return rc;
}

void diag_rank_work__exit(struct diag_rank_work *w)
{
	diag_intervals__exit(&w->compute);
	diag_intervals__exit(&w->copies);
	diag_intervals__exit(&w->busy);
	diag_intervals__exit(&w->api);
	free(w->kernel_starts);
}
