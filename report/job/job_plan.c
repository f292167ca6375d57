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

/* Host 0's captures stay as they are; every other host moves onto its
 * clock when both recorded clock pairs. */
static int align_clocks(struct job_plan *p, struct prof_error *err)
{
	struct job_host_clock *h = calloc((size_t)p->nhosts, sizeof *h);
	bool all = true;

	if (!h)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; i < p->n; i++)
		job_host_clock__add(&h[p->c[i].group], &p->c[i]);
	p->time_base = p->nhosts == 1 ? JOB_TIME_ONE_HOST : JOB_TIME_CLOCKS;
	p->error_ns = p->nhosts == 1 ? 0 : -1;
	for (int i = 0; i < p->n && p->nhosts > 1; i++)
		if (p->c[i].group != 0 &&
		    !job_time__clock_map(&h[0], &h[p->c[i].group], capture_span(&p->c[i]), &p->maps[i]))
			all = false;
	if (!all) {
		/* moving some hosts and not others would only look aligned */
		for (int i = 0; i < p->n; i++) {
			p->maps[i].shift_ns = 0;
			p->maps[i].rate = 0;
		}
		p->time_base = JOB_TIME_UNALIGNED;
	}
	free(h);
	return 0;
}

/* Refine the time base from the matched ends of NCCL collectives, where
 * they join every host to the first: each host moves by the offset that
 * brings its ends of each collective to the others'. */
static int refine_from_collectives(struct job_plan *p, struct prof_error *err)
{
	struct job_end_obs *obs = NULL;
	double *offsets = NULL, rms;
	size_t n = 0, cap = 0;
	int matched = 0, rc = 0;

	for (int i = 0; i < p->n && !rc; i++)
		rc = job_capture__read_collectives(&p->c[i], err);
	for (int i = 0; i < p->n && !rc; i++)
		cap += (size_t)p->c[i].nnccl;
	if (rc || !cap)
		return rc;
	obs = malloc(cap * sizeof *obs);
	offsets = calloc((size_t)p->nhosts, sizeof *offsets);
	if (!obs || !offsets) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < p->c[i].nnccl; k++)
			obs[n++] = (struct job_end_obs){
				.key_hash = p->c[i].nccl[k].name_hash,
				.key_ordinal = p->c[i].nccl[k].ordinal,
				.group = p->c[i].group,
				.end_ns = job_time__apply(&p->maps[i], p->c[i].nccl[k].end_ns),
			};
	if (job_time__fit_collectives(obs, n, p->nhosts, offsets, &rms, &matched)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	if (rms >= 0) {
		for (int i = 0; i < p->n; i++)
			p->maps[i].shift_ns += llround(offsets[p->c[i].group]);
		p->time_base = JOB_TIME_COLLECTIVES;
		p->error_ns = rms;
		p->collectives = matched;
	}
out:
	free(obs);
	free(offsets);
	return rc;
}

int job_plan__make(const struct job_inputs *in, struct job_plan *plan, struct prof_error *err)
{
	int rc = 0;

	memset(plan, 0, sizeof *plan);
	if (in->n <= 0)
		return prof_error__set(err, PROF_E_USAGE, "a job needs at least one capture");
	snprintf(plan->name, sizeof plan->name, "%s", in->name ? in->name : "");
	plan->c = calloc((size_t)in->n, sizeof *plan->c);
	plan->maps = calloc((size_t)in->n, sizeof *plan->maps);
	if (!plan->c || !plan->maps) {
		job_plan__exit(plan);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < in->n && !rc; i++) {
		rc = job_capture__probe(in->paths[i], true, &plan->c[i], err);
		plan->n = i + 1;
	}
	if (!rc)
		rc = number_hosts(plan, err);
	if (!rc)
		rc = align_clocks(plan, err);
	if (!rc && plan->nhosts > 1)
		rc = refine_from_collectives(plan, err);
	if (rc)
		job_plan__exit(plan);
	return rc;
}

void job_plan__exit(struct job_plan *plan)
{
	for (int i = 0; i < plan->n; i++)
		job_capture__exit(&plan->c[i]);
	free(plan->c);
	free(plan->maps);
	memset(plan, 0, sizeof *plan);
}
