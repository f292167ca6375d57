/* rules_ranks.c - the rules of a job of several ranks (diagnose_job.h):
 * a straggler that the others wait for at the collectives, compute that
 * differs across ranks, communication not overlapped with compute, many
 * small (latency-bound) collectives, collectives below the link's
 * bandwidth. They run only on jobs, after the rules of one process have
 * run on each rank; their decisions are job_judge.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_job.h"
#include "gpu_work.h"
#include "job_judge.h"

#define NO_NCCL "the job has no NCCL collectives (no NCCL kernels)"
#define NO_SIZES                                                                                  \
	"no message sizes: NCCL's NVTX payloads were not captured (NCCL before 2.23, or NVTX not " \
	"traced)"
/* ranks listed one by one up to this many; more are summed up */
#define LIST_RANKS 8

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* The index of a process among the job's ranks (times.v); -1: none. */
static int rank_index(const struct diag_job *j, int64_t global_pid)
{
	for (int i = 0; i < j->times.n; i++)
		if (j->times.v[i].global_pid == global_pid)
			return i;
	return -1;
}

static double steps_of(const struct rank_time *t)
{
	return t->nsteps > 0 ? (double)t->nsteps : 1.0;
}

static double share_of(const struct rank_time *t, int64_t ns)
{
	double s = t->window_ns > 0 ? (double)ns / (double)t->window_ns : 0;

	return s < 0 ? 0 : s > 1 ? 1 : s;
}

/* Attach the ranks a job's finding is on: v[i] for each i with on[i]. */
static int set_ranks(struct diag_finding *f, const struct diag_job *j, const bool *on, const int64_t *ns,
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
								  share_of(&j->times.v[i], ns[i]), ns[i] };
	f->nranks = n;
	f->every_rank = n == j->times.n;
	f->share_rank = share_rank;
	return 0;
}

/* "rank 0 1.750 s (95.8%), rank 1 1.543 s (84.5%)" for the ranks on[],
 * or, past LIST_RANKS of them, the least and the most. */
static void rank_amounts(const struct diag_job *j, const bool *on, const double *v, bool as_time,
			 char *buf, size_t cap)
{
	size_t len = 0;
	int n = 0, lo = -1, hi = -1;
	char b[32];

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
	for (int i = 0; i < j->times.n && n <= LIST_RANKS && len < cap; i++)
		if (on[i])
			len += (size_t)snprintf(buf + len, cap - len, "%srank %d %s", len ? ", " : "",
						j->times.v[i].rank,
						as_time ? diag__ns(b, sizeof b, (int64_t)v[i])
							: (snprintf(b, sizeof b, "%.1f%%", 100 * v[i]), b));
	if (n > LIST_RANKS) {
		char b2[32];

		snprintf(buf, cap, "from %s (rank %d) to %s (rank %d)",
			 as_time ? diag__ns(b, sizeof b, (int64_t)v[lo]) : (snprintf(b, sizeof b, "%.1f%%", 100 * v[lo]), b),
			 j->times.v[lo].rank,
			 as_time ? diag__ns(b2, sizeof b2, (int64_t)v[hi]) : (snprintf(b2, sizeof b2, "%.1f%%", 100 * v[hi]), b2),
			 j->times.v[hi].rank);
	}
}

/* ---- a rank's work before a collective ------------------------------------ */

/* A rank's GPU work and host calls over the job's windows, as unions. */
struct rank_work {
	int64_t pid;
	bool loaded;
	struct diag_intervals compute, copies, busy, api;
	int64_t *kernel_starts;
	int nkernels, cap_kernels;
};

#define NOT_NCCL "(" NCCL_KERNEL_SQL("k") ") IS NOT 1"

/* The union of the (start, end) rows of sql (ordered by start; ?1..?3 the
 * span and the process); kernel starts into w when starts is set. */
static int load_union(struct prof_store *s, const char *sql, int64_t lo, int64_t hi, int64_t pid,
		      struct diag_intervals *u, struct rank_work *starts, struct prof_error *err)
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

static int load_work(struct diag_context *ctx, struct rank_work *w, int64_t lo, int64_t hi,
		     struct prof_error *err)
{
	static const char kernels[] = "SELECT k.start, k.end FROM " PROF_T_KERNEL " k WHERE k.globalPid = ?3"
				      " AND k.end > ?1 AND k.start < ?2 AND " NOT_NCCL;
	static const char copies[] = "SELECT start, end FROM " PROF_T_MEMCPY " WHERE globalPid = ?3"
				     " AND end > ?1 AND start < ?2";
	static const char memsets[] = "SELECT start, end FROM " PROF_T_MEMSET " WHERE globalPid = ?3"
				      " AND end > ?1 AND start < ?2";
	char sql[2048] = "", busy[3072];
	int rc = 0;

	w->loaded = true;
	if (ctx->has_kernel) {
		snprintf(busy, sizeof busy, "%s ORDER BY k.start", kernels);
		rc = load_union(ctx->store, busy, lo, hi, w->pid, &w->compute, w, err);
	}
	if (ctx->has_memcpy)
		strcat(sql, copies);
	if (ctx->has_memset)
		strcat(strcat(sql, sql[0] ? " UNION ALL " : ""), memsets);
	if (rc == 0 && sql[0]) {
		char ordered[sizeof sql + 16];

		snprintf(ordered, sizeof ordered, "%s ORDER BY 1", sql);
		rc = load_union(ctx->store, ordered, lo, hi, w->pid, &w->copies, NULL, err);
	}
	snprintf(busy, sizeof busy, "SELECT * FROM (%s%s%s) ORDER BY 1", ctx->has_kernel ? kernels : "",
		 ctx->has_kernel && sql[0] ? " UNION ALL " : "", sql);
	if (rc == 0 && (ctx->has_kernel || sql[0]))
		rc = load_union(ctx->store, busy, lo, hi, w->pid, &w->busy, NULL, err);
	if (rc == 0 && ctx->has_api_calls)
		rc = load_union(ctx->store, "SELECT start, end FROM " DIAG_API_CALLS
				" WHERE (globalTid >> 24) << 24 = ?3 AND end > ?1 AND start < ?2 ORDER BY start",
				lo, hi, w->pid, &w->api, NULL, err);
	return rc;
}

