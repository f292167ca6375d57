/* rules_collectives.c - the rules of a job about its collectives
 * (diagnose_job.h): communication not overlapped with compute, many small
 * (latency-bound) collectives, collectives below the link's bandwidth.
 * They run only on jobs, after the rules of one process have run on each
 * rank; their decisions are job_judge.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose/diag_job.h"
#include "analysis/ranks/job_judge.h"
#include "prof/error.h"
#include "prof/saturate.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* A rule that needs message sizes, where no call has one. */
static int skip_no_sizes(struct diag_context *ctx, const char *rule, struct prof_error *err)
{
	char why[400];

	nccl_size_evidence__why(&ctx->job->sizes, why, sizeof why);
	return diag__skip(ctx, rule, "no message sizes: %s", why) ? nomem(err) : 0;
}

/* ---- exposed communication -------------------------------------------------- */

/* A call's transfer time: its kernel's, less what it waited. */
static int64_t transfer_ns(const struct diag_job *j, int k)
{
	return nccl_call__transfer_ns(&j->calls.v[k], j->wait_ns[k]);
}

static bool call_in_window(const struct diag_job *j, const struct nccl_call *k)
{
	const struct rank_time *t = diag_job__time_of(j, k->global_pid);

	return t && k->end_ns >= k->start_ns && k->start_ns >= t->w.start_ns && k->start_ns < t->w.end_ns;
}

/* Where one rank's exposed communication went: waiting for later ranks at
 * the collectives, or the transfers. */
struct exposed_split {
	int64_t waited_ns;          /* its calls' waits in its window, in all */
	int64_t waited_exposed_ns;  /* of them, with no compute beside them */
	int64_t transfer_ns;        /* the exposed rest: the transfers */
	int waited_for;             /* the rank index it waited for most; -1: none */
};

/* A rank waits at the start of its NCCL kernel (job_judge__waits): its
 * calls' [start, start + wait) in its window, united, less the compute
 * beside them, is the waiting part of its exposed communication. A wait
 * lies inside its call's kernel, so the compute beside it is the
 * compute under the rank's communication (rank_time's hidden). */
static int split_exposed(struct diag_context *ctx, int ri, int64_t *by_rank, struct exposed_split *x,
			 struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	const struct rank_time *t = &j->times.v[ri];
	struct diag_intervals waits = { 0 };
	int rc = 0;

	memset(by_rank, 0, sizeof *by_rank * (size_t)j->times.n);
	x->waited_for = -1;
	for (int c = 0; c < j->cols.n && rc == 0; c++) {
		const struct nccl_collective *col = &j->cols.v[c];
		int last = j->last_call[c], li;

		if (last < 0)
			continue;
		li = diag_job__rank_index(j, j->calls.v[last].global_pid);
		for (int i = 0; i < col->ncalls; i++) {
			const struct nccl_call *k = &j->calls.v[col->calls[i]];
			int64_t wait = j->wait_ns[col->calls[i]], end;

			if (k->global_pid != t->global_pid || wait <= 0 || !call_in_window(j, k))
				continue;
			end = k->start_ns + wait < t->w.end_ns ? k->start_ns + wait : t->w.end_ns;
			x->waited_ns = prof_add_saturated(x->waited_ns, wait);
			if (li >= 0)
				by_rank[li] = prof_add_saturated(by_rank[li], wait);
			if (diag_intervals__push(&waits, k->start_ns, end))
				rc = nomem(err);
		}
	}
	if (rc == 0) {
		diag_intervals__unite(&waits);
		x->waited_exposed_ns =
			diag_intervals__length(&waits) - diag_intervals__overlap_ns(&waits, &t->hidden);
		if (x->waited_exposed_ns > t->exposed_ns)
			x->waited_exposed_ns = t->exposed_ns;
		if (x->waited_exposed_ns < 0)
			x->waited_exposed_ns = 0;
		x->transfer_ns = t->exposed_ns - x->waited_exposed_ns;
		for (int i = 0; i < j->times.n; i++)
			if (by_rank[i] > 0 && (x->waited_for < 0 || by_rank[i] > by_rank[x->waited_for]))
				x->waited_for = i;
	}
	diag_intervals__exit(&waits);
	return rc;
}

static bool mostly_waiting(const struct rank_time *t, const struct exposed_split *x)
{
	return x->waited_exposed_ns > 0 && x->waited_exposed_ns >= t->exposed_ns / 2 + t->exposed_ns % 2;
}

/* The findings already made about rank (the straggler, its own findings
 * that the rank waiting for it does not have) as "straggler, cpu_bound
 * and launch_bound on rank 1", else where to look. */
