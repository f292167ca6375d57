/* diagnose_job.c - `perfkit diagnose` of a job of several ranks
 * (diagnose_run.h): the job's rules on every rank's time and collectives
 * (diag_job.h); the rules of one process on the ranks diag_job__choose
 * picks (every rank of a small job), each as if it were the only process,
 * in its own window, their findings merged. A job of one capture is read
 * from it; a job of many captures from its map and reduce (report/job),
 * which reads a rank's own rows again only for the chosen ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_run.h"
#include "analysis/diagnose/diag_job.h"
#include "analysis/ranks/job_judge.h"
#include "analysis/rules/rules.h"
#include "model/memo.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/threads.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/saturate.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* One rank's own diagnosis. */
struct rank_run {
	const struct rank_time *t;
	struct diag_report *r;
};

/* ---- each chosen rank alone ---------------------------------------------- */

/* The chosen ranks' diagnoses (threads__each's pieces, each with its
 * slot) and, for each thread, the source's arg it reads through. */
struct rank_pool {
	const struct diag_job *j;
	const struct diag_settings *settings;
	const int *chosen;          /* each piece's index in the job's times */
	struct diag_report **out;   /* each piece's diagnosis */
};

struct rank_reader {
	struct rank_pool *pool;
	void *src_arg;
};

static int diagnose_piece(void *arg, int k, struct prof_error *err)
{
	struct rank_reader *r = arg;
	const struct diag_job *j = r->pool->j;

	return j->src.diagnose(r->src_arg, j->times.v[r->pool->chosen[k]].global_pid, r->pool->settings,
			       &r->pool->out[k], err);
}

static void *reader_for_thread(void *arg)
{
	struct rank_reader *first = arg, *r = malloc(sizeof *r);

	if (r) {
		r->pool = first->pool;
		r->src_arg = first->pool->j->src.for_thread(first->src_arg);
	}
	if (r && !r->src_arg) {
		free(r);
		r = NULL;
	}
	return r;
}

static void reader_end_thread(void *thread_arg)
{
	struct rank_reader *r = thread_arg;

	r->pool->j->src.end_thread(r->src_arg);
	free(r);
}

/* The chosen ranks' diagnoses into runs, in rank order, on as many threads
 * as the source and the cores allow (a rank's diagnosis reads its rows
 * alone); the first failure in rank order is the one reported. */
static int run_ranks(const struct diag_job *j, const struct diag_settings *settings, const unsigned *why,
		     struct rank_run *runs, int *n, struct prof_error *err)
{
	int cap = j->times.n ? j->times.n : 1, npieces = 0, rc = 0;
	int *chosen = malloc((size_t)cap * sizeof *chosen);
	struct diag_report **out = calloc((size_t)cap, sizeof *out);
	struct rank_pool pool = { j, settings, chosen, out };
	struct rank_reader first = { &pool, j->src.arg };

	*n = 0;
	if (!chosen || !out)
		rc = nomem(err);
	for (int i = 0; i < j->times.n && rc == 0; i++)
		if (why[i]) {
			chosen[npieces++] = i;
			rc = j->src.prepare ? j->src.prepare(j->src.arg, j->times.v[i].global_pid, err) : 0;
		}
	if (rc == 0)
		rc = threads__each(npieces, j->src.for_thread ? threads__count() : 1, diagnose_piece, &first,
				   j->src.for_thread ? reader_for_thread : NULL, reader_end_thread, NULL, err);
	for (int k = 0; k < npieces; k++) {
		if (rc == 0) {
			runs[*n].r = out[k];
			runs[(*n)++].t = &j->times.v[chosen[k]];
		} else {
			diag_report__delete(out[k]);
		}
	}
	free(chosen);
	free(out);
	return rc;
}

/* ---- the merged report ------------------------------------------------- */

static int rank_name(const struct rank_run *run, char *buf, size_t cap)
{
	return snprintf(buf, cap, "rank %d", run->t->rank);
}

/* Widen w to x's windows (take x's when first). Its span leaves out the
 * most time any rank's window did not record (between capture windows):
 * ranks open their windows together. */
