/* job_report.c - the reports of a job printed from its map and reduce:
 * the same rows, through the same functions, as registry__run prints of
 * the job's merged capture. */
#include "job_impl.h"
#include "job_mpi.h"
#include "model/groups.h"
#include "model/overview.h"
#include "model/threads.h"
#include "prof/error.h"

#include <stdlib.h>
#include <string.h>

struct job_report {
	struct job_plan plan;
	struct job_summary sum;
};

/* The reports a map and reduce prints, and what each needs of a capture. */
static const struct {
	const char *name;
	unsigned parts;
} reports[] = {
	{ "overview", JOB_PART_OVERVIEW },
	{ "cuda_gpu_kern_sum", JOB_PART_OVERVIEW },
	{ "rank_sum", JOB_PART_RANKS },
	{ "nccl_sum", JOB_PART_NCCL },
};

static unsigned parts_of(const char *name)
{
	for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++)
		if (!strcmp(name, reports[i].name))
			return reports[i].parts;
	return 0;
}

bool job_report__can(const char *name)
{
	return parts_of(name) != 0;
}

int job_report__compute(const struct job_inputs *in, const char *const *names, int nnames,
			struct job_report **out, struct prof_error *err)
{
	struct job_report *r = calloc(1, sizeof *r);
	unsigned parts = 0;
	int rc, rank, size;

	*out = NULL;
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; i < nnames; i++)
		parts |= parts_of(names[i]);
	job_mpi__begin(&rank, &size);
	rc = job_plan__make_share(in, rank, size, &r->plan, err);
	/* a plan fails in every process alike: each leaves the MPI job, so
	 * that the launcher does not end the others as it says it */
	if (rc)
		job_mpi__end();
	if (!rc && parts)
		r->plan.parts = parts;
	if (!rc)
		rc = job_summary__compute(&r->plan, threads__count(), &r->sum, err);
	if (rc > 0 && job_plan__unchanged(&r->plan, err))
		rc = err->code;
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
	if (!strcmp(name, "rank_sum") && (r->plan.parts & JOB_PART_RANKS))
		return js_ranks__emit_rank_sum(&r->plan, &r->sum.ranks, sink, err);
	if (!strcmp(name, "nccl_sum") && (r->plan.parts & JOB_PART_NCCL))
		return js_ranks__emit_nccl_sum(&r->plan, &r->sum.ranks, sink, err);
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