static void findings_on(const struct diag_report *r, int rank, int not_rank, char *buf, size_t cap)
{
	const char *ids[6];
	int n = 0;

	for (int i = 0; i < r->nfindings && n < 6; i++) {
		const struct diag_finding *f = &r->findings[i];
		bool on = false, other = false;

		for (int k = 0; k < f->nranks; k++) {
			on |= f->ranks[k].rank == rank;
			other |= f->ranks[k].rank == not_rank;
		}
		if (on && !other)
			ids[n++] = f->rule_id;
	}
	if (n == 0) {
		snprintf(buf, cap, "`perfkit diagnose --rank=%d`", rank);
		return;
	}
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, cap - len, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", ids[i]);
	}
	snprintf(buf + strlen(buf), cap - strlen(buf), " on rank %d", rank);
}

/* What to change about the exposed transfers. */
static const char *transfer_change(bool hide)
{
	return hide ? "overlap them with compute: start each piece of communication as soon as its data "
		      "is ready (gradients in buckets, reduced while the backward pass goes on), on a "
		      "stream of its own, so that compute kernels run while NCCL transfers."
		    : "they outlast the compute they could hide under: move fewer bytes (16-bit gradients, "
		      "compression), communicate less often (accumulate gradients over several "
		      "micro-batches before one all-reduce), give each rank more compute per step (a "
		      "larger batch), and check the link (collective_bandwidth, `perfkit report "
		      "--report=nccl_sum`).";
}

static const char *transfer_pytorch(bool hide)
{
	return hide ? "In PyTorch: DistributedDataParallel all-reduces each gradient bucket while the "
		      "backward pass goes on: tune bucket_cap_mb (default 25; smaller buckets start "
		      "communicating earlier, larger ones cost fewer calls), pass "
		      "gradient_as_bucket_view=True (the default is False: each gradient is then "
		      "copied into its bucket), and with FSDP use backward_prefetch and "
		      "forward_prefetch."
		    : "In PyTorch: ddp.register_comm_hook(None, "
		      "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook) halves "
		      "the bytes of DistributedDataParallel's all-reduces; run accumulation micro-steps "
		      "inside ddp.no_sync(); bucket_cap_mb sets how gradients are grouped for overlap.";
}

/* The ranks (on) whose exposed communication is mostly waiting, each as
 * a sentence into buf ("Rank 0 waits at the collectives for rank 1: 3.109
 * ms per step (44% of its median step), ..."); the one that waits most
 * per step (-1: none), and in *dominant whether the waiting is at least
 * half the exposed communication of the ranks on together. */
static int describe_waiting(const struct diag_context *ctx, const bool *on, const struct exposed_split *x,
			    char *buf, size_t cap, bool *dominant)
{
	const struct diag_job *j = ctx->job;
	int64_t exposed = 0, waited = 0;
	int most = -1;
	double most_ns = 0;
	size_t len = 0;
	char b[2][32];

	buf[0] = 0;
	for (int i = 0; i < j->times.n; i++) {
		const struct rank_time *t = &j->times.v[i];
		double per_step = (double)x[i].waited_ns / diag_job__steps(t);

		if (!on[i])
			continue;
		exposed = prof_add_saturated(exposed, t->exposed_ns);
		waited = prof_add_saturated(waited, x[i].waited_exposed_ns);
		if (!mostly_waiting(t, &x[i]) || x[i].waited_for < 0)
			continue;
		if (most < 0 || per_step > most_ns)
			most = i, most_ns = per_step;
		if (len < cap)
			len += (size_t)snprintf(
				buf + len, cap - len,
				" Rank %d waits at the collectives for rank %d: %s per step (%.0f%% of its median "
				"step), %s of it with no compute beside it.",
				t->rank, j->times.v[x[i].waited_for].rank, diag__ns(b[0], 32, (int64_t)per_step),
				t->step_med_ns > 0 ? 100.0 * per_step / (double)t->step_med_ns
						   : 100.0 * diag_job__share(t, x[i].waited_ns),
				diag__ns(b[1], 32, (int64_t)((double)x[i].waited_exposed_ns / diag_job__steps(t))));
	}
	*dominant = most >= 0 && waited >= exposed / 2 + exposed % 2;
	return most;
}

/* Communication with no compute beside it, split into the waiting for
 * later ranks (the straggler's time, which no change to the communication
 * recovers) and the transfers, which the finding's time is. */
