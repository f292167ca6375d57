/* diff_job.c - which rank a job's other ranks wait for, for the verdict of
 * a diff of two jobs: NCCL's collectives matched across the ranks
 * (analysis/ranks/nccl.h), each one's last arrival and what the others
 * waited for it, and the straggler by the rule diagnose's straggler
 * finding applies (job_judge__straggler) with its default thresholds. */
#include "diff_job.h"

#include <stdlib.h>

#include "analysis/ranks/job_judge.h"
#include "analysis/ranks/nccl.h"
#include "model/ranks.h"
#include "prof/error.h"
#include "prof/saturate.h"

/* diagnose's defaults (straggler.min_wait_share, .min_late_collectives,
 * .min_late_fraction): one rule for both commands. */
#define LATE_WAIT_SHARE 0.05
#define LATE_MIN_COLLECTIVES 3
#define LATE_MIN_FRACTION 0.75

/* The span of the ranks' loops and their longest median step. */
static void loops_span(const struct diff_profile *p, int64_t *from, int64_t *to, int64_t *step)
{
	*from = INT64_MAX;
	*to = INT64_MIN;
	*step = 0;
	for (int i = 0; i < p->nranks; i++) {
		const struct diff_profile *r = &p->ranks[i];

		if (r->loop.iterations <= 0)
			continue;
		if (r->loop.start_ns < *from)
			*from = r->loop.start_ns;
		if (r->loop.end_ns > *to)
			*to = r->loop.end_ns;
		if (r->step_med_ns > *step)
			*step = r->step_med_ns;
	}
}

static int rank_index(const struct diff_profile *p, int rank)
{
	for (int i = 0; i < p->nranks; i++)
		if (p->ranks[i].rank == rank)
			return i;
	return -1;
}

/* The others' mean wait at collective c. */
static int64_t mean_wait(const struct nccl_collective *c, const int64_t *wait_ns, int last)
{
	int64_t sum = 0;
	int n = 0;

	for (int i = 0; i < c->ncalls; i++) {
		if (c->calls[i] < 0 || c->calls[i] == last || wait_ns[c->calls[i]] < 0)
			continue;
		sum = prof_add_saturated(sum, wait_ns[c->calls[i]]);
		n++;
	}
	return n ? sum / n : 0;
}

int diff_job__load_waits(struct diff_profile *p, struct prof_store *s, const struct sum_ranks *rk,
			 struct prof_error *err)
{
	struct nccl_calls calls = { 0 };
	struct nccl_collectives cs = { 0 };
	struct job_lateness *late = NULL;
	int64_t *wait_ns = NULL, from, to, step, margin;
	int *last_call = NULL, rc;

	p->straggler_rank = -1;
	loops_span(p, &from, &to, &step);
	if (p->nranks < 2 || step <= 0)
		return 0;
	rc = nccl_calls__load(s, rk, &calls, err);
	if (rc < 0)
		return rc;
	if (calls.n == 0)
		goto out;
	rc = nccl_collectives__match(&calls, &cs, err);
	if (rc < 0)
		goto out;
	wait_ns = calloc((size_t)calls.n, sizeof *wait_ns);
	last_call = calloc((size_t)cs.n + 1, sizeof *last_call);
	late = calloc((size_t)p->nranks, sizeof *late);
	if (!wait_ns || !last_call || !late) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = nccl_collectives__waits(&calls, &cs, wait_ns, last_call);
	if (rc < 0) {
		rc = prof_error__set(err, rc, "out of memory");
		goto out;
	}
	margin = (int64_t)(LATE_WAIT_SHARE * (double)step);
	for (int c = 0; c < cs.n; c++) {
		int li;
		int64_t w;

		if (last_call[c] < 0 || cs.v[c].last_arrival_ns < from || cs.v[c].last_arrival_ns > to)
			continue;
		p->collectives++;
		w = mean_wait(&cs.v[c], wait_ns, last_call[c]);
		li = rank_index(p, calls.v[last_call[c]].rank);
		if (li < 0 || w <= 0 || w < margin)
			continue;
		late[li].late_count++;
		late[li].late_wait_ns = prof_add_saturated(late[li].late_wait_ns, w);
	}
	rc = job_judge__straggler(late, p->nranks, LATE_MIN_COLLECTIVES, LATE_MIN_FRACTION);
	if (rc >= 0) {
		p->straggler_rank = p->ranks[rc].rank;
		p->late_collectives = late[rc].late_count;
		p->straggler_wait_ns = late[rc].late_wait_ns;
	}
	rc = 0;
out:
	free(late);
	free(wait_ns);
	free(last_call);
	nccl_collectives__exit(&cs);
	nccl_calls__exit(&calls);
	return rc;
}
