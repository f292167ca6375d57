/* rules_ranks.c - the rules of a job about its ranks (diagnose_job.h): a
 * straggler that the others wait for at the collectives, with what it did
 * more than they did before them, and compute that differs across ranks.
 * They run only on jobs, after the rules of one process have run on each
 * rank; their decisions are job_judge.c's. The rules about the
 * collectives themselves are rules_collectives.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose/diag_job.h"
#include "analysis/timeline/gpu_idle.h"
#include "analysis/core/gpu_work.h"
#include "analysis/ranks/job_judge.h"
#include "model/sql.h"
#include "prof/error.h"
#include "prof/tables.h"
#include "prof/saturate.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* ---- a rank's work before a collective ------------------------------------ */

/* Where [a, b) went on a rank, added to g. */
static void split_gap(const struct diag_rank_work *w, int64_t a, int64_t b, struct job_gap *g)
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
			sum = prof_add_saturated(sum, j->wait_ns[col->calls[i]]);
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
	double median_extra_ns;      /* what it did more than the waiter, the median over those */
	int waiter;                  /* the rank index that waited most at each, -1 when it varies */
	struct diag_tally kinds;     /* by collective kind and size: count, others' mean wait */
};

static int straggler_gaps(struct diag_context *ctx, struct straggler *st, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	struct diag_rank_work *work = calloc((size_t)j->times.n, sizeof *work);
	/* what the straggler did more at each late collective: one long
	 * stall of a balanced job must not pass for steady extra work */
	int64_t *extras = calloc((size_t)j->cols.n + 1, sizeof *extras);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int rc = 0;

	if (!work || !extras) {
		free(work), free(extras);
		return nomem(err);
	}
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

		if (!j->in_window[c] || last < 0 || diag_job__rank_index(j, j->calls.v[last].global_pid) != si ||
		    mean_wait(j, c) <= 0 || mean_wait(j, c) < st->margin_ns)
			continue;
		for (int i = 0; i < col->ncalls; i++)
			if (first < 0 || j->wait_ns[col->calls[i]] > j->wait_ns[first])
				first = col->calls[i];
		wi = diag_job__rank_index(j, j->calls.v[first].global_pid);
		if (wi < 0 || !gap_before(j, last, &a, &b) || !gap_before(j, first, &a2, &b2))
			continue;
		if (!work[si].loaded)
			rc = diag_job__load_work(j, &work[si], lo, hi, true, err);
		if (rc == 0 && !work[wi].loaded)
			rc = diag_job__load_work(j, &work[wi], lo, hi, true, err);
		if (rc)
			break;
		{
			struct job_gap one_s = { 0 }, one_w = { 0 };
			double extra;

			split_gap(&work[si], a, b, &one_s);
			split_gap(&work[wi], a2, b2, &one_w);
			job_gap__add(&st->gs, &one_s);
			job_gap__add(&st->gw, &one_w);
			job_judge__cause(&one_s, &one_w, &extra);
			extras[st->ngaps] = (int64_t)extra;
		}
		st->ngaps++;
		st->waiter = st->waiter == -2 || st->waiter == wi ? wi : -1;
	}
	for (int i = 0; i < j->times.n; i++)
		diag_rank_work__exit(&work[i]);
	free(work);
	st->median_extra_ns = (double)idle__median(extras, st->ngaps);
	free(extras);
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

/* The same kernels slower on one rank's GPU (the straggler's, the slowest
 * rank's). */
static char *slow_gpu_change(const struct diag_context *ctx, int rank)
{
	return diag__with_pytorch(ctx,
		diag__fmt("The same kernels run longer on rank %d's GPU: check that nothing else runs "
			  "on it (nvidia-smi; two ranks on one GPU share its time), its clocks and "
			  "throttling (nvidia-smi -q -d PERFORMANCE,CLOCK), that it is the model the other "
			  "ranks have, and that its inputs are as large as theirs (an uneven shard).", rank),
		"In PyTorch: give each process its own GPU (torch.cuda.set_device(LOCAL_RANK) before "
		"init_process_group, DistributedDataParallel(device_ids=[LOCAL_RANK])), and check "
		"torch.cuda.get_device_name() on every rank.");
}