static int rule_exposed(struct diag_context *ctx, struct prof_error *err)
{
	const struct diag_job *j = ctx->job;
	int n = j->times.n, rep = -1, rc = 0;
	bool *on = calloc((size_t)(n ? n : 1), sizeof *on), hide;
	double *share = calloc((size_t)(n ? n : 1), sizeof *share);
	double *part = calloc((size_t)(n ? n : 1), sizeof *part);
	int64_t *ns = calloc((size_t)(n ? n : 1), sizeof *ns);
	int64_t *by_rank = calloc((size_t)(n ? n : 1), sizeof *by_rank);
	struct exposed_split *x = calloc((size_t)(n ? n : 1), sizeof *x);
	double min_share = diag__get(ctx, "exposed_comm.min_share");
	char list[1024], waited_list[1024], transfer_list[1024], waiters[2048] = "", see[256], b[7][32];
	char wait_change[512] = "", *change = NULL;
	const char *pytorch;
	const struct rank_time *t;
	struct diag_finding *f;
	bool dominant;
	double steps;
	int waiter;

	if (!on || !share || !part || !ns || !by_rank || !x) {
		rc = nomem(err);
		goto out;
	}
	if (j->cols.n == 0) {
		rc = diag__skip(ctx, "exposed_communication", DIAG_JOB_NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		share[i] = diag_job__share(&j->times.v[i], j->times.v[i].exposed_ns);
		on[i] = share[i] >= min_share && j->times.v[i].exposed_ns > 0;
	}
	for (int i = 0; i < n && rc == 0; i++)
		if (on[i])
			rc = split_exposed(ctx, i, by_rank, &x[i], err);
	if (rc)
		goto out;
	/* the rank whose exposed transfers take the largest share of its window */
	for (int i = 0; i < n; i++) {
		ns[i] = x[i].transfer_ns;
		if (on[i] && (rep < 0 || diag_job__share(&j->times.v[i], ns[i]) >
						 diag_job__share(&j->times.v[rep], ns[rep])))
			rep = i;
	}
	if (rep < 0)
		goto out;
	diag_job__amounts(j, on, share, DIAG_JOB_SHARE, list, sizeof list);
	for (int i = 0; i < n; i++)
		part[i] = on[i] ? diag_job__share(&j->times.v[i], x[i].waited_exposed_ns) : 0;
	diag_job__amounts(j, on, part, DIAG_JOB_SHARE, waited_list, sizeof waited_list);
	for (int i = 0; i < n; i++)
		part[i] = on[i] ? diag_job__share(&j->times.v[i], x[i].transfer_ns) : 0;
	diag_job__amounts(j, on, part, DIAG_JOB_SHARE, transfer_list, sizeof transfer_list);
	t = &j->times.v[rep];
	steps = diag_job__steps(t);
	hide = job_judge__overlap_can_hide(x[rep].transfer_ns, t->compute_ns, t->hidden_ns);
	waiter = describe_waiting(ctx, on, x, waiters, sizeof waiters, &dominant);
	if (waiter >= 0) {
		int w = j->times.v[x[waiter].waited_for].rank;

		findings_on(ctx->report, w, j->times.v[waiter].rank, see, sizeof see);
		snprintf(wait_change, sizeof wait_change,
			 "waiting for later ranks at the collectives (the most, rank %d's for rank %d), which "
			 "no change to the communication recovers: shorten what rank %d does before them "
			 "(see %s).", j->times.v[waiter].rank, w, w, see);
	}
	if (dominant && x[rep].transfer_ns == 0)
		change = diag__fmt("The exposed communication is %s", wait_change);
	else if (dominant)
		change = diag__fmt("Most of the exposed communication is %s The rest on rank %d, %s per step, "
				   "is the transfers; %s", wait_change, t->rank,
				   diag__ns(b[0], 32, (int64_t)(x[rep].transfer_ns / steps)), transfer_change(hide));
	else
		change = diag__fmt("The exposed communication is mostly the transfers; %s%s%s",
				   transfer_change(hide), waiter >= 0 ? " Part of it is " : "",
				   waiter >= 0 ? wait_change : "");
	pytorch = dominant && x[rep].transfer_ns == 0 ? NULL : transfer_pytorch(hide);
	f = diag__add(
		ctx, "exposed_communication", "Communication not overlapped with compute",
		diag_job__share(t, x[rep].transfer_ns), x[rep].transfer_ns, DIAG_HIGH,
		diag__fmt("NCCL's kernels run with no compute beside them for this share of each rank's "
			  "window: %s; of it, waiting for later ranks at the collectives: %s; the transfers: %s. "
			  "On rank %d, per step: communication %s, %s of it under compute, %s exposed: %s "
			  "waiting for later ranks, %s the transfers; compute (kernels, copies, memsets) %s, %s "
			  "of it with no communication beside it%s.%s",
			  list, waited_list, transfer_list, t->rank,
			  diag__ns(b[0], 32, (int64_t)(t->comm_ns / steps)),
			  diag__ns(b[1], 32, (int64_t)(t->hidden_ns / steps)),
			  diag__ns(b[2], 32, (int64_t)(t->exposed_ns / steps)),
			  diag__ns(b[3], 32, (int64_t)(x[rep].waited_exposed_ns / steps)),
			  diag__ns(b[4], 32, (int64_t)(x[rep].transfer_ns / steps)),
			  diag__ns(b[5], 32, (int64_t)(t->compute_ns / steps)),
			  diag__ns(b[6], 32, (int64_t)((t->compute_ns - t->hidden_ns) / steps)),
			  hide ? ": overlap can hide the exposed transfers under it"
			       : ", less than half the exposed transfers: overlap cannot hide most of them",
			  waiters),
		diag__with_pytorch(ctx, change, pytorch));
	change = NULL;
	rc = diag_job__set_ranks(f, j, on, ns, t->rank) ? nomem(err) : 0;
out:
	free(change);
	free(on);
	free(share);
	free(part);
	free(ns);
	free(by_rank);
	free(x);
	return rc;
}

/* ---- small collectives -------------------------------------------------------- */

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
		rc = diag__skip(ctx, "small_collectives", DIAG_JOB_NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	for (int k = 0; k < j->calls.n; k++) {
		const struct nccl_call *c = &j->calls.v[k];
		int ri = diag_job__rank_index(j, c->global_pid);

		if (ri < 0 || !call_in_window(j, c) || c->bytes < 0)
			continue;
		sized++;
		if (c->bytes > max_bytes)
			continue;
		count[ri]++;
		ns[ri] = prof_add_saturated(ns[ri], transfer_ns(j, k));
		bytes[ri] = prof_add_saturated(bytes[ri], c->bytes);
	}
	if (sized == 0) {
		rc = skip_no_sizes(ctx, "small_collectives", err);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		per_step[i] = (double)count[i] / diag_job__steps(&j->times.v[i]);
		on[i] = count[i] > 0 && per_step[i] >= min_per_iter;
		if (on[i] && (rep < 0 || diag_job__share(&j->times.v[i], ns[i]) > diag_job__share(&j->times.v[rep], ns[rep])))
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
		e->time_ns = prof_add_saturated(e->time_ns, transfer_ns(j, k));
		e->bytes = prof_add_saturated(e->bytes, c->bytes);
	}
	{
		const struct rank_time *t = &j->times.v[rep];

		diag_job__amounts(j, on, per_step, DIAG_JOB_COUNT, list, sizeof list);
		f = diag__add_ranked(
			ctx, &kinds, "small_collectives", "Many small collectives (latency-bound)", ns[rep], DIAG_HIGH,
			diag__fmt("Collectives of at most %s, per step: %s. On rank %d, %lld of them in the window, "
				  "%s on average, their kernels run %s (%s per step) less the time they waited "
				  "for later ranks. Each collective pays a fixed latency (its launch and the "
				  "handshake between the ranks) whatever its size.",
				  diag__bytes(b[0], 32, (double)max_bytes), list, t->rank, (long long)count[rep],
				  diag__bytes(b[1], 32, (double)bytes[rep] / (double)count[rep]),
				  diag__ns(b[2], 32, ns[rep]), diag__ns(b[3], 32, (int64_t)(ns[rep] / diag_job__steps(t)))),
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
			f->share = diag_job__share(t, ns[rep]);
			rc = diag_job__set_ranks(f, j, on, ns, t->rank) ? nomem(err) : 0;
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
		rc = diag__skip(ctx, "collective_bandwidth", DIAG_JOB_NO_NCCL) ? nomem(err) : 0;
		goto out;
	}
	if (!j->one_host) {
		rc = diag__skip(ctx, "collective_bandwidth", "the ranks are on several hosts: their link is "
				"the network, which `perfkit peaks` does not measure") ? nomem(err) : 0;
		goto out;
	}
	if (link <= 0) {
		rc = diag__skip(ctx, "collective_bandwidth", NCCL_NO_LINK "; without it no bandwidth is judged")
			     ? nomem(err) : 0;
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
		g->bytes = prof_add_saturated(g->bytes, col->bytes);
		g->ns += mean;
		g->factor_bytes += factor * (double)col->bytes;
	}
	if (sized == 0) {
		rc = skip_no_sizes(ctx, "collective_bandwidth", err);
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
		total = prof_add_saturated(total, (int64_t)lost);
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
			rc = diag_job__set_ranks(f, j, on, ns, -1) ? nomem(err) : 0;
		}
	}
out:
	free(ns);
	free(on);
	diag_tally__exit(&slow);
	return rc;
}

/* ---- the table ------------------------------------------------------------ */

/* Each judges time (overlap, transfer times): under kernel replay, whose
 * timeline is the profiler's, they do not run. */
const struct diag_rule diag_rules_collectives[] = {
	{ "exposed_communication", "Communication not overlapped with compute", rule_exposed, true },
	{ "small_collectives", "Many small collectives (latency-bound)", rule_small, true },
	{ "collective_bandwidth", "Collectives below the link's bandwidth", rule_bandwidth, true },
	{ NULL, NULL, NULL, false },
};
