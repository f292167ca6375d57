/* job_plan.c - a job's captures probed, its hosts numbered, and each
 * capture's mapping onto one time base and one space of process ids. */
#include "job_impl.h"
#include "job_mpi.h"
#include "model/threads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Indexes above the pid bits that a globalPid can hold (bit 63 stays 0). */
#define MAX_ID_INDEX ((1 << (63 - PROF_GLOBAL_HOST_SHIFT)) - 1)

const char *job_time_base__name(enum job_time_base b)
{
	switch (b) {
	case JOB_TIME_ONE_HOST:
		return "one host";
	case JOB_TIME_CLOCKS:
		return "clock pairs";
	case JOB_TIME_COLLECTIVES:
		return "collectives";
	case JOB_TIME_UNALIGNED:
		return "unaligned (not every host recorded clock pairs)";
	}
	return "?";
}

static int number_hosts(struct job_plan *p, struct prof_error *err)
{
	for (int i = 0; i < p->n; i++) {
		int g = 0;

		while (g < i && strcmp(p->c[g].host, p->c[i].host))
			g++;
		p->c[i].group = g < i ? p->c[g].group : p->nhosts++;
	}
	/* Captures of one host whose processes share a pid (two runs one after
	 * the other, pid namespaces of containers) get indexes of their own
	 * above the hosts', so their processes stay apart too. */
	int next = p->nhosts;
	bool moved = false;

	for (int i = 0; i < p->n; i++) {
		p->c[i].id_index = p->c[i].group;
		for (int j = 0; j < i; j++) {
			if (p->c[j].id_index == p->c[i].id_index &&
			    job_capture__shares_pid(&p->c[j], &p->c[i])) {
				p->c[i].id_index = next++;
				moved = true;
				j = -1; /* the new index must be checked against all again */
			}
		}
		if (p->c[i].id_index > MAX_ID_INDEX)
			return prof_error__set(err, PROF_E_USAGE,
					       "a job of more than %d hosts is more than one "
					       "capture can number", MAX_ID_INDEX + 1);
	}
	for (int i = 0; i < p->n; i++)
		p->maps[i].host_index = p->nhosts > 1 || moved ? p->c[i].id_index : -1;
	return 0;
}

static int64_t capture_span(const struct job_capture *c)
{
	if (c->has_span)
		return c->duration_ns;
	if (c->has_clock_start && c->has_clock_end)
		return c->clock_end.timestamp_ns - c->clock_start.timestamp_ns;
	return 0;
}

/* How long a host's captures last together: from its earliest clock pair
 * to its latest, else its longest capture. Every capture of a host is
 * judged by it, so that two captures of one host never disagree on
 * whether a rate is applied: they must never move against each other. */
static int64_t host_span(const struct job_plan *p, const struct job_host_clock *h, int g)
{
	int64_t span = 0;

	if (h->has_start && h->has_end && h->end.timestamp_ns > h->start.timestamp_ns)
		return h->end.timestamp_ns - h->start.timestamp_ns;
	for (int i = 0; i < p->n; i++)
		if (p->c[i].group == g && capture_span(&p->c[i]) > span)
			span = capture_span(&p->c[i]);
	return span;
}

/* Host 0's captures stay as they are; every other host moves onto its
 * clock when both recorded clock pairs. */
static void align_clocks(struct job_plan *p, struct job_host_clock *h)
{
	bool all = true;

	for (int i = 0; i < p->n; i++)
		job_host_clock__add(&h[p->c[i].group], &p->c[i]);
	for (int g = 0; g < p->nhosts; g++)
		p->host_span_ns[g] = host_span(p, &h[g], g);
	p->time_base = p->nhosts == 1 ? JOB_TIME_ONE_HOST : JOB_TIME_CLOCKS;
	p->error_ns = p->nhosts == 1 ? 0 : -1;
	for (int i = 0; i < p->n && p->nhosts > 1; i++)
		if (p->c[i].group != 0 &&
		    !job_time__clock_map(&h[0], &h[p->c[i].group], p->host_span_ns[p->c[i].group],
					 &p->maps[i]))
			all = false;
	if (!all) {
		/* moving some hosts and not others would only look aligned */
		for (int i = 0; i < p->n; i++) {
			p->maps[i].shift_ns = 0;
			p->maps[i].rate = 0;
			p->maps[i].pivot_ns = 0;
		}
		p->time_base = JOB_TIME_UNALIGNED;
	}
}

