/* diff_verdict.c - the one line that opens `perfkit diff`: how the GPU time
 * per iteration changed (or, without a loop on both sides, the totals with
 * a warning), on what basis, and the entries that changed it.
 *
 * The line says "faster" or "slower" only when something really changed:
 * per-iteration GPU time drifts a little between any two windows of the same
 * program, so a change that no kernel or copy explains (none moved beyond
 * its noise) reads as the same time, unless it is too large to be drift. */
#include "diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sink/symbol.h"
#include "model/window.h"

/* Within this relative change the GPU time is the same, whatever moved. */
#define SAME_TIME 0.005
/* A change of GPU time per iteration this large is reported even when no
 * entry moved beyond its noise. */
#define DRIFT_LIMIT 0.10
#define VERDICT_ENTRIES 3

/* A kernel's short name (sink/symbol.h), cut to a readable length on a
 * UTF-8 boundary: the verdict is one line. */
static void short_name(char *buf, size_t cap, const char *full)
{
	char name[256];
	size_t len = rpt_symbol__shorten(full, RPT_SYMBOL_SHORT, name, sizeof name);

	if (len >= sizeof name)
		len = sizeof name - 1;
	if (len > 48) {
		len = 48;
		while (len > 0 && ((unsigned char)name[len] & 0xC0) == 0x80)
			len--;
		snprintf(buf, cap, "%.*s...", (int)len, name);
		return;
	}
	snprintf(buf, cap, "%.*s", (int)len, name);
}

static void format_ratio(char *buf, size_t cap, double x)
{
	snprintf(buf, cap, x < 1.1 ? "%.2fx" : x < 10 ? "%.1fx" : "%.0fx", x);
}

/* Append to buf, never past cap. */
static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

/* "+5.1 us/iter", "−41 ms" (U+2212 MINUS SIGN, as in "flash_fwd −41 ms"). */
static void format_effect(char *buf, size_t cap, double ns, bool per_iteration)
{
	char t[32];
	int64_t v = llround(ns);

	diff_format_ns(t, sizeof t, v < 0 ? -v : v);
	snprintf(buf, cap, "%s%s%s", v < 0 ? "\xe2\x88\x92" : "+", t, per_iteration ? "/iter" : "");
}

/* The basis in brackets after the ratio. */
static void append_basis(const struct diff_result *r, char *buf, size_t cap)
{
	const struct sum_window *b = &r->base->loop, *n = &r->new->loop;

	if (b->iterations > 0 && n->iterations > 0 && !r->per_iteration)
		append(buf, cap, " (warning: the loops are marked differently, BASE's by %s, NEW's by"
				 " %s, so whole captures are compared; totals of windows of different"
				 " length do not compare)", b->source, n->source);
	else if (!r->per_iteration)
		append(buf, cap, " (warning: %s to count iterations by, so whole captures are"
				 " compared; totals of windows of different length do not compare)",
		       b->iterations == 0 && n->iterations == 0 ? "neither BASE nor NEW has a loop" :
		       b->iterations == 0			 ? "BASE has no loop" : "NEW has no loop");
	else if (b->iterations != n->iterations)
		append(buf, cap, " (BASE %d iterations, NEW %d: compared per iteration)", b->iterations,
		       n->iterations);
	else
		append(buf, cap, " (%d iterations each: compared per iteration)", b->iterations);
}

/* "+14% per launch", "2.0x slower per launch". */
static void append_per_launch(const struct diff_row *row, char *buf, size_t cap)
{
	double x = (double)row->new->median_ns / (double)row->base->median_ns;
	char ratio[32];

	if (x >= 1.5 || x <= 1 / 1.5) {
		format_ratio(ratio, sizeof ratio, x > 1 ? x : 1 / x);
		append(buf, cap, "%s %s per launch", ratio, x > 1 ? "slower" : "faster");
	} else {
		append(buf, cap, "%s%.0f%% per launch", x > 1 ? "+" : "\xe2\x88\x92", fabs(x - 1) * 100);
	}
}

/* "allreduce +14% per launch (+5.1 us/iter)", "gemm 1 → 2 calls/iter
 * (+20 us/iter)", "fused +30 us/iter (added)". */