/* What the straggler should change, by what it did more. */
static char *straggler_change(const struct diag_context *ctx, enum job_cause cause, int rank)
{
	switch (cause) {
	case JOB_CAUSE_HOST:
		return diag__with_pytorch(ctx,
			diag__fmt("Find the host work rank %d does before the collective that the other ranks' "
				  "do not (NVTX ranges around the suspects, or a CPU profiler such as py-spy or "
				  "perf on that rank's process): logging, metrics, checkpointing or evaluation "
				  "on one rank, data loading or preprocessing on the main thread, a branch "
				  "taken on that rank only. Take it out of the step, spread it over every "
				  "rank, or run it on another thread while the GPU works.", rank),
			"In PyTorch: {?input load and augment in DataLoader workers (num_workers=N, "
			"{!pinned pin_memory=True, }persistent_workers=True); }keep one rank's logging, metrics "
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
		return slow_gpu_change(ctx, rank);
	case JOB_CAUSE_COPIES:
		return diag__with_pytorch(ctx,
			diag__fmt("Rank %d copies between host and device longer before the collective: "
				  "pin its host buffers, copy asynchronously ahead of use on a stream of their "
				  "own, and check that it does not move more data than the others.", rank),
			"In PyTorch: {?input DataLoader(..., pin_memory=True) and }.to(\"cuda\", "
			"non_blocking=True), prefetching the next batch on a torch.cuda.Stream.");
	case JOB_CAUSE_CALLS:
		return diag__with_pytorch(ctx,
			diag__fmt("Rank %d's host sits in CUDA calls (synchronisation, allocation, launches) "
				  "while its GPU waits before the collective: see its own findings (`perfkit "
				  "diagnose --rank=%d`: sync_api, alloc_churn, launch_bound).", rank, rank),
			diag_pytorch_sync);
	default:
		return diag__with_pytorch(ctx,
			diag__fmt("Rank %d did no more work than the others between two collectives: it "
				  "left the previous one late or its GPU started late; `perfkit diagnose "
				  "--rank=%d` shows the critical path of its step.", rank, rank),
			"In PyTorch: torch.profiler on that rank, with torch.profiler.record_function "
			"around the parts of the step, shows what it did.");
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
		per_step[i] = (double)st->waited[i] / diag_job__steps(&j->times.v[i]);
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
		diag_job__amounts(j, on, per_step, DIAG_JOB_NS, list, sizeof list);
		snprintf(waits, sizeof waits, "The others waited for it, per step: %s; the most, rank %d,",
			 list, j->times.v[most].rank);
	} else {
		snprintf(waits, sizeof waits, "Rank %d waited for it", j->times.v[most].rank);
	}
	if (st->waiting_for_others_ns > 0)
		snprintf(others, sizeof others, "other ranks were, %s in all",
			 diag__ns(b1, sizeof b1, st->waiting_for_others_ns));
	cause = job_judge__cause(&st->gs, &st->gw, &extra);
	/* A rank that is last by a little, with little more to do than the
	 * others, is a balanced job's jitter (two ranks of one DDP job, 7 ms
	 * steps: one last at most collectives, 0.8 ms more host work, 12% of
	 * the step); a straggler has work of its own that holds the others.
	 * Judged by the median late collective: one 19 ms stall among 22
	 * otherwise even ones (3.5 ms steps) made a mean of 27% of the step. */
	if (st->step_ns > 0 &&
	    st->median_extra_ns < diag__get(ctx, "straggler.min_extra_share") * (double)st->step_ns) {
		free(on), free(per_step), free(ns);
		return 0;
	}
	straggler_before(j, st, cause, extra, before, sizeof before);
	f = diag__add(ctx, "straggler", "One rank arrives last at the collectives (a straggler)",
		      diag_job__share(&j->times.v[most], st->waited[most]), st->waited[most], DIAG_HIGH,
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
					: 100.0 * diag_job__share(&j->times.v[most], st->waited[most]),
				diag__ns(b4, sizeof b4, st->waited[most]),
				diag__ns(b5, sizeof b5, st->late_waited[most]), (long long)st->late,
				diag__ns(b6, sizeof b6, st->max_wait_ns), before),
		      straggler_change(ctx, cause, s->rank));
	if (f)
		f->saves_ns = (int64_t)per_step[most];
	memset(on, 0, sizeof *on * (size_t)j->times.n);
	on[st->s] = true;
	ns[st->s] = st->waited[most];
	rc = diag_job__set_ranks(f, j, on, ns, j->times.v[most].rank);
	/* the time is what the rank that waited most lost: a share of its
	 * window, as the finding's, not of the straggler's */
	if (rc == 0) {
		f->ranks[0].share = f->share;
		diag_tally__offenders(&st->kinds, f);
	}
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
		return diag__skip(ctx, "straggler", DIAG_JOB_NO_NCCL) ? nomem(err) : 0;
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
		li = diag_job__rank_index(j, j->calls.v[j->last_call[c]].global_pid);
		if (li < 0 || w <= 0 || w < st.margin_ns)
			continue;
		late[li].late_count++;
		late[li].late_wait_ns = prof_add_saturated(late[li].late_wait_ns, w);
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
		li = diag_job__rank_index(j, j->calls.v[j->last_call[c]].global_pid);
		if (li != st.s) {
			if (w > 0 && w >= st.margin_ns)
				st.waiting_for_others_ns = prof_add_saturated(st.waiting_for_others_ns, w);
			continue;
		}
		/* every wait for it counts; the margin only tells the late ones */
		st.last_at++;
		st.late += w > 0 && w >= st.margin_ns;
		for (int i = 0; i < col->ncalls; i++) {
			int k = col->calls[i], ri = diag_job__rank_index(j, j->calls.v[k].global_pid);

			if (ri < 0)
				continue;
			st.waited[ri] = prof_add_saturated(st.waited[ri], j->wait_ns[k]);
			if (w > 0 && w >= st.margin_ns)
				st.late_waited[ri] = prof_add_saturated(st.late_waited[ri], j->wait_ns[k]);
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
			e->time_ns = prof_add_saturated(e->time_ns, w);
			e->bytes = col->bytes >= 0 ? prof_add_saturated(e->bytes, col->bytes) : -1;
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
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on), per_step, any_slowed = false;
	int64_t *ns = calloc((size_t)(n ? n : 1), sizeof *ns);
	double *beside = calloc((size_t)(n ? n : 1), sizeof *beside);
	char list[1024], slow_list[1024], slow_text[1400] = "", b1[32];
	double diff, mean = 0;
	struct diag_finding *f;

	if (!v || !kernels || !on || !ns || !beside) {
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
	/* what each rank's kernels ran longer beside its own NCCL kernels is
	 * the wait's, not its work (rank_time's slowed_ns) */
	for (int i = 0; i < n; i++) {
		const struct rank_time *t = &j->times.v[i];
		int64_t slowed = t->slowed_ns;

		any_slowed |= slowed > 0;
		v[i] = (double)(t->compute_ns - (slowed < t->compute_ns ? slowed : t->compute_ns)) /
		       (per_step ? diag_job__steps(t) : 1.0);
		beside[i] = (double)slowed / (per_step ? diag_job__steps(t) : 1.0);
		kernels[i] = (double)t->kernels / (per_step ? diag_job__steps(t) : 1.0);
		mean += v[i] / n;
		on[i] = true;
	}
	diff = job_judge__imbalance(v, n, &hi, &lo);
	if (hi < 0 || diff < diag__get(ctx, "imbalance.min_difference"))
		goto out;
	diag_job__amounts(j, on, v, DIAG_JOB_NS, list, sizeof list);
	if (any_slowed) {
		diag_job__amounts(j, on, beside, DIAG_JOB_NS, slow_list, sizeof slow_list);
		snprintf(slow_text, sizeof slow_text, "; left out of it, what kernels ran longer beside the "
			 "rank's own NCCL kernels than the same kernel (name, grid and block) alone: %s (a "
			 "rank that waits at a collective spins in its NCCL kernel, which slows the compute "
			 "beside it)", slow_list);
	}
	{
		const struct rank_time *slow = &j->times.v[hi];
		int64_t time = (int64_t)((v[hi] - mean) * (per_step ? diag_job__steps(slow) : 1.0));
		bool more_work = kernels[hi] > 1.1 * kernels[lo];

		for (int i = 0; i < n; i++) {
			double excess = (v[i] - mean) * (per_step ? diag_job__steps(&j->times.v[i]) : 1.0);

			on[i] = excess > 0;
			ns[i] = excess > 0 ? (int64_t)excess : 0;
		}
		f = diag__add(
			ctx, "rank_imbalance", "Compute differs across ranks (rank imbalance)",
			diag_job__share(slow, time), time, DIAG_HIGH,
			diag__fmt("Compute (kernels other than NCCL's, copies and memsets, as a union) %s: %s%s. "
				  "Rank %d computes %.0f%% longer than rank %d, %s %s than the mean: the others "
				  "wait that long at the next collective. Kernels %s: %.1f on rank %d, %.1f on rank %d: "
				  "%s.",
				  per_step ? "per step" : "over each rank's capture", list, slow_text, slow->rank,
				  100 * diff / (1 - diff),
				  j->times.v[lo].rank, diag__ns(b1, sizeof b1, (int64_t)(v[hi] - mean)),
				  per_step ? "per step more" : "more", per_step ? "per step" : "in all", kernels[hi],
				  slow->rank, kernels[lo], j->times.v[lo].rank,
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
				: slow_gpu_change(ctx, slow->rank));
		rc = diag_job__set_ranks(f, j, on, ns, slow->rank) ? nomem(err) : 0;
	}
out:
	free(v);
	free(kernels);
	free(on);
	free(ns);
	free(beside);
	return rc;
}

/* ---- the table ------------------------------------------------------------ */

/* Both judge time (waits, compute per step): under kernel replay, whose
 * timeline is the profiler's, they do not run. */
const struct diag_rule diag_rules_ranks[] = {
	{ "straggler", "One rank arrives last at the collectives (a straggler)", rule_straggler, true },
	{ "rank_imbalance", "Compute differs across ranks (rank imbalance)", rule_imbalance, true },
	{ NULL, NULL, NULL, false },
};