static void work_exit(struct rank_work *w)
{
	diag_intervals__exit(&w->compute);
	diag_intervals__exit(&w->copies);
	diag_intervals__exit(&w->busy);
	diag_intervals__exit(&w->api);
	free(w->kernel_starts);
}

/* Where [a, b) went on a rank, added to g. */
static void split_gap(const struct rank_work *w, int64_t a, int64_t b, struct job_gap *g)
{
	int64_t t = a, host = 0, calls = 0;
	int i = diag_intervals__first_ending_after(&w->busy, a), lo = 0, hi = w->nkernels;

	g->gap_ns += (double)(b - a);
	g->compute_ns += (double)diag_intervals__covered(&w->compute, a, b);
	g->copies_ns += (double)diag_intervals__covered(&w->copies, a, b);
	/* the GPU's idle stretches, each split by the host's calls */
	for (;; i++) {
		int64_t idle_end = i < w->busy.n && w->busy.v[i].start_ns < b ? w->busy.v[i].start_ns : b;

		if (idle_end > t) {
			int64_t in_calls = diag_intervals__covered(&w->api, t, idle_end);

			calls += in_calls;
			host += idle_end - t - in_calls;
		}
		if (i >= w->busy.n || w->busy.v[i].start_ns >= b)
			break;
		if (w->busy.v[i].end_ns > t)
			t = w->busy.v[i].end_ns;
	}
	g->host_ns += (double)host;
	g->calls_ns += (double)calls;
	/* the kernels starting in it */
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (w->kernel_starts[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int k = lo; k < w->nkernels && w->kernel_starts[k] < b; k++)
		g->kernels += 1;
}

/* The stretch from the end of call k's process's previous NCCL kernel
 * to k's start; false when there is none. */
static bool gap_before(const struct diag_job *j, int k, int64_t *a, int64_t *b)
{
	const struct nccl_call *call = &j->calls.v[k], *prev = k > 0 ? &j->calls.v[k - 1] : NULL;

	if (!prev || prev->global_pid != call->global_pid || prev->end_ns >= call->start_ns)
		return false;
	*a = prev->end_ns;
	*b = call->start_ns;
	return true;
}

/* ---- straggler ------------------------------------------------------------ */

/* The mean wait of a collective's calls but the last arrival's. */
static int64_t mean_wait(const struct diag_job *j, int c)
{
	const struct nccl_collective *col = &j->cols.v[c];
	int64_t sum = 0;

	for (int i = 0; i < col->ncalls; i++)
		if (col->calls[i] != j->last_call[c])
			sum = sum_add_saturated(sum, j->wait_ns[col->calls[i]]);
	return col->ncalls > 1 ? sum / (col->ncalls - 1) : 0;
}

/* The straggler's collectives: what the others waited for it, per rank,
 * and where the time before its late ones went, against the rank that
 * waited most at each. */
struct straggler {
	int s;                       /* index of the straggler */
	int64_t margin_ns, step_ns;
	int64_t last_at, late, all_in_window; /* collectives: it arrived last, by the margin, all */
	int64_t *waited;             /* per rank: its waits at every collective s arrived last at */
	int64_t *late_waited;        /* per rank: its waits at the late ones */
	int64_t max_wait_ns, waiting_for_others_ns;
	struct job_gap gs, gw;       /* sums over the collectives with a gap on both */
	int ngaps;
	int waiter;                  /* the rank index that waited most at each, -1 when it varies */
	struct diag_tally kinds;     /* by collective kind and size: count, others' mean wait */
};

static int straggler_gaps(struct diag_context *ctx, struct straggler *st, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	struct rank_work *work = calloc((size_t)j->times.n, sizeof *work);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int rc = 0;

	if (!work)
		return nomem(err);
	for (int i = 0; i < j->times.n; i++) {
		work[i].pid = j->times.v[i].global_pid;
		if (j->times.v[i].w.start_ns < lo)
			lo = j->times.v[i].w.start_ns;
		if (j->times.v[i].w.end_ns > hi)
			hi = j->times.v[i].w.end_ns;
	}
	st->waiter = -2;
	for (int c = 0; c < j->cols.n && rc == 0; c++) {
		const struct nccl_collective *col = &j->cols.v[c];
		int last = j->last_call[c], first = -1, wi, si = st->s;
		int64_t a, b, a2, b2;

		if (!j->in_window[c] || last < 0 || rank_index(j, j->calls.v[last].global_pid) != si ||
		    mean_wait(j, c) < st->margin_ns)
			continue;
		for (int i = 0; i < col->ncalls; i++)
			if (first < 0 || j->wait_ns[col->calls[i]] > j->wait_ns[first])
				first = col->calls[i];
		wi = rank_index(j, j->calls.v[first].global_pid);
		if (wi < 0 || !gap_before(j, last, &a, &b) || !gap_before(j, first, &a2, &b2))
			continue;
		if (!work[si].loaded)
			rc = load_work(ctx, &work[si], lo, hi, err);
		if (rc == 0 && !work[wi].loaded)
			rc = load_work(ctx, &work[wi], lo, hi, err);
		if (rc)
			break;
		split_gap(&work[si], a, b, &st->gs);
		split_gap(&work[wi], a2, b2, &st->gw);
		st->ngaps++;
		st->waiter = st->waiter == -2 || st->waiter == wi ? wi : -1;
	}
	for (int i = 0; i < j->times.n; i++)
		work_exit(&work[i]);
	free(work);
	if (st->ngaps > 0) {
		double n = st->ngaps;
		struct job_gap *g[2] = { &st->gs, &st->gw };

		for (int k = 0; k < 2; k++) {
			g[k]->gap_ns /= n;
			g[k]->compute_ns /= n;
			g[k]->copies_ns /= n;
			g[k]->host_ns /= n;
			g[k]->calls_ns /= n;
			g[k]->kernels /= n;
		}
	}
	return rc;
}

/* What the straggler should change, by what it did more. */
static char *straggler_change(const struct diag_context *ctx, enum job_cause cause, int rank)
{
	switch (cause) {
	case JOB_CAUSE_HOST:
		return diag__with_pytorch(ctx,
			diag__fmt("Find what rank %d's host does before the collective that the other ranks' "
				  "do not (NVTX ranges around the suspects, or a CPU profiler such as py-spy or "
				  "perf on that rank's process): logging, metrics, checkpointing or evaluation "
				  "on one rank, data loading or preprocessing on the main thread, a branch "
				  "taken on that rank only. Take it out of the step, spread it over every "
				  "rank, or run it on another thread while the GPU works.", rank),
			"In PyTorch: load and augment in DataLoader workers (num_workers=N, "
			"pin_memory=True, persistent_workers=True); keep one rank's logging, metrics "
			"(.item()) and checkpoints out of the training step or make them asynchronous "
			"(torch.distributed.checkpoint.async_save), and no `if rank == ...` work inside it.");
	case JOB_CAUSE_MORE_GPU:
		return diag__with_pytorch(ctx,
			diag__fmt("Rank %d's GPU has more to compute before the collective: give every rank "
				  "an equal share of the work (the same samples and tokens per step), and take "
				  "work that only it does out of the step.", rank),
			"In PyTorch: DistributedSampler with equal batch sizes (drop_last=True); for "
			"variable-length inputs, bucket or pack sequences so that every rank gets the "
			"same tokens per step.");
	case JOB_CAUSE_SLOW_GPU:
		return diag__fmt("The same kernels run longer on rank %d's GPU: check that nothing else "
				 "runs on it (nvidia-smi), its clocks and throttling (nvidia-smi -q -d "
				 "PERFORMANCE,CLOCK), that it is the model the other ranks have, and that its "
				 "inputs are as large as theirs (an uneven shard).", rank);
	case JOB_CAUSE_COPIES:
		return diag__with_pytorch(ctx,
			diag__fmt("Rank %d copies between host and device longer before the collective: "
				  "pin its host buffers, copy asynchronously ahead of use on a stream of their "
				  "own, and check that it does not move more data than the others.", rank),
			"In PyTorch: DataLoader(..., pin_memory=True) and .to(\"cuda\", "
			"non_blocking=True), prefetching the next batch on a torch.cuda.Stream.");
	case JOB_CAUSE_CALLS:
		return diag__fmt("Rank %d's host sits in CUDA calls (synchronisation, allocation, "
				 "launches) while its GPU waits before the collective: see its own findings "
				 "(`perfkit diagnose --rank=%d`: sync_api, alloc_churn, launch_bound).", rank, rank);
	default:
		return diag__fmt("Rank %d did no more work than the others between two collectives: it "
				 "left the previous one late or its GPU started late; `perfkit diagnose "
				 "--rank=%d` shows the critical path of its step.", rank, rank);
	}
}

static const char *cause_words(enum job_cause cause)
{
	switch (cause) {
	case JOB_CAUSE_HOST:
		return "host work outside CUDA calls while its GPU sat idle";
	case JOB_CAUSE_MORE_GPU:
		return "more GPU work (more kernels)";
	case JOB_CAUSE_SLOW_GPU:
		return "longer GPU work (as many kernels, each longer)";
	case JOB_CAUSE_COPIES:
		return "longer copies";
	case JOB_CAUSE_CALLS:
		return "time in CUDA calls while its GPU sat idle";
	default:
		return "";
	}
}


/* What the straggler did before its late collectives, against the rank
 * that waited, into buf. */
static void straggler_before(const struct diag_job *j, const struct straggler *st, enum job_cause cause,
			     double extra, char *buf, size_t cap)
{
	const struct job_gap *s = &st->gs, *w = &st->gw;
	char who[48], b[10][32];
	size_t len;

	buf[0] = 0;
	if (st->ngaps == 0)
		return;
	if (st->waiter >= 0)
		snprintf(who, sizeof who, "rank %d", j->times.v[st->waiter].rank);
	else
		snprintf(who, sizeof who, "the rank that waited most at each");
	len = (size_t)snprintf(
		buf, cap,
		" Before them (from the end of its previous collective to its kernel's start), rank %d "
		"took %s on average against %s for %s: its host worked outside CUDA calls while its GPU "
		"sat idle %s (%s), its GPU ran %.1f kernels for %s (%.1f for %s), copies took %s (%s), "
		"and CUDA calls kept its GPU idle %s (%s).",
		j->times.v[st->s].rank, diag__ns(b[0], 32, (int64_t)s->gap_ns),
		diag__ns(b[1], 32, (int64_t)w->gap_ns), who, diag__ns(b[2], 32, (int64_t)s->host_ns),
		diag__ns(b[3], 32, (int64_t)w->host_ns), s->kernels, diag__ns(b[4], 32, (int64_t)s->compute_ns),
		w->kernels, diag__ns(b[5], 32, (int64_t)w->compute_ns), diag__ns(b[6], 32, (int64_t)s->copies_ns),
		diag__ns(b[7], 32, (int64_t)w->copies_ns), diag__ns(b[8], 32, (int64_t)s->calls_ns),
		diag__ns(b[9], 32, (int64_t)w->calls_ns));
	if (len >= cap)
		return;
	if (cause == JOB_CAUSE_NONE)
		snprintf(buf + len, cap - len, " It did no more than the others there.");
	else
		snprintf(buf + len, cap - len, " What it did more: %s, %s per late collective, %.0f%% of the "
			 "median step.", cause_words(cause), diag__ns(b[0], 32, (int64_t)extra),
			 st->step_ns > 0 ? 100.0 * extra / (double)st->step_ns : 0.0);
}

static int straggler_finding(struct diag_context *ctx, struct straggler *st, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	const struct rank_time *s = &j->times.v[st->s];
	bool *on = calloc((size_t)j->times.n, sizeof *on);
	double *per_step = calloc((size_t)j->times.n, sizeof *per_step);
	int64_t *ns = calloc((size_t)j->times.n, sizeof *ns);
	char list[1024], waits[1280], before[1536], others[64] = "no other rank was late by that much";
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	enum job_cause cause;
	struct diag_finding *f;
	double extra = 0;
	int most = -1, waiting = 0, rc;

	if (!on || !per_step || !ns) {
		free(on), free(per_step), free(ns);
		return nomem(err);
	}
	for (int i = 0; i < j->times.n; i++) {
		on[i] = i != st->s && st->waited[i] > 0;
		per_step[i] = (double)st->waited[i] / steps_of(&j->times.v[i]);
		if (on[i] && (most < 0 || st->waited[i] > st->waited[most]))
			most = i;
	}
	if (most < 0) {
		free(on), free(per_step), free(ns);
		return 0;
	}
	for (int i = 0; i < j->times.n; i++)
		waiting += on[i];
	if (waiting > 1) {
		rank_amounts(j, on, per_step, true, list, sizeof list);
		snprintf(waits, sizeof waits, "The others waited for it, per step: %s; the most, rank %d,",
			 list, j->times.v[most].rank);
	} else {
		snprintf(waits, sizeof waits, "Rank %d waited for it", j->times.v[most].rank);
	}
	if (st->waiting_for_others_ns > 0)
		snprintf(others, sizeof others, "other ranks were, %s in all",
			 diag__ns(b1, sizeof b1, st->waiting_for_others_ns));
	cause = job_judge__cause(&st->gs, &st->gw, &extra);
	straggler_before(j, st, cause, extra, before, sizeof before);
	f = diag__add(ctx, "straggler", "One rank arrives last at the collectives (a straggler)",
		      share_of(&j->times.v[most], st->waited[most]), st->waited[most], DIAG_HIGH,
		      diag__fmt("Rank %d arrived last at %lld of the %lld collectives in the window, %lld times "
				"by more than %s (%.0f%% of the median step, %s); %s. %s %s per step (%.1f%% of "
				"its median step), %s in all, %s of it at the %lld late collectives, up to %s at "
				"one.%s",
				s->rank, (long long)st->last_at, (long long)st->all_in_window, (long long)st->late,
				diag__ns(b2, sizeof b2, st->margin_ns), 100 * diag__get(ctx, "straggler.min_wait_share"),
				diag__ns(b3, sizeof b3, st->step_ns), others, waits,
				diag__ns(b1, sizeof b1, (int64_t)per_step[most]),
				j->times.v[most].step_med_ns > 0
					? 100.0 * per_step[most] / (double)j->times.v[most].step_med_ns
					: 100.0 * share_of(&j->times.v[most], st->waited[most]),
				diag__ns(b4, sizeof b4, st->waited[most]),
				diag__ns(b5, sizeof b5, st->late_waited[most]), (long long)st->late,
				diag__ns(b6, sizeof b6, st->max_wait_ns), before),
		      straggler_change(ctx, cause, s->rank));
	memset(on, 0, sizeof *on * (size_t)j->times.n);
	on[st->s] = true;
	ns[st->s] = st->waited[most];
	rc = set_ranks(f, j, on, ns, j->times.v[most].rank);
	if (rc == 0)
		diag_tally__offenders(&st->kinds, f);
	free(on), free(per_step), free(ns);
	return rc ? nomem(err) : 0;
}

static int rule_straggler(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	struct straggler st = { .s = -1 };
	struct job_lateness *late;
	int rc = 0;

	if (j->cols.n == 0)
		return diag__skip(ctx, "straggler", NO_NCCL) ? nomem(err) : 0;
	st.step_ns = diag_job__step_ns(j);
	if (st.step_ns <= 0)
		return diag__skip(ctx, "straggler", "no rank has a repeating step (each window is its whole "
				  "capture): the waits at collectives have no step to be weighed against")
			       ? nomem(err) : 0;
	st.margin_ns = (int64_t)(diag__get(ctx, "straggler.min_wait_share") * (double)st.step_ns);
	late = calloc((size_t)j->times.n, sizeof *late);
	st.waited = calloc((size_t)j->times.n, sizeof *st.waited);
	st.late_waited = calloc((size_t)j->times.n, sizeof *st.late_waited);
	if (!late || !st.waited || !st.late_waited) {
		rc = nomem(err);
		goto out;
	}
	for (int c = 0; c < j->cols.n; c++) {
		int64_t w;
		int li;

		if (!j->in_window[c] || j->last_call[c] < 0)
			continue;
		st.all_in_window++;
		w = mean_wait(j, c);
		li = rank_index(j, j->calls.v[j->last_call[c]].global_pid);
		if (li < 0 || w <= 0 || w < st.margin_ns)
			continue;
		late[li].late_count++;
		late[li].late_wait_ns = sum_add_saturated(late[li].late_wait_ns, w);
	}
	st.s = job_judge__straggler(late, j->times.n, (int64_t)diag__get(ctx, "straggler.min_late_collectives"),
				    diag__get(ctx, "straggler.min_late_fraction"));
	if (st.s < 0)
		goto out;
	for (int c = 0; c < j->cols.n; c++) {
		const struct nccl_collective *col = &j->cols.v[c];
		int64_t w;
		int li;

		if (!j->in_window[c] || j->last_call[c] < 0)
			continue;
		w = mean_wait(j, c);
		li = rank_index(j, j->calls.v[j->last_call[c]].global_pid);
		if (li != st.s) {
			if (w > 0 && w >= st.margin_ns)
				st.waiting_for_others_ns = sum_add_saturated(st.waiting_for_others_ns, w);
			continue;
		}
		/* every wait for it counts; the margin only tells the late ones */
		st.last_at++;
		st.late += w > 0 && w >= st.margin_ns;
		for (int i = 0; i < col->ncalls; i++) {
			int k = col->calls[i], ri = rank_index(j, j->calls.v[k].global_pid);

			if (ri < 0)
				continue;
			st.waited[ri] = sum_add_saturated(st.waited[ri], j->wait_ns[k]);
			if (w > 0 && w >= st.margin_ns)
				st.late_waited[ri] = sum_add_saturated(st.late_waited[ri], j->wait_ns[k]);
			if (j->wait_ns[k] > st.max_wait_ns)
				st.max_wait_ns = j->wait_ns[k];
		}
		if (w > 0) {
			char key[96], b[32];
			struct diag_tally_entry *e;

			snprintf(key, sizeof key, "%s of %s: the others waited", nccl_kind__name(col->kind),
				 col->bytes >= 0 ? diag__bytes(b, sizeof b, (double)col->bytes) : "unknown size");
			e = diag_tally__get(&st.kinds, key);
			if (!e) {
				rc = nomem(err);
				goto out;
			}
			e->count++;
			e->time_ns = sum_add_saturated(e->time_ns, w);
			e->bytes = col->bytes >= 0 ? sum_add_saturated(e->bytes, col->bytes) : -1;
		}
	}
	diag_tally__sort_by_time(&st.kinds);
	rc = straggler_gaps(ctx, &st, err);
	if (rc == 0)
		rc = straggler_finding(ctx, &st, err);
out:
	free(late);
	free(st.waited);
	free(st.late_waited);
	diag_tally__exit(&st.kinds);
	return rc;
}

/* ---- rank imbalance --------------------------------------------------------- */

static int rule_imbalance(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	int n = j->times.n, with_steps = 0, hi, lo, rc = 0;
	double *v = calloc((size_t)(n ? n : 1), sizeof *v), *kernels = calloc((size_t)(n ? n : 1), sizeof *kernels);
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on), per_step;
	int64_t *ns = calloc((size_t)(n ? n : 1), sizeof *ns);
	char list[1024], klist[1024], b1[32];
	double diff, mean = 0;
	struct diag_finding *f;

	if (!v || !kernels || !on || !ns) {
		rc = nomem(err);
		goto out;
	}
	for (int i = 0; i < n; i++)
		with_steps += j->times.v[i].nsteps > 0;
	if (with_steps != 0 && with_steps != n) {
		rc = diag__skip(ctx, "rank_imbalance", "some ranks have a repeating step and some do not: "
				"their compute per step cannot be compared") ? nomem(err) : 0;
		goto out;
	}
	/* per step, or over each whole capture where no rank has a loop */
	per_step = with_steps == n;
	for (int i = 0; i < n; i++) {
		const struct rank_time *t = &j->times.v[i];

		v[i] = (double)t->compute_ns / (per_step ? steps_of(t) : 1.0);
		kernels[i] = (double)t->kernels / (per_step ? steps_of(t) : 1.0);
		mean += v[i] / n;
		on[i] = true;
	}
	diff = job_judge__imbalance(v, n, &hi, &lo);
	if (hi < 0 || diff < diag__get(ctx, "imbalance.min_difference"))
		goto out;
	rank_amounts(j, on, v, true, list, sizeof list);
	{
		size_t len = 0;

		klist[0] = 0;
		for (int i = 0; i < n && len < sizeof klist; i++)
			if (n <= LIST_RANKS || i == hi || i == lo)
				len += (size_t)snprintf(klist + len, sizeof klist - len, "%srank %d %.1f",
							len ? ", " : "", j->times.v[i].rank, kernels[i]);
	}
	{
		const struct rank_time *slow = &j->times.v[hi];
		int64_t time = (int64_t)((v[hi] - mean) * (per_step ? steps_of(slow) : 1.0));
		bool more_work = kernels[hi] > 1.1 * kernels[lo];

		for (int i = 0; i < n; i++) {
			double excess = (v[i] - mean) * (per_step ? steps_of(&j->times.v[i]) : 1.0);

			on[i] = excess > 0;
			ns[i] = excess > 0 ? (int64_t)excess : 0;
		}
		f = diag__add(
			ctx, "rank_imbalance", "Compute differs across ranks (rank imbalance)",
			share_of(slow, time), time, DIAG_HIGH,
			diag__fmt("Compute (kernels other than NCCL's, copies and memsets, as a union) %s: %s. "
				  "Rank %d computes %.0f%% longer than rank %d, %s %s than the mean: the others "
				  "wait that long at the next collective. Kernels %s: %s: %s.",
				  per_step ? "per step" : "over each rank's capture", list, slow->rank, 100 * diff / (1 - diff),
				  j->times.v[lo].rank, diag__ns(b1, sizeof b1, (int64_t)(v[hi] - mean)),
				  per_step ? "per step more" : "more", per_step ? "per step" : "in all", klist,
				  more_work ? "the slowest rank runs more kernels, so it has more work"
					    : "as many kernels on each, so the same work runs longer on the slowest"),
			more_work
				? diag__with_pytorch(ctx,
					diag__fmt("Give every rank an equal share of the work: the same samples, "
						  "tokens or tiles per step, and no work that only some ranks do "
						  "inside the step (metrics, logging, evaluation)."),
					"In PyTorch: DistributedSampler with equal batch sizes (drop_last=True); for "
					"variable-length inputs, bucket or pack sequences so every rank gets the same "
					"tokens per step; keep rank-0-only evaluation and logging out of the step.")
				: diag__fmt("The same kernels take longer on rank %d's GPU: check that nothing "
					    "else runs on it (nvidia-smi), its clocks and throttling (nvidia-smi -q -d "
					    "PERFORMANCE,CLOCK), that it is the model the other ranks have, and that "
					    "its inputs are as large as theirs (an uneven shard of equal count).",
					    slow->rank));
		rc = set_ranks(f, j, on, ns, slow->rank) ? nomem(err) : 0;
	}
out:
	free(v);
	free(kernels);
	free(on);
	free(ns);
	return rc;
}