/* This process's share of the captures: MPI process rank of size. */
struct share {
	const struct job_inputs *in;
	struct job_plan *plan;
	int rank, size;
};

int job_share__count(int n, int rank, int size)
{
	return n > rank ? (n - rank + size - 1) / size : 0;
}

/* Under MPI, the probes' part of every other share, from the process that
 * read it; rc and failed: this share's outcome (failed: its index in the
 * share that failed first). Every process sends, failed or not, so that
 * none waits forever, and all end with the same outcome: the failure of
 * the first capture that failed, over every share, as one process reading
 * them all in order would have it. A process that failed reads only
 * whether the others did. */
static int gather_share(struct share *sh, enum job_probe_part part, int rc, int failed,
			struct prof_error *err)
{
	char *buf = NULL, **bufs = NULL;
	size_t len = 0, *lens = NULL;
	int first = rc ? sh->rank + failed * sh->size : -1, first_rc = rc;
	struct prof_error first_err = *err;
	int grc = 0;

	if (job_share__pack(sh->plan, sh->rank, sh->size, part, first, rc, err, &buf, &len))
		grc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (job_mpi__allgather(buf, len, &bufs, &lens) < 0 && !grc)
		grc = prof_error__set(err, PROF_E_IO, "the MPI processes could not gather their probes");
	for (int r = 0; r < sh->size; r++) {
		struct job_plan *into = rc ? NULL : sh->plan;
		struct prof_error e = { 0 };
		int f = -1, erc = 0;

		if (!grc && r != sh->rank &&
		    job_share__unpack(into, r, sh->size, part, bufs[r], lens[r], &f, &erc, &e))
			grc = prof_error__set(err, PROF_E_CORRUPT, "MPI process %d sent damaged probes", r);
		if (f >= 0 && (first < 0 || f < first)) {
			first = f;
			first_rc = erc;
			first_err = e;
		}
		free(bufs ? bufs[r] : NULL);
	}
	free(bufs);
	free(lens);
	free(buf);
	if (grc)
		return grc;
	if (first >= 0)
		*err = first_err;
	return first >= 0 ? first_rc : 0;
}

static int read_collectives(void *arg, int k, struct prof_error *err)
{
	struct share *sh = arg;

	return job_capture__read_collectives(&sh->plan->c[sh->rank + k * sh->size], err);
}

/* Refine the time base from the matched ends of NCCL collectives, where
 * they join every host to the first: each host's times move by the line
 * (offset, and rate where the collectives show one) that brings its ends
 * of each collective to the others'. Each process reads its share's
 * collectives; every process fits them all. */
static int refine_from_collectives(struct share *sh, struct prof_error *err)
{
	struct job_plan *p = sh->plan;
	struct job_end_obs *obs = NULL;
	struct job_time_fit fit = { 0 };
	size_t n = 0, cap = 0;
	int rc = 0, failed;

	rc = threads__each(job_share__count(p->n, sh->rank, sh->size), threads__count(),
				read_collectives, sh, NULL, NULL, &failed, err);
	if (sh->size > 1)
		rc = gather_share(sh, JOB_PROBE_COLLECTIVES, rc, failed, err);
	for (int i = 0; i < p->n && !rc; i++)
		cap += (size_t)p->c[i].nnccl;
	if (rc || !cap)
		return rc;
	obs = malloc(cap * sizeof *obs);
	fit.lines = calloc((size_t)p->nhosts, sizeof *fit.lines);
	if (!obs || !fit.lines) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < p->c[i].nnccl; k++)
			obs[n++] = (struct job_end_obs){
				.key = p->c[i].nccl[k].key,
				.group = p->c[i].group,
				.end_ns = job_time__apply(&p->maps[i], p->c[i].nccl[k].end_ns),
				.dur_ns = p->c[i].nccl[k].dur_ns,
			};
	if (job_time__fit_collectives(obs, n, p->nhosts, &fit)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	if (fit.error_ns >= 0) {
		for (int i = 0; i < p->n; i++)
			job_time__refine(&p->maps[i], &fit.lines[p->c[i].group], fit.pivot_ns,
					 p->host_span_ns[p->c[i].group]);
		p->time_base = JOB_TIME_COLLECTIVES;
		p->error_ns = fit.error_ns;
		p->collectives = fit.matched;
	}
out:
	free(obs);
	free(fit.lines);
	return rc;
}

