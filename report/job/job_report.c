/* job_report.c - the reports of a job printed from its map and reduce:
 * the same rows, through the same functions, as summary__run prints of
 * the job's merged capture. */
#include "job_impl.h"

#include <stdlib.h>
#include <string.h>

struct job_report {
	struct job_plan plan;
	struct job_summary sum;
};

bool job_report__can(const char *name)
{
	return !strcmp(name, "overview") || !strcmp(name, "cuda_gpu_kern_sum");
}

int job_report__compute(const struct job_inputs *in, struct job_report **out,
			struct prof_error *err)
{
	struct job_report *r = calloc(1, sizeof *r);
	int rc;

	*out = NULL;
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = job_plan__make(in, &r->plan, err);
	if (!rc)
		rc = job_summary__compute(&r->plan, job_summary__threads(), &r->sum, err);
	if (rc <= 0) {
		job_report__delete(r);
		return rc;
	}
	*out = r;
	return 1;
}

int job_report__emit(struct job_report *r, const char *name, struct rpt_sink *sink,
		     struct prof_error *err)
{
	int rc;

	if (!strcmp(name, "overview")) {
		struct sum_overview o;

		rc = job_summary__overview(&r->plan, &r->sum, &o, err);
		if (!rc)
			rc = sum_overview__emit(&o, sink, err);
		sum_overview__exit(&o);
		return rc;
	}
	if (!strcmp(name, "cuda_gpu_kern_sum")) {
		struct sum_groups gs = { 0 };

		rc = job_summary__kern_sum(&r->sum, &gs, err);
		if (!rc)
			rc = sum_kernel_groups__emit(&gs, sink, err);
		sum_groups__exit(&gs);
		return rc;
	}
	return prof_error__set(err, PROF_E_USAGE, "%s: not a report of a job's map and reduce", name);
}

int64_t job_report__dropped(const struct job_report *r)
{
	return r->sum.dropped;
}

void job_report__delete(struct job_report *r)
{
	if (!r)
		return;
	job_summary__exit(&r->sum);
	job_plan__exit(&r->plan);
	free(r);
}