/* ---- exposed communication -------------------------------------------------- */

static int rule_exposed(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	int n = j->times.n, rep = -1, rc = 0;
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on), hide;
	double *share = calloc((size_t)(n ? n : 1), sizeof *share);
	int64_t *ns = calloc((size_t)(n ? n : 1), sizeof *ns), *waited = calloc((size_t)(n ? n : 1), sizeof *waited);
	double min_share = diag__get(ctx, "exposed_comm.min_share");
	char list[1024], b[6][32];
	const struct rank_time *t;
	struct diag_finding *f;
	double steps;

	if (!on || !share || !ns || !waited) {
		rc = nomem(err);
		goto out;
	}
	if (j->cols.n == 0) {
		rc = diag__skip(ctx, "exposed_communication", NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		share[i] = share_of(&j->times.v[i], j->times.v[i].exposed_ns);
		ns[i] = j->times.v[i].exposed_ns;
		on[i] = share[i] >= min_share && ns[i] > 0;
		if (on[i] && (rep < 0 || share[i] > share[rep]))
			rep = i;
	}
	if (rep < 0)
		goto out;
	/* the time each rank's calls waited for a later rank, in its window */
	for (int c = 0; c < j->cols.n; c++) {
		const struct nccl_collective *col = &j->cols.v[c];

		for (int i = 0; j->in_window[c] && i < col->ncalls; i++) {
			int k = col->calls[i], ri = rank_index(j, j->calls.v[k].global_pid);

			if (ri >= 0 && j->wait_ns[k] > 0)
				waited[ri] = sum_add_saturated(waited[ri], j->wait_ns[k]);
		}
	}
	rank_amounts(j, on, share, false, list, sizeof list);
	t = &j->times.v[rep];
	steps = steps_of(t);
	hide = job_judge__overlap_can_hide(t->exposed_ns, t->compute_ns, t->hidden_ns);
	f = diag__add(
		ctx, "exposed_communication", "Communication not overlapped with compute", share[rep],
		t->exposed_ns, DIAG_HIGH,
		diag__fmt("NCCL's kernels run with no compute beside them for this share of each rank's "
			  "window: %s. On rank %d, per step: communication %s, %s of it under compute; "
			  "compute (kernels, copies, memsets) %s, %s of it with no communication beside it%s; "
			  "of the communication, %s is waiting for later ranks at the collectives, the rest "
			  "the transfers.",
			  list, t->rank, diag__ns(b[0], 32, (int64_t)(t->comm_ns / steps)),
			  diag__ns(b[1], 32, (int64_t)(t->hidden_ns / steps)),
			  diag__ns(b[2], 32, (int64_t)(t->compute_ns / steps)),
			  diag__ns(b[3], 32, (int64_t)((t->compute_ns - t->hidden_ns) / steps)),
			  hide ? ": overlap can hide the exposed communication under it"
			       : ", far less than the exposed communication: no overlap can hide it",
			  diag__ns(b[4], 32, (int64_t)(waited[rep] / steps))),
		hide ? diag__with_pytorch(ctx,
			       diag__fmt("Overlap communication with compute: start each piece of "
					 "communication as soon as its data is ready (gradients in buckets, "
					 "reduced while the backward pass goes on), on a stream of its own, so "
					 "that compute kernels run while NCCL transfers."),
			       "In PyTorch: DistributedDataParallel all-reduces each gradient bucket "
			       "while the backward pass goes on: tune bucket_cap_mb (default 25; smaller "
			       "buckets start communicating earlier, larger ones cost fewer calls), keep "
			       "gradient_as_bucket_view=True, and with FSDP use backward_prefetch and "
			       "forward_prefetch.")
		     : diag__with_pytorch(ctx,
			       diag__fmt("Communication outlasts the compute it could hide under: move "
					 "fewer bytes (16-bit gradients, compression), communicate less often "
					 "(accumulate gradients over several micro-batches before one "
					 "all-reduce), give each rank more compute per step (a larger batch), "
					 "and check the link (collective_bandwidth, `perfkit report "
					 "--report=nccl_sum`)."),
			       "In PyTorch: ddp.register_comm_hook(None, "
			       "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook) "
			       "halves the bytes of DistributedDataParallel's all-reduces; run accumulation "
			       "micro-steps inside ddp.no_sync(); bucket_cap_mb sets how gradients are "
			       "grouped for overlap."));
	rc = set_ranks(f, j, on, ns, t->rank) ? nomem(err) : 0;
out:
	free(on);
	free(share);
	free(ns);
	free(waited);
	return rc;
}