static void add_span(struct sum_window *w, const struct sum_window *x, bool first)
{
	int64_t unrecorded = first ? 0 : prof_span_saturated(w->start_ns, w->end_ns) - w->span_ns;
	int64_t x_unrecorded = prof_span_saturated(x->start_ns, x->end_ns) - x->span_ns;

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
	w->span_ns = prof_span_saturated(w->start_ns, w->end_ns) -
		     (x_unrecorded > unrecorded ? x_unrecorded : unrecorded);
}

/* The job's window: the span of its ranks' windows, named by each (every
 * rank's, whether or not its own rules ran). */
static int merge_windows(struct diag_report *job, const struct diag_job *j, const unsigned *why)
{
	struct sum_window *w = &job->window;
	size_t len = 0;
	bool spanned = false;

	job->ranks = calloc((size_t)(j->times.n ? j->times.n : 1), sizeof *job->ranks);
	if (!job->ranks)
		return PROF_E_NOMEM;
	*w = j->times.v[0].w;
	w->whole_run = true;
	w->mark = SUM_LOOP_NONE;
	w->mark_name[0] = 0;
	len = (size_t)snprintf(w->source, sizeof w->source, "each rank's own loop:");
	for (int i = 0; i < j->times.n; i++) {
		const struct rank_time *t = &j->times.v[i];
		struct diag_rank_window *rw = &job->ranks[job->nranks];

		rw->label = strdup(t->label);
		if (!rw->label)
			return PROF_E_NOMEM;
		job->nranks++;
		rw->rank = t->rank;
		rw->window = t->w;
		rw->gpu_busy_ns = t->busy_ns;
		rw->diagnosed = why[i];
		job->ndiagnosed += why[i] != 0;
		/* a rank with no rows (a damaged capture) has no span to add */
		if (t->w.capture_end_ns > t->w.capture_start_ns)
			add_span(w, &t->w, !spanned);
		spanned |= t->w.capture_end_ns > t->w.capture_start_ns;
		if (t->w.iterations < w->iterations)
			w->iterations = t->w.iterations;
		w->whole_run &= t->w.whole_run;
		if (len < sizeof w->source)
			len += (size_t)snprintf(w->source + len, sizeof w->source - len, "%s rank %d %s",
						i ? "," : "", rw->rank, t->w.source);
		job->gpu_busy_ns = prof_add_saturated(job->gpu_busy_ns, t->busy_ns);
	}
	if (len >= sizeof w->source)
		memcpy(w->source + sizeof w->source - 4, "...", 4);
	/* the job's own rules advise for any bound: the ranks' may differ */
	job->program.bound = -1;
	return 0;
}

/* What the ranks whose own rules ran say of the program and the capture:
 * a job's ranks run one program. */
static void merge_program(struct diag_report *job, const struct rank_run *runs, int n)
{
	for (int i = 0; i < n; i++) {
		const struct diag_report *r = runs[i].r;

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
	}
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

			f->ranks[f->nranks++] = (struct diag_rank_share){ runs[i].t->rank, x->share, x->time_ns };
		}
	if (diag_finding__copy_also(f, rep))
		return PROF_E_NOMEM;
	/* every rank: of the job, not of the ranks its own rules ran on */
	f->every_rank = members == n && n == ctx->job->times.n;
	f->per_rank = true;
	f->share_rank = runs[rep_run].t->rank;
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
					ranks[nr++] = runs[e].t->rank;
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

/* ---- the job ------------------------------------------------------------ */

/* The job's verdict: that of the rank with the longest step, which sets
 * the job's pace; where a rank arrives last at the collectives (a
 * straggler finding) the others wait for it, and the bound is that rank. */