static void append_entry(const struct diff_result *r, const struct diff_row *row, bool first,
			 char *buf, size_t cap)
{
	const struct diff_stat *st = row->new ? row->new : row->base;
	/* Out of the loop now, its launches' time costs the loop nothing. */
	bool per_launch = row->launch_changed && (!r->per_iteration || row->new_calls > 0);
	char name[160], effect[48];

	short_name(name, sizeof name, st->name);
	format_effect(effect, sizeof effect, row->effect_ns, r->per_iteration);
	append(buf, cap, "%s%s ", first ? ": " : ", ", name);
	if (row->change == DIFF_ADDED || row->change == DIFF_REMOVED) {
		append(buf, cap, "%s (%s)", effect, diff_change__name(row->change));
		return;
	}
	if (per_launch)
		append_per_launch(row, buf, cap);
	else if (!row->calls_changed)
		append(buf, cap, "%s", diff_change__name(row->change));
	/* U+2192 RIGHTWARDS ARROW: "11 → 0 calls/iter". */
	if (row->calls_changed)
		append(buf, cap, "%s%.3g \xe2\x86\x92 %.3g %s", per_launch ? ", " : "",
		       row->base_calls, row->new_calls, r->per_iteration ? "calls/iter" : "calls");
	append(buf, cap, " (%s)", effect);
}

/* What the changes beyond noise of kernels and copies add up to. */
static double explained_ns(const struct diff_result *r)
{
	double sum = 0;

	for (int id = DIFF_KERNELS; id <= DIFF_COPIES; id++)
		for (size_t i = 0; i < r->nrows[id]; i++)
			sum += r->rows[id][i].effect_ns;
	return sum;
}

/* The rows that changed the GPU time most, kernels and copies merged in
 * their sections' order. */
static size_t top_entries(const struct diff_result *r, const struct diff_row **top)
{
	size_t n = 0, ik = 0, ic = 0;

	while (n < VERDICT_ENTRIES) {
		const struct diff_row *k = ik < r->nrows[DIFF_KERNELS] ? &r->rows[DIFF_KERNELS][ik] : NULL;
		const struct diff_row *c = ic < r->nrows[DIFF_COPIES] ? &r->rows[DIFF_COPIES][ic] : NULL;
		const struct diff_row *pick;

		if (k && (k->change == DIFF_SAME || k->effect_ns == 0))
			k = NULL;
		if (c && (c->change == DIFF_SAME || c->effect_ns == 0))
			c = NULL;
		if (k && c)
			pick = fabs(k->effect_ns) >= fabs(c->effect_ns) ? k : c;
		else
			pick = k ? k : c;
		if (!pick)
			break;
		if (pick == k)
			ik++;
		else
			ic++;
		top[n++] = pick;
	}
	return n;
}

/* The GPU-time verdict: what a pair without steps on both sides says. */
static void gpu_verdict(const struct diff_result *r, char *buf, size_t cap)
{
	const struct diff_profile *bp = r->base, *np = r->new;
	const char *per = r->per_iteration ? " per iteration" : "";
	double b = (double)(r->per_iteration ? bp->loop_gpu_time_ns : bp->gpu_time_ns) / r->base_iterations;
	double n = (double)(r->per_iteration ? np->loop_gpu_time_ns : np->gpu_time_ns) / r->new_iterations;
	double explained = explained_ns(r);
	char t[32], x[32], e[48];

	if (b == 0 && n == 0) {
		append(buf, cap, "neither BASE nor NEW has GPU activity%s", r->per_iteration ? " in its loop" : "");
	} else if (b == 0) {
		diff_format_ns(t, sizeof t, llround(n));
		append(buf, cap, "NEW has %s of GPU time%s, BASE none", t, per);
	} else if (n == 0) {
		diff_format_ns(t, sizeof t, llround(b));
		append(buf, cap, "NEW has no GPU activity%s, BASE had %s", r->per_iteration ? " in its loop" : "", t);
	} else if (fabs(n - b) <= SAME_TIME * b ||
		   (fabs(explained) <= SAME_TIME * b && fabs(n - b) <= DRIFT_LIMIT * b)) {
		diff_format_ns(t, sizeof t, llround(b));
		append(buf, cap, "NEW takes the same GPU time%s as BASE (%s", per, t);
		format_effect(e, sizeof e, explained, r->per_iteration);
		if (fabs(n - b) > SAME_TIME * b && explained == 0)
			append(buf, cap, "; %+.1f%% in these windows, but no kernel or copy changed beyond"
					 " noise", 100 * (n - b) / b);
		else if (fabs(n - b) > SAME_TIME * b)
			append(buf, cap, "; %+.1f%% in these windows, but what changed beyond noise adds up"
					 " to %s", 100 * (n - b) / b, e);
		append(buf, cap, ")");
	} else {
		format_ratio(x, sizeof x, n < b ? b / n : n / b);
		append(buf, cap, "NEW is %s %s%s on the GPU", x, n < b ? "faster" : "slower", per);
	}
}

