/* diagnose_job.c - `perfkit diagnose` of a job of several ranks
 * (diagnose_job.h): each rank diagnosed as if it were the only process,
 * in its own window; the findings merged; the job's rules run on the
 * ranks together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_job.h"
#include "analysis/core/gpu_work.h"
#include "analysis/ranks/job_judge.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* One rank's own diagnosis. */
struct rank_run {
	const struct sum_process *p;
	struct diag_report *r;
};

/* ---- each rank alone ---------------------------------------------------- */

static int run_ranks(struct prof_store *s, const struct diag_settings *settings,
		     const struct sum_ranks *ranks, struct rank_run *runs, int *n, struct prof_error *err)
{
	struct prof_error ignored = { 0 };
	int rc = 0, urc;

	*n = 0;
	for (int i = 0; i < ranks->n && rc == 0; i++) {
		const struct sum_process *p = &ranks->p[i];

		if (p->rank < 0 || !p->selected)
			continue;
		rc = sum_ranks__scope(s, p->global_pid, err);
		if (rc == 0)
			rc = diag__run_process(s, settings, &runs[*n].r, err);
		if (rc == 0)
			runs[(*n)++].p = p;
	}
	/* back to what --rank chose, whatever happened */
	urc = sum_ranks__unscope(s, rc ? &ignored : err);
	return rc ? rc : urc;
}

/* ---- the merged report ------------------------------------------------- */

static int rank_name(const struct rank_run *run, char *buf, size_t cap)
{
	return snprintf(buf, cap, "rank %d", run->p->rank);
}

/* Widen w to x's windows (take x's when first). */
static void add_span(struct sum_window *w, const struct sum_window *x, bool first)
{
	if (first || x->start_ns < w->start_ns)
		w->start_ns = x->start_ns;
	if (first || x->end_ns > w->end_ns)
		w->end_ns = x->end_ns;
	if (first || x->host_end_ns > w->host_end_ns)
		w->host_end_ns = x->host_end_ns;
	if (first || x->capture_start_ns < w->capture_start_ns)
		w->capture_start_ns = x->capture_start_ns;
	if (first || x->capture_end_ns > w->capture_end_ns)
		w->capture_end_ns = x->capture_end_ns;
}

/* The job's window: the span of its ranks' windows, named by each. */
static int merge_windows(struct diag_report *job, const struct rank_run *runs, int n)
{
	struct sum_window *w = &job->window;
	size_t len = 0;

	bool spanned = false;

	job->ranks = calloc((size_t)n, sizeof *job->ranks);
	if (!job->ranks)
		return PROF_E_NOMEM;
	*w = runs[0].r->window;
	w->whole_run = true;
	w->mark = SUM_LOOP_NONE;
	w->mark_name[0] = 0;
	len = (size_t)snprintf(w->source, sizeof w->source, "each rank's own loop:");
	for (int i = 0; i < n; i++) {
		const struct diag_report *r = runs[i].r;
		struct diag_rank_window *rw = &job->ranks[job->nranks];
		char label[256];

		sum_process__label(runs[i].p, label, sizeof label);
		rw->label = strdup(label);
		if (!rw->label)
			return PROF_E_NOMEM;
		job->nranks++;
		rw->rank = runs[i].p->rank;
		rw->window = r->window;
		rw->gpu_busy_ns = r->gpu_busy_ns;
		/* a rank with no rows (a damaged capture) has no span to add */
		if (r->window.capture_end_ns > r->window.capture_start_ns)
			add_span(w, &r->window, !spanned);
		spanned |= r->window.capture_end_ns > r->window.capture_start_ns;
		if (r->window.iterations < w->iterations)
			w->iterations = r->window.iterations;
		w->whole_run &= r->window.whole_run;
		if (len < sizeof w->source)
			len += (size_t)snprintf(w->source + len, sizeof w->source - len, "%s rank %d %s",
						i ? "," : "", rw->rank, r->window.source);
		job->has_metrics |= r->has_metrics;
		job->has_peaks |= r->has_peaks;
		job->has_gpu_samples |= r->has_gpu_samples;
		job->replayed |= r->replayed;
		job->pytorch |= r->pytorch;
		for (int f = 0; f < PROG_NFRAMEWORKS; f++)
			job->program.framework[f] |= r->program.framework[f];
		for (int u = 0; u < USE_NPRACTICES; u++)
			job->program.uses[u] |= r->program.uses[u];
		job->program.h2d_copies += r->program.h2d_copies;
		job->program.iterations += r->program.iterations;
		job->program.fp32_gemm_ns = prof_add_saturated(job->program.fp32_gemm_ns, r->program.fp32_gemm_ns);
		/* the job's own rules advise for any bound: the ranks' may differ */
		job->program.bound = -1;
		job->gpu_busy_ns = prof_add_saturated(job->gpu_busy_ns, r->gpu_busy_ns);
	}
	if (len >= sizeof w->source)
		memcpy(w->source + sizeof w->source - 4, "...", 4);
	return 0;
}

