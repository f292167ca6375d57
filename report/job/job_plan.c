/* job_plan.c - a job's captures probed, its hosts numbered, and each
 * capture's mapping onto one time base and one space of process ids. */
#include "job_impl.h"

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

static int read_collectives(void *arg, int i, struct prof_error *err)
{
	struct job_plan *p = arg;

	return job_capture__read_collectives(&p->c[i], err);
}

/* Refine the time base from the matched ends of NCCL collectives, where
 * they join every host to the first: each host's times move by the line
 * (offset, and rate where the collectives show one) that brings its ends
 * of each collective to the others'. */
static int refine_from_collectives(struct job_plan *p, struct prof_error *err)
{
	struct job_end_obs *obs = NULL;
	struct job_time_fit fit = { 0 };
	size_t n = 0, cap = 0;
	int rc = 0;

	rc = job_parallel__each(p->n, job_summary__threads(), read_collectives, p, err);
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

struct probe {
	const struct job_inputs *in;
	struct job_plan *plan;
	int rank, size;
};

static int probe_one(void *arg, int i, struct prof_error *err)
{
	struct probe *pr = arg;

	return job_capture__probe(pr->in->paths[i], true, i % pr->size == pr->rank, &pr->plan->c[i], err);
}

int job_plan__make(const struct job_inputs *in, struct job_plan *plan, struct prof_error *err)
{
	return job_plan__make_share(in, 0, 1, plan, err);
}

int job_plan__make_share(const struct job_inputs *in, int rank, int size, struct job_plan *plan,
			 struct prof_error *err)
{
	int rc = 0;

	memset(plan, 0, sizeof *plan);
	plan->parts = JOB_PART_OVERVIEW;
	if (in->n <= 0)
		return prof_error__set(err, PROF_E_USAGE, "a job needs at least one capture");
	snprintf(plan->name, sizeof plan->name, "%s", in->name ? in->name : "");
	plan->c = calloc((size_t)in->n, sizeof *plan->c);
	plan->maps = calloc((size_t)in->n, sizeof *plan->maps);
	if (!plan->c || !plan->maps) {
		job_plan__exit(plan);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	/* each capture's probe on its own: on every core */
	plan->n = in->n;
	{
		struct probe pr = { in, plan, rank, size };

		rc = job_parallel__each(in->n, job_summary__threads(), probe_one, &pr, err);
	}
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
		rc = refine_from_collectives(plan, err);
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