/* ---- small collectives -------------------------------------------------------- */

/* A call's transfer time: its kernel's, less what it waited. */
static int64_t transfer_ns(const struct diag_job *j, int k)
{
	const struct nccl_call *c = &j->calls.v[k];
	int64_t d = c->end_ns - c->start_ns, w = j->wait_ns[k] > 0 ? j->wait_ns[k] : 0;

	return d > w ? d - w : 0;
}

static bool call_in_window(const struct diag_job *j, const struct nccl_call *k)
{
	const struct rank_time *t = diag_job__time_of(j, k->global_pid);

	return t && k->end_ns >= k->start_ns && k->start_ns >= t->w.start_ns && k->start_ns < t->w.end_ns;
}

static int rule_small(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	int n = j->times.n, rep = -1, rc = 0;
	int64_t max_bytes = (int64_t)diag__get(ctx, "small_collectives.max_bytes"), sized = 0;
	double min_per_iter = diag__get(ctx, "small_collectives.min_per_iteration");
	int64_t *count = calloc((size_t)(n ? n : 1), sizeof *count), *ns = calloc((size_t)(n ? n : 1), sizeof *ns);
	int64_t *bytes = calloc((size_t)(n ? n : 1), sizeof *bytes);
	double *per_step = calloc((size_t)(n ? n : 1), sizeof *per_step);
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on);
	struct diag_tally kinds = { 0 };
	char list[1024], b[4][32];
	struct diag_finding *f;

	if (!count || !ns || !bytes || !per_step || !on) {
		rc = nomem(err);
		goto out;
	}
	if (j->calls.n == 0) {
		rc = diag__skip(ctx, "small_collectives", NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	for (int k = 0; k < j->calls.n; k++) {
		const struct nccl_call *c = &j->calls.v[k];
		int ri = rank_index(j, c->global_pid);

		if (ri < 0 || !call_in_window(j, c) || c->bytes < 0)
			continue;
		sized++;
		if (c->bytes > max_bytes)
			continue;
		count[ri]++;
		ns[ri] = sum_add_saturated(ns[ri], transfer_ns(j, k));
		bytes[ri] = sum_add_saturated(bytes[ri], c->bytes);
	}
	if (sized == 0) {
		rc = diag__skip(ctx, "small_collectives", NO_SIZES) ? nomem(err) : 0;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		per_step[i] = (double)count[i] / steps_of(&j->times.v[i]);
		on[i] = count[i] > 0 && per_step[i] >= min_per_iter;
		if (on[i] && (rep < 0 || share_of(&j->times.v[i], ns[i]) > share_of(&j->times.v[rep], ns[rep])))
			rep = i;
	}
	if (rep < 0)
		goto out;
	for (int k = 0; k < j->calls.n; k++) {
		const struct nccl_call *c = &j->calls.v[k];
		struct diag_tally_entry *e;
		char key[96];

		if (c->global_pid != j->times.v[rep].global_pid || !call_in_window(j, c) || c->bytes < 0 ||
		    c->bytes > max_bytes)
			continue;
		snprintf(key, sizeof key, "%s of %s", nccl_kind__name(c->kind), diag__bytes(b[0], 32, (double)c->bytes));
		e = diag_tally__get(&kinds, key);
		if (!e) {
			rc = nomem(err);
			goto out;
		}
		e->count++;
		e->time_ns = sum_add_saturated(e->time_ns, transfer_ns(j, k));
		e->bytes = sum_add_saturated(e->bytes, c->bytes);
	}
	{
		const struct rank_time *t = &j->times.v[rep];
		size_t len = 0;

		list[0] = 0;
		for (int i = 0; i < n && len < sizeof list; i++)
			if (on[i] && (n <= LIST_RANKS || i == rep))
				len += (size_t)snprintf(list + len, sizeof list - len, "%srank %d %.1f", len ? ", " : "",
							j->times.v[i].rank, per_step[i]);
		f = diag__add_ranked(
			ctx, &kinds, "small_collectives", "Many small collectives (latency-bound)", ns[rep], DIAG_HIGH,
			diag__fmt("Collectives of at most %s, per step: %s. On rank %d, %lld of them in the window, "
				  "%s on average, their kernels run %s (%s per step) less the time they waited "
				  "for later ranks. Each collective pays a fixed latency (its launch and the "
				  "handshake between the ranks) whatever its size.",
				  diag__bytes(b[0], 32, (double)max_bytes), list, t->rank, (long long)count[rep],
				  diag__bytes(b[1], 32, (double)bytes[rep] / (double)count[rep]),
				  diag__ns(b[2], 32, ns[rep]), diag__ns(b[3], 32, (int64_t)(ns[rep] / steps_of(t)))),
			diag__with_pytorch(ctx,
				diag__fmt("Fuse them into fewer, larger collectives: pack the tensors into one "
					  "flat buffer and reduce it once (gradient buckets), or issue them inside "
					  "one ncclGroupStart/ncclGroupEnd so that NCCL launches them together; "
					  "reduce metrics every N steps, not every step."),
				"In PyTorch: DistributedDataParallel buckets gradients (raise bucket_cap_mb "
				"if many small all-reduces remain); for your own collectives flatten the "
				"tensors into one (torch.cat, then split) or coalesce them "
				"(torch.distributed's all_reduce_coalesced, a _coalescing_manager block)."));
		if (f) {
			/* the share of the window is per rank: the representative's */
			f->share = share_of(t, ns[rep]);
			rc = set_ranks(f, j, on, ns, t->rank) ? nomem(err) : 0;
		}
	}
out:
	free(count);
	free(ns);
	free(bytes);
	free(per_step);
	free(on);
	diag_tally__exit(&kinds);
	return rc;
}

/* ---- collectives below the link's bandwidth ---------------------------------- */

static int rule_bandwidth(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	int64_t min_bytes = (int64_t)diag__get(ctx, "collective_bandwidth.min_bytes");
	double max_fraction = diag__get(ctx, "collective_bandwidth.max_fraction"), link = j->link_bytes_per_ns;
	int n = j->times.n, rc = 0, sized = 0;
	struct group {
		enum nccl_kind kind;
		int bucket;
		int64_t count, bytes;
		double ns, factor_bytes; /* mean transfer time; bytes times the bus factor */
	} groups[NCCL_KIND__COUNT * (NCCL_SIZE_BUCKETS + 1)];
	int64_t *ns = calloc((size_t)(n ? n : 1), sizeof *ns);
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on);
	struct diag_tally slow = { 0 };
	int64_t total = 0;
	char b[4][32];
	double worst = -1;
	struct diag_finding *f;

	memset(groups, 0, sizeof groups);
	if (!ns || !on) {
		rc = nomem(err);
		goto out;
	}
	if (j->cols.n == 0) {
		rc = diag__skip(ctx, "collective_bandwidth", NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	if (!j->one_host) {
		rc = diag__skip(ctx, "collective_bandwidth", "the ranks are on several hosts: their link is "
				"the network, which `perfkit peaks` does not measure") ? nomem(err) : 0;
		goto out;
	}
	if (link <= 0) {
		rc = diag__skip(ctx, "collective_bandwidth", "the capture holds no measured link bandwidth "
				"(PERFKIT_PEAKS p2p_bytes_per_s): run `perfkit peaks` on a machine with several "
				"GPUs and `perfkit peaks --store FILE`; without it no bandwidth is judged") ? nomem(err) : 0;
		goto out;
	}
	for (int c = 0; c < j->cols.n; c++) {
		const struct nccl_collective *col = &j->cols.v[c];
		const struct nccl_call *first;
		struct group *g;
		double mean = 0, factor;

		if (!j->in_window[c] || j->last_call[c] < 0 || col->bytes < 0)
			continue;
		sized++;
		if (col->bytes < min_bytes)
			continue;
		first = &j->calls.v[col->calls[0]];
		factor = nccl_busbw_factor(col->kind, first->comm_ranks > 0 ? first->comm_ranks : col->ncalls);
		if (factor <= 0)
			continue;
		for (int i = 0; i < col->ncalls; i++)
			mean += (double)transfer_ns(j, col->calls[i]) / col->ncalls;
		if (mean <= 0)
			continue;
		g = &groups[col->kind * (NCCL_SIZE_BUCKETS + 1) + nccl_size_bucket(col->bytes)];
		g->kind = col->kind;
		g->bucket = nccl_size_bucket(col->bytes);
		g->count++;
		g->bytes = sum_add_saturated(g->bytes, col->bytes);
		g->ns += mean;
		g->factor_bytes += factor * (double)col->bytes;
	}
	if (sized == 0) {
		rc = diag__skip(ctx, "collective_bandwidth", NO_SIZES) ? nomem(err) : 0;
		goto out;
	}
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		const struct group *g = &groups[i];
		double busbw = g->count ? g->factor_bytes / g->ns : 0, lost;
		struct diag_tally_entry *e;
		char key[160];

		if (!g->count || busbw >= max_fraction * link)
			continue;
		lost = g->ns * (1 - busbw / link);
		total = sum_add_saturated(total, (int64_t)lost);
		if (worst < 0 || busbw / link < worst)
			worst = busbw / link;
		snprintf(key, sizeof key, "%s %s: bus bandwidth %.2f GB/s, %.0f%% of the link",
			 nccl_kind__name(g->kind), nccl_size_bucket__label(g->bucket), busbw, 100 * busbw / link);
		e = diag_tally__get(&slow, key);
		if (!e) {
			rc = nomem(err);
			goto out;
		}
		e->count = g->count;
		e->time_ns = (int64_t)g->ns;
		e->bytes = g->bytes;
	}
	if (slow.n == 0)
		goto out;
	{
		int64_t *windows = malloc(sizeof *windows * (size_t)n);
		int64_t window;

		if (!windows) {
			rc = nomem(err);
			goto out;
		}
		for (int i = 0; i < n; i++) {
			windows[i] = j->times.v[i].window_ns;
			on[i] = true;
			ns[i] = total;
		}
		window = rank_time__percentile(windows, n, 50);
		free(windows);
		f = diag__add_ranked(
			ctx, &slow, "collective_bandwidth", "Collectives below the link's bandwidth", total, DIAG_HIGH,
			diag__fmt("%d group%s of collectives of at least %s (by kind and size) reach%s less than "
				  "%.0f%% of the link's measured bandwidth (%.1f GB/s, `perfkit peaks`' "
				  "peer-to-peer copy), the slowest %.0f%%; bus bandwidth as nccl-tests computes it, "
				  "from each collective's time less its ranks' waiting. At the link's bandwidth "
				  "they would take %s less.",
				  slow.n, slow.n == 1 ? "" : "s", diag__bytes(b[0], 32, (double)min_bytes),
				  slow.n == 1 ? "es" : "", 100 * max_fraction, link,
				  100 * worst, diag__ns(b[1], 32, total)),
			diag__with_pytorch(ctx,
				diag__fmt("Check the path NCCL takes (NCCL_DEBUG=INFO prints the transport of "
					  "each channel: P2P/NVLink against SHM or sockets, which a container, a "
					  "missing peer access or NCCL_P2P_DISABLE forces), the GPUs' topology "
					  "(nvidia-smi topo -m), and let large collectives run with enough "
					  "channels (NCCL_MIN_NCHANNELS); small messages stay below the link "
					  "whatever the path (see small_collectives)."),
				"In PyTorch: larger gradient buckets (bucket_cap_mb) make larger messages; "
				"NCCL's environment variables apply as they are to torch.distributed."));
		if (f) {
			f->share = window > 0 ? (double)total / (double)window : 0;
			f->share = f->share > 1 ? 1 : f->share;
			rc = set_ranks(f, j, on, ns, -1) ? nomem(err) : 0;
		}
	}
out:
	free(ns);
	free(on);
	diag_tally__exit(&slow);
	return rc;
}

/* ---- the table ------------------------------------------------------------ */

/* Each judges time (waits, overlap, transfer times): under kernel replay,
 * whose timeline is the profiler's, they do not run. */
const struct diag_rule diag_rules_ranks[] = {
	{ "straggler", "One rank arrives last at the collectives (a straggler)", rule_straggler, true },
	{ "rank_imbalance", "Compute differs across ranks (rank imbalance)", rule_imbalance, true },
	{ "exposed_communication", "Communication not overlapped with compute", rule_exposed, true },
	{ "small_collectives", "Many small collectives (latency-bound)", rule_small, true },
	{ "collective_bandwidth", "Collectives below the link's bandwidth", rule_bandwidth, true },
	{ NULL, NULL, NULL, false },
};