/* "7.43 ms → 30.5 ms median (IQR 102 us → 340 us)". */
static void append_steps(const struct diff_profile *b, const struct diff_profile *n, char *buf,
			 size_t cap)
{
	char t[4][32];

	diff_format_ns(t[0], sizeof t[0], b->step_med_ns);
	diff_format_ns(t[1], sizeof t[1], n->step_med_ns);
	diff_format_ns(t[2], sizeof t[2], b->step_q3_ns - b->step_q1_ns);
	diff_format_ns(t[3], sizeof t[3], n->step_q3_ns - n->step_q1_ns);
	append(buf, cap, "%s \xe2\x86\x92 %s median (IQR %s \xe2\x86\x92 %s)", t[0], t[1], t[2], t[3]);
}

/* The step's verdict: "NEW's step is 18x faster: 20.2 ms → 1.10 ms median
 * (IQR ...) per step of NVTX range "step" (BASE 10 steps, NEW 10)". */
static void step_verdict(const struct diff_result *r, const char *who, char *buf, size_t cap)
{
	const struct diff_profile *b = r->base, *n = r->new;
	double x = (double)n->step_med_ns / (double)(b->step_med_ns ? b->step_med_ns : 1);
	char ratio[32];

	if (!r->step_changed) {
		append(buf, cap, "%s step takes the same wall time as BASE's (within noise): ", who);
	} else {
		format_ratio(ratio, sizeof ratio, x > 1 ? x : 1 / x);
		append(buf, cap, "%s step is %s %s: ", who, ratio, x > 1 ? "slower" : "faster");
	}
	append_steps(b, n, buf, cap);
	append(buf, cap, " wall time per step of %s (BASE %d steps, NEW %d)", b->loop.source[0] ?
	       b->loop.source : "the loop", b->loop.iterations, n->loop.iterations);
}

/* "; GPU time per step 19.2 ms → 4.01 ms (4.8x less)". */
static void append_gpu(const struct diff_result *r, char *buf, size_t cap)
{
	double b = (double)r->base->loop_gpu_time_ns / r->base_iterations;
	double n = (double)r->new->loop_gpu_time_ns / r->new_iterations;
	char t[2][32], x[32];

	diff_format_ns(t[0], sizeof t[0], llround(b));
	diff_format_ns(t[1], sizeof t[1], llround(n));
	append(buf, cap, "; GPU time per step %s \xe2\x86\x92 %s", t[0], t[1]);
	if (b > 0 && n > 0 && fabs(n - b) > SAME_TIME * b) {
		format_ratio(x, sizeof x, n < b ? b / n : n / b);
		append(buf, cap, " (%s %s)", x, n < b ? "less" : "more");
	}
}

/* The top changes, each with its share of the step's change. */
static void append_top(const struct diff_result *r, bool with_share, char *buf, size_t cap)
{
	const struct diff_row *top[VERDICT_ENTRIES];
	size_t ntop = top_entries(r, top);
	double change = (double)r->new->step_med_ns - (double)r->base->step_med_ns;

	for (size_t i = 0, shown = 0; i < ntop; i++) {
		double share = change != 0 ? 100 * top[i]->effect_ns / change : 0;

		/* what explains under 1% of the step's change is not why it changed */
		if (with_share && change != 0 && fabs(share) < 1)
			continue;
		append_entry(r, top[i], shown++ == 0, buf, cap);
		if (with_share && change != 0)
			append(buf, cap, " [%.0f%% of the step's change]", share);
	}
}

static bool has_steps(const struct diff_result *r)
{
	return r->per_iteration && r->base->nsteps > 0 && r->new->nsteps > 0;
}

/* One process against one (or a rank against its rank). */
static void pair_verdict(const struct diff_result *r, const char *who, char *buf, size_t cap)
{
	if (!has_steps(r)) {
		gpu_verdict(r, buf, cap);
		append_basis(r, buf, cap);
		append_top(r, false, buf, cap);
		return;
	}
	step_verdict(r, who, buf, cap);
	append_gpu(r, buf, cap);
	append_top(r, true, buf, cap);
}