/* The k-th finding of a rule and title on run i (k counts from 0), or -1. */
static int nth_finding(const struct diag_report *r, const struct diag_finding *like, int k)
{
	for (int j = 0; j < r->nfindings; j++)
		if (!strcmp(r->findings[j].rule_id, like->rule_id) &&
		    !strcmp(r->findings[j].title, like->title) && k-- == 0)
			return j;
	return -1;
}

/* One finding for the ranks that have it (of[i]: the index of run i's,
 * -1 where it has none): the evidence, offenders and change of the rank
 * with the largest share, and every rank's share. */
static int merge_one(struct diag_context *ctx, const struct rank_run *runs, int n, const int *of)
{
	const struct diag_finding *rep = NULL;
	struct diag_finding *f;
	int rep_run = -1, members = 0;
	char name[32];

	for (int i = 0; i < n; i++) {
		const struct diag_finding *x = of[i] >= 0 ? &runs[i].r->findings[of[i]] : NULL;

		if (!x)
			continue;
		members++;
		if (!rep || x->share > rep->share)
			rep = x, rep_run = i;
	}
	rank_name(&runs[rep_run], name, sizeof name);
	f = diag__add(ctx, rep->rule_id, rep->title, rep->share, rep->time_ns, DIAG_HIGH,
		      diag__fmt("On %s: %s", name, rep->evidence), strdup(rep->change));
	if (!f)
		return PROF_E_NOMEM;
	f->severity = rep->severity; /* as its rule capped it */
	f->ranks = calloc((size_t)members, sizeof *f->ranks);
	if (!f->ranks)
		return PROF_E_NOMEM;
	for (int i = 0; i < n; i++)
		if (of[i] >= 0) {
			const struct diag_finding *x = &runs[i].r->findings[of[i]];

			f->ranks[f->nranks++] = (struct diag_rank_share){ runs[i].p->rank, x->share, x->time_ns };
		}
	if (diag_finding__copy_also(f, rep))
		return PROF_E_NOMEM;
	f->every_rank = members == n;
	f->per_rank = true;
	f->share_rank = runs[rep_run].p->rank;
	for (int t = 0; t < rep->ntop; t++) {
		diag__offender(f, rep->top[t].name, rep->top[t].count, rep->top[t].time_ns, rep->top[t].bytes);
		if (f->ntop <= t)
			return PROF_E_NOMEM;
	}
	return 0;
}

/* Each rule's finding once: merged over the ranks that have it, in the
 * order they first appear (the job's are sorted by share at the end). */
static int merge_findings(struct diag_context *ctx, const struct rank_run *runs, int n)
{
	int *of = malloc(sizeof *of * (size_t)n);
	int rc = of ? 0 : PROF_E_NOMEM;

	for (int i = 0; i < n && rc == 0; i++) {
		const struct diag_report *r = runs[i].r;

		for (int j = 0; j < r->nfindings && rc == 0; j++) {
			const struct diag_finding *x = &r->findings[j];
			int k = 0, seen = 0;

			/* the k-th of its rule on its rank, merged with the k-th on the others */
			for (int e = 0; e < j; e++)
				k += !strcmp(r->findings[e].rule_id, x->rule_id) && !strcmp(r->findings[e].title, x->title);
			for (int e = 0; e < i && !seen; e++)
				seen = nth_finding(runs[e].r, x, k) >= 0;
			if (seen)
				continue;
			for (int e = 0; e < n; e++)
				of[e] = e < i ? -1 : nth_finding(runs[e].r, x, k);
			rc = merge_one(ctx, runs, n, of);
		}
	}
	free(of);
	return rc;
}