static int job_verdict(struct diag_report *r, const struct rank_run *runs, int n)
{
	const struct diag_verdict *slowest = NULL;

	/* what keeps the late rank late is the straggler's cause: its host
	 * findings become the straggler's evidence */
	for (int i = 0; i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, "straggler") && r->findings[i].severity >= DIAG_MEDIUM &&
		    r->findings[i].nranks == 1) {
			if (diag_report__fold_rank_into(r, i, r->findings[i].ranks[0].rank))
				return PROF_E_NOMEM;
			break;
		}

	for (int i = 0; i < n; i++)
		if (runs[i].r->verdict.valid && (!slowest || runs[i].r->verdict.step_ns > slowest->step_ns))
			slowest = &runs[i].r->verdict;
	if (!slowest)
		return 0;
	r->verdict = *slowest;
	/* each rank's gains are of its own step; the job's step is the
	 * slowest rank's, and what a rank's change gives the job is not known
	 * from its own step: only the straggler's is (the others' wait) */
	r->verdict.all_changes_ns = 0;
	for (int i = 0; i < r->nfindings; i++) {
		struct diag_finding *f = &r->findings[i];

		f->gain_step_ns = 0;
		f->gain_basis = NULL;
		if (!strcmp(f->rule_id, "straggler") && f->severity >= DIAG_MEDIUM)
			r->verdict.bound = BOUND_ANOTHER_RANK;
		if (f->saves_ns > 0 && r->verdict.step_ns > 0) {
			f->gain_step_ns = f->saves_ns < r->verdict.step_ns ? r->verdict.step_ns - f->saves_ns : 1;
			f->gain_basis = "wait:straggler";
		}
	}
	diag_verdict__summarise(&r->verdict);
	return 0;
}

int diag__run_job_of(struct diag_job *j, const struct diag_settings *settings, const char *path,
		     struct prof_store *store, struct diag_report **out, struct prof_error *err)
{
	struct rank_run *runs = calloc((size_t)(j->times.n ? j->times.n : 1), sizeof *runs);
	unsigned *why = calloc((size_t)(j->times.n ? j->times.n : 1), sizeof *why);
	struct diag_context ctx = { .store = store, .settings = settings, .job = j };
	struct diag_report *r = calloc(1, sizeof *r);
	int n = 0, rc;

	*out = NULL;
	if (!runs || !why || !r || !(r->path = strdup(path)) || j->times.n == 0) {
		rc = j->times.n ? nomem(err) : prof_error__set(err, PROF_E_USAGE, "the job has no ranks");
		goto out;
	}
	rc = diag_job__choose(j, why);
	if (rc < 0) {
		rc = nomem(err);
		goto out;
	}
	rc = run_ranks(j, settings, why, runs, &n, err);
	if (rc)
		goto out;
	ctx.report = r;
	ctx.w = &r->window;
	if (merge_windows(r, j, why) || merge_findings(&ctx, runs, n) || merge_skips(&ctx, runs, n)) {
		rc = nomem(err);
		goto out;
	}
	merge_program(r, runs, n);
	/* the job's rules read a rank's API calls through its source
	 * (diag_job__load_work) */
	if (store)
		diag_context__note_tables(&ctx);
	if (rc == 0 && r->gpu_busy_ns > 0)
		rc = diag__run_family(&ctx, diag_rules_ranks, err);
	if (rc == 0 && r->gpu_busy_ns > 0)
		rc = diag__run_family(&ctx, diag_rules_collectives, err);
	if (rc)
		goto out;
	if (job_verdict(r, runs, n)) {
		rc = nomem(err);
		goto out;
	}
	*out = r;
	r = NULL;
out:
	for (int i = 0; i < n; i++)
		diag_report__delete(runs[i].r);
	free(runs);
	free(why);
	diag_report__delete(r);
	return rc;
}

/* ---- a job in one capture ------------------------------------------------- */

struct one_capture {
	struct prof_store *store;
	const struct sum_ranks *ranks;
	char *calls; /* the API calls' source (sum_api_calls), NULL: none */
	/* the ranks' times, each with the window its rules run in */
	const struct rank_times *times;
	/* where each rank's rules leave its idle attribution and critical
	 * path, by rank; NULL: nowhere */
	struct timeline_units *keep;
};

/* A rank's own rules on the capture narrowed to it, then back to what
 * --rank chose, whatever happened. */