static int probe_one(void *arg, int k, struct prof_error *err)
{
	struct share *sh = arg;
	int i = sh->rank + k * sh->size;

	return job_capture__probe(sh->in->paths[i], true, &sh->plan->c[i], err);
}

/* Each capture probed by the process whose share it is, on every core;
 * under MPI the other shares' probes gathered. Every process first notes
 * the state of every capture (job_plan__unchanged compares it at the
 * end), all before any process probes one, so that a change during
 * another process's probe shows. rc: how the plan went so far (a process
 * that failed still gathers, as the first of its share). */
static int probe_share(struct share *sh, int rc, struct prof_error *err)
{
	struct job_plan *p = sh->plan;
	int failed = 0;

	for (int i = 0; i < p->n && sh->size > 1 && !rc; i++) {
		if (i % sh->size == sh->rank)
			continue;
		if (!(p->c[i].path = strdup(sh->in->paths[i])))
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		else if (prof_file_state__read(p->c[i].path, &p->c[i].state, NULL))
			memset(&p->c[i].state, 0, sizeof p->c[i].state);
	}
	if (sh->size > 1)
		job_mpi__barrier();
	if (!rc)
		rc = threads__each(job_share__count(p->n, sh->rank, sh->size), threads__count(),
					probe_one, sh, NULL, NULL, &failed, err);
	return sh->size > 1 ? gather_share(sh, JOB_PROBE_META, rc, failed, err) : rc;
}

int job_plan__make(const struct job_inputs *in, struct job_plan *plan, struct prof_error *err)
{
	return job_plan__make_share(in, 0, 1, plan, err);
}

int job_plan__make_share(const struct job_inputs *in, int rank, int size, struct job_plan *plan,
			 struct prof_error *err)
{
	struct share sh = { in, plan, rank, size };
	int rc = 0;

	memset(plan, 0, sizeof *plan);
	plan->parts = JOB_PART_OVERVIEW;
	if (in->n <= 0)
		return prof_error__set(err, PROF_E_USAGE, "a job needs at least one capture");
	snprintf(plan->name, sizeof plan->name, "%s", in->name ? in->name : "");
	plan->c = calloc((size_t)in->n, sizeof *plan->c);
	plan->maps = calloc((size_t)in->n, sizeof *plan->maps);
	if (plan->c && plan->maps)
		plan->n = in->n;
	else
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = probe_share(&sh, rc, err);
	if (!rc)
		rc = job_plan__check_together(plan, in->force, err);
	if (!rc)
		rc = number_hosts(plan, err);
	if (!rc) {
		struct job_host_clock *h = calloc((size_t)plan->nhosts, sizeof *h);

		plan->host_span_ns = calloc((size_t)plan->nhosts, sizeof *plan->host_span_ns);
		if (h && plan->host_span_ns)
			align_clocks(plan, h);
		else
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		free(h);
	}
	if (!rc && plan->nhosts > 1)
		rc = refine_from_collectives(&sh, err);
	if (rc)
		job_plan__exit(plan);
	return rc;
}

int job_plan__unchanged(const struct job_plan *p, struct prof_error *err)
{
	for (int i = 0; i < p->n; i++) {
		struct prof_file_state now;

		if (prof_file_state__read(p->c[i].path, &now, NULL) ||
		    !prof_file_state__same(&now, &p->c[i].state))
			return prof_file__changed(p->c[i].path, err);
	}
	return 0;
}

void job_plan__exit(struct job_plan *plan)
{
	for (int i = 0; i < plan->n; i++)
		job_capture__exit(&plan->c[i]);
	free(plan->c);
	free(plan->maps);
	free(plan->host_span_ns);
	memset(plan, 0, sizeof *plan);
}