/* The skips likewise: a reason every rank gives is said once; another
 * names the ranks it holds for. */
static int merge_skips(struct diag_context *ctx, const struct rank_run *runs, int n)
{
	int *ranks = malloc(sizeof *ranks * (size_t)n);
	int rc = ranks ? 0 : PROF_E_NOMEM;

	for (int i = 0; i < n && rc == 0; i++) {
		const struct diag_report *r = runs[i].r;

		for (int j = 0; j < r->nskips && rc == 0; j++) {
			const struct diag_skip *x = &r->skips[j];
			bool seen = false;
			int nr = 0;

			for (int e = 0; e < n; e++) {
				bool has = false;

				for (int k = 0; k < runs[e].r->nskips && !has; k++)
					has = !strcmp(runs[e].r->skips[k].rule_id, x->rule_id) &&
					      !strcmp(runs[e].r->skips[k].reason, x->reason);
				if (has && e < i)
					seen = true;
				if (has)
					ranks[nr++] = runs[e].p->rank;
			}
			if (seen)
				continue;
			if (nr == n) {
				rc = diag__skip(ctx, x->rule_id, "%s", x->reason);
			} else {
				char list[256];

				job_judge__rank_list(ranks, nr, list, sizeof list);
				rc = diag__skip(ctx, x->rule_id, "on %s: %s", list, x->reason);
			}
		}
	}
	free(ranks);
	return rc;
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

static int load_job(struct prof_store *s, const struct diag_settings *settings, const struct sum_ranks *ranks,
		    struct diag_job *j, struct prof_error *err)
{
	const struct sum_loop_options o = {
		.min_iterations = diag_settings__get(settings, "iterations.min"),
		.coverage = diag_settings__get(settings, "iterations.coverage"),
		.tiling = diag_settings__get(settings, "iterations.tiling"),
		.whole_run = diag_settings__get(settings, "window.whole_run") != 0,
	};
	int rc;

	j->ranks = ranks;
	rc = rank_times__load(s, &o, &j->times, err);
	if (rc == 0)
		rc = nccl_calls__load(s, ranks, &j->calls, err);
	if (rc == 0)
		rc = nccl_collectives__match(&j->calls, &j->cols, err);
	if (rc == 0 && waits(j))
		rc = nomem(err);
	j->link_bytes_per_ns = nccl_link_bytes_per_ns(s);
	j->one_host = same_host(ranks);
	return rc;
}

static void job_exit(struct diag_job *j)
{
	rank_times__exit(&j->times);
	nccl_calls__exit(&j->calls);
	nccl_collectives__exit(&j->cols);
	free(j->wait_ns);
	free(j->last_call);
	free(j->in_window);
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

int diag_job__load_union(struct prof_store *s, const char *sql, int64_t lo, int64_t hi, int64_t pid,
			 struct diag_intervals *u, struct diag_rank_work *starts, struct prof_error *err)
{
	struct prof_cursor *c;
	char *copy = strdup(sql);
	int rc;

	if (!copy)
		return nomem(err);
	rc = range_cursor__open(s, copy, lo, hi, &pid, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);

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

int diag_job__load_work(struct diag_context *ctx, struct diag_rank_work *w, int64_t lo, int64_t hi,
			bool with_api, struct prof_error *err)
{
	static const char kernels[] = "SELECT k.start, k.end FROM " PROF_T_KERNEL " k WHERE k.globalPid = ?3"
				      " AND k.end > ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.")
				      " AND " DIAG_JOB_NOT_NCCL;
	static const char copies[] = "SELECT start, end FROM " PROF_T_MEMCPY " WHERE globalPid = ?3"
				     " AND end > ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("");
	static const char memsets[] = "SELECT start, end FROM " PROF_T_MEMSET " WHERE globalPid = ?3"
				      " AND end > ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("");
	char sql[2048] = "", busy[3072];
	int rc = 0;

	w->loaded = true;
	if (ctx->has_kernel) {
		snprintf(busy, sizeof busy, "%s ORDER BY k.start", kernels);
		rc = diag_job__load_union(ctx->store, busy, lo, hi, w->pid, &w->compute, w, err);
	}
	if (ctx->has_memcpy)
		strcat(sql, copies);
	if (ctx->has_memset)
		strcat(strcat(sql, sql[0] ? " UNION ALL " : ""), memsets);
	if (rc == 0 && sql[0]) {
		char ordered[sizeof sql + 16];

		snprintf(ordered, sizeof ordered, "%s ORDER BY 1", sql);
		rc = diag_job__load_union(ctx->store, ordered, lo, hi, w->pid, &w->copies, NULL, err);
	}
	snprintf(busy, sizeof busy, "SELECT * FROM (%s%s%s) ORDER BY 1", ctx->has_kernel ? kernels : "",
		 ctx->has_kernel && sql[0] ? " UNION ALL " : "", sql);
	if (rc == 0 && (ctx->has_kernel || sql[0]))
		rc = diag_job__load_union(ctx->store, busy, lo, hi, w->pid, &w->busy, NULL, err);
	if (rc == 0 && with_api && ctx->has_api_calls)
		rc = diag_job__load_union(ctx->store, "SELECT start, end FROM " DIAG_API_CALLS
				" WHERE (globalTid >> 24) << 24 = ?3 AND end > ?1 AND start < ?2 ORDER BY start",
				lo, hi, w->pid, &w->api, NULL, err);
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

/* ---- the job ------------------------------------------------------------ */

/* The job's verdict: that of the rank with the longest step, which sets
 * the job's pace; where a rank arrives last at the collectives (a
 * straggler finding) the others wait for it, and the bound is that rank. */
static void job_verdict(struct diag_report *r, const struct rank_run *runs, int n)
{
	const struct diag_verdict *slowest = NULL;

	for (int i = 0; i < n; i++)
		if (runs[i].r->verdict.valid && (!slowest || runs[i].r->verdict.step_ns > slowest->step_ns))
			slowest = &runs[i].r->verdict;
	if (!slowest)
		return;
	r->verdict = *slowest;
	for (int i = 0; i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, "straggler") && r->findings[i].severity >= DIAG_MEDIUM)
			r->verdict.bound = BOUND_ANOTHER_RANK;
	diag_verdict__summarise(&r->verdict);
}

int diag__run_job(struct prof_store *store, const struct diag_settings *settings,
		  const struct sum_ranks *ranks, struct diag_report **out, struct prof_error *err)
{
	struct rank_run *runs = calloc((size_t)ranks->n, sizeof *runs);
	struct diag_job job = { 0 };
	struct diag_context ctx = { .store = store, .settings = settings, .job = &job };
	struct diag_report *r = calloc(1, sizeof *r);
	int n = 0, rc;

	*out = NULL;
	if (!runs || !r || !(r->path = strdup(prof_store__path(store)))) {
		rc = nomem(err);
		goto out;
	}
	rc = run_ranks(store, settings, ranks, runs, &n, err);
	if (rc)
		goto out;
	ctx.report = r;
	ctx.w = &r->window;
	ctx.has_kernel = prof_store__has_table(store, PROF_T_KERNEL);
	ctx.has_memcpy = prof_store__has_table(store, PROF_T_MEMCPY);
	ctx.has_memset = prof_store__has_table(store, PROF_T_MEMSET);
	ctx.has_sync_table = prof_store__has_table(store, PROF_T_SYNC);
	ctx.has_memory_events = prof_store__has_table(store, PROF_T_MEMORY);
	if (merge_windows(r, runs, n) || merge_findings(&ctx, runs, n) || merge_skips(&ctx, runs, n)) {
		rc = nomem(err);
		goto out;
	}
	rc = diag__api_view(&ctx, err);
	if (rc == 0)
		rc = load_job(store, settings, ranks, &job, err);
	if (rc == 0 && r->gpu_busy_ns > 0)
		rc = diag__run_family(&ctx, diag_rules_ranks, err);
	if (rc == 0 && r->gpu_busy_ns > 0)
		rc = diag__run_family(&ctx, diag_rules_collectives, err);
	if (rc)
		goto out;
	job_verdict(r, runs, n);
	*out = r;
	r = NULL;
out:
	for (int i = 0; i < n; i++)
		diag_report__delete(runs[i].r);
	free(runs);
	job_exit(&job);
	diag_report__delete(r);
	return rc;
}