static int diagnose_in_store(void *arg, int64_t global_pid, const struct diag_settings *settings,
			     struct diag_report **out, struct prof_error *err)
{
	struct one_capture *one = arg;
	const struct sum_process *p = sum_ranks__process(one->ranks, global_pid);
	struct timeline_unit *x = one->keep && p ? timeline_units__get(one->keep, p->rank) : NULL;
	const struct sum_window *known = NULL;
	struct prof_error ignored = { 0 };
	int rc, urc;

	*out = NULL;
	if (one->keep && !x)
		return nomem(err);
	/* rank_times__load found the rank's window in this scope with these
	 * settings (diag_job__loop_options) */
	for (int i = 0; one->times && i < one->times->n && !known; i++)
		if (one->times->v[i].global_pid == global_pid)
			known = &one->times->v[i].w;
	rc = sum_ranks__scope(one->store, global_pid, err);
	if (rc == 0)
		rc = diag__run_process_in(one->store, settings, known, x, out, err);
	urc = sum_ranks__unscope(one->store, rc ? &ignored : err);
	if (rc == 0 && urc) {
		diag_report__delete(*out);
		*out = NULL;
	}
	return rc ? rc : urc;
}

/* The unit each chosen rank's rules leave their analyses in, made before
 * the ranks run on several threads (it is found then, never added). */
static int prepare_in_store(void *arg, int64_t global_pid, struct prof_error *err)
{
	struct one_capture *one = arg;
	const struct sum_process *p = sum_ranks__process(one->ranks, global_pid);

	return one->keep && p && !timeline_units__get(one->keep, p->rank) ? nomem(err) : 0;
}

/* Another thread's way into the capture: a connection of its own. NULL
 * where the capture cannot be opened again (prof_store__reopen): held in
 * memory, narrowed by --rank or --window, or still being written. */
static void *store_for_thread(void *arg)
{
	struct one_capture *one = arg, *mine = malloc(sizeof *mine);
	struct prof_error ignored = { 0 };

	if (!mine)
		return NULL;
	*mine = *one;
	if (prof_store__reopen(one->store, &mine->store, &ignored) != 0) {
		free(mine);
		return NULL;
	}
	/* for_thread runs on the first thread before it takes a piece, so
	 * one's connection is idle; what is not handed over, this connection
	 * takes again itself */
	(void)sum_memo__share(one->store, mine->store, &ignored);
	return mine;
}

static void store_end_thread(void *thread_arg)
{
	struct one_capture *mine = thread_arg;

	prof_store__close(mine->store);
	free(mine);
}

static int work_in_store(void *arg, int64_t global_pid, int64_t lo, int64_t hi, bool with_api,
			 struct diag_rank_work *w, struct prof_error *err)
{
	struct one_capture *one = arg;

	return diag_rank_work__load(one->store, global_pid, 0, lo, hi, with_api ? one->calls : NULL, w, err);
}

int diag__run_job(struct prof_store *store, const struct diag_settings *settings,
		  const struct sum_ranks *ranks, struct diag_keep *keep, struct diag_report **out,
		  struct prof_error *err)
{
	struct one_capture one = { .store = store, .ranks = ranks, .keep = keep ? &keep->timeline : NULL };
	struct diag_job job = { .src = { diagnose_in_store, work_in_store, &one, prepare_in_store,
					 store_for_thread, store_end_thread } };
	int rc;

	*out = NULL;
	rc = diag_job__load(store, settings, ranks, &job, err);
	one.times = &job.times;
	/* where the straggler's stretches find their API calls */
	if (rc == 0)
		one.calls = sum_api_calls(store, &rc, err);
	if (rc == 0)
		rc = diag__run_job_of(&job, settings, prof_store__path(store), store, out, err);
	/* the ranks' time goes to keep's reader, which shows it too */
	if (rc == 0 && keep) {
		keep->times = job.times;
		keep->have_times = true;
		memset(&job.times, 0, sizeof job.times);
	}
	free(one.calls);
	diag_job__exit(&job);
	return rc;
}