/* GPU time of a rank per step, NCCL's kernels left out: its own work. */
static double compute_per_step(const struct diff_profile *p)
{
	double ns = 0;

	if (p->loop.iterations <= 0)
		return 0;
	for (int sec = DIFF_KERNELS; sec <= DIFF_COPIES; sec++)
		for (size_t i = 0; i < p->sec[sec].n; i++)
			if (strncmp(p->sec[sec].v[i].name, "nccl", 4) != 0)
				ns += (double)p->sec[sec].v[i].loop_total_ns;
	return ns / p->loop.iterations;
}

static const struct diff_profile *job_rank(const struct diff_profile *job, int rank)
{
	for (int i = 0; i < job->nranks; i++)
		if (job->ranks[i].rank == rank)
			return &job->ranks[i];
	return NULL;
}

/* "; in NEW rank 1 arrives last at 22 of 26 collectives, the others wait
 * 21 ms per step for it; what it does more: host work (...)". */
static void append_straggler(const struct diff_profile *job, const char *side, char *buf, size_t cap)
{
	const struct diff_profile *s = job_rank(job, job->straggler_rank), *w = NULL;
	double s_own, w_own, s_host, w_host;
	char t[2][32];

	if (!s || s->loop.iterations <= 0)
		return;
	diff_format_ns(t[0], sizeof t[0], job->straggler_wait_ns / s->loop.iterations);
	append(buf, cap, "; in %s %s arrives last at %" PRId64 " of %" PRId64 " collectives and the"
	       " others wait %s per step for it", side, s->rank_name, job->late_collectives,
	       job->collectives, t[0]);
	/* against the rank with the least own work: the one that waits most */
	for (int i = 0; i < job->nranks; i++)
		if (&job->ranks[i] != s && job->ranks[i].loop.iterations > 0 &&
		    (!w || compute_per_step(&job->ranks[i]) < compute_per_step(w)))
			w = &job->ranks[i];
	if (!w)
		return;
	s_own = compute_per_step(s);
	w_own = compute_per_step(w);
	/* the step's wall time its own GPU work does not fill: its host */
	s_host = (double)s->step_med_ns - s_own;
	w_host = (double)w->step_med_ns - w_own - (double)job->straggler_wait_ns / s->loop.iterations;
	if (s_own - w_own >= s_host - w_host) {
		diff_format_ns(t[1], sizeof t[1], llround(s_own - w_own));
		append(buf, cap, "; what it does more: GPU work, +%s per step over %s", t[1], w->rank_name);
	} else {
		diff_format_ns(t[1], sizeof t[1], llround(s_host - w_host));
		append(buf, cap, "; what it does more: host work, +%s per step outside its GPU work"
		       " over %s", t[1], w->rank_name);
	}
}

/* Two jobs: the slowest rank's step first (what the job waits for), the
 * straggler and what it does more, then that rank's changes. */
static void job_verdict(const struct diff_result *r, char *buf, size_t cap)
{
	const struct diff_result *slow = &r->ranks[r->slowest];
	char who[64];

	append(buf, cap, "job of %d rank%s", r->new->nranks, r->new->nranks == 1 ? "" : "s");
	if (r->base->nranks != r->new->nranks)
		append(buf, cap, " (BASE has %d: the %d both have compared)", r->base->nranks, r->nranks);
	append(buf, cap, ", compared rank with rank; the slowest rank is %s: ", slow->new->rank_name);
	snprintf(who, sizeof who, "its");
	pair_verdict(slow, who, buf, cap);
	if (r->base->straggler_rank >= 0)
		append_straggler(r->base, "BASE", buf, cap);
	if (r->new->straggler_rank >= 0)
		append_straggler(r->new, "NEW", buf, cap);
	else if (r->base->straggler_rank >= 0)
		append(buf, cap, "; in NEW no rank keeps the others waiting");
}

int diff__verdict(const struct diff_result *r, char *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	buf[0] = '\0';
	if (r->nranks > 0 && r->slowest >= 0) {
		job_verdict(r, buf, cap);
		return 0;
	}
	if (r->base->nranks != r->new->nranks)
		append(buf, cap, "%s is a job of %d ranks and %s one process: whole captures"
		       " compared; ", r->base->nranks ? "BASE" : "NEW",
		       r->base->nranks ? r->base->nranks : r->new->nranks, r->base->nranks ? "NEW" : "BASE");
	pair_verdict(r, "NEW's", buf, cap);
	return 0;
}
