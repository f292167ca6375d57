/* job_diagnose.c - `perfkit diagnose` of a job of many captures by map and
 * reduce (job.h), with no merged capture: each capture mapped into what
 * the job's rules read of its ranks, their time on the job's time base
 * and their NCCL calls' arrivals (job_ranks.c, on every core and across
 * MPI processes as the reports are); the job's ranks numbered and its
 * collectives matched once all are in (analysis/diagnose/diag_job.h);
 * then the diagnosis (analysis/diagnose_job.c), which reads a rank's own
 * rows again only for the ranks it chooses, each from the capture that
 * holds it, moved as the merge would move it. Memory is one capture's
 * read and each rank's summary; the time is one pass over each capture
 * and the rules of one process on a few. */
#include "job_impl.h"
#include "job_mpi.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diag_job.h"
#include "analysis/diagnose_run.h"
#include "analysis/rules/rules.h"
#include "model/sql.h"
#include "model/threads.h"
#include "prof/error.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* Where a rank's own rows are read: the job's captures. */
struct source {
	const struct job_plan *plan;
	const struct js_ranks *r;
};

/* A rank's capture as the merge moves it: the capture, or where its times
 * move by a rate a moved copy. by_ns: what its times add to reach the
 * job's time base (0 for a copy); pid: the rank's globalPid in it. */
struct opened {
	struct prof_store *st;
	char *dir, *copy;
	int64_t by_ns, pid;
};

static int open_rank(const struct source *src, int64_t gpid, struct opened *o, struct prof_error *err)
{
	const struct js_process *p = js_ranks__find(src->r, gpid);
	int rc;

	memset(o, 0, sizeof *o);
	if (!p)
		return prof_error__set(err, PROF_E_USAGE, "no process of globalPid %lld in the job", (long long)gpid);
	rc = js_ranks__moved_copy(src->plan, p->capture, &o->dir, &o->copy, err);
	if (!rc)
		rc = prof_store__open_capture(o->copy ? o->copy : src->plan->c[p->capture].path, &o->st, err);
	o->pid = p->local_gpid;
	/* without a rate the merge moves every time by the shift alone */
	o->by_ns = o->copy ? 0 : src->plan->maps[p->capture].shift_ns;
	return rc;
}

static int close_rank(struct opened *o, int rc, struct prof_error *err)
{
	if (rc == 0 && o->st)
		rc = prof_store__check_read(o->st, err);
	if (o->st)
		prof_store__close(o->st);
	js_ranks__remove_copy(o->dir, o->copy);
	memset(o, 0, sizeof *o);
	return rc;
}

/* The rules of one process on a rank's rows alone: its capture as it is
 * where it holds that process alone, else narrowed to it. */
static int diagnose_rank(void *arg, int64_t gpid, const struct diag_settings *settings,
			 struct diag_report **out, struct prof_error *err)
{
	struct opened o;
	bool alone = false;
	int rc = open_rank(arg, gpid, &o, err);

	*out = NULL;
	if (rc == 0)
		rc = sum_ranks__holds_only(o.st, o.pid, &alone, err);
	if (rc == 0 && !alone)
		rc = sum_ranks__scope(o.st, o.pid, err);
	if (rc == 0)
		rc = diag__run_process(o.st, settings, NULL, out, err);
	rc = close_rank(&o, rc, err);
	if (rc && *out) {
		diag_report__delete(*out);
		*out = NULL;
	}
	return rc;
}

/* A rank's work over [lo, hi) of the job's time base, read in its capture. */
static int load_rank_work(void *arg, int64_t gpid, int64_t lo, int64_t hi, bool with_api,
			  struct diag_rank_work *w, struct prof_error *err)
{
	struct opened o;
	char *calls = NULL;
	int rc = open_rank(arg, gpid, &o, err);

	if (rc == 0)
		rc = diag_job__note_rows(o.st, err);
	if (rc == 0 && with_api)
		calls = sum_api_calls(o.st, &rc, err);
	if (rc == 0)
		rc = diag_rank_work__load(o.st, o.pid, o.by_ns, lo, hi, calls, w, err);
	free(calls);
	return close_rank(&o, rc, err);
}

/* The job's run start on its time base, as its merged capture's metadata
 * records it (job_meta__write); 0: not recorded. */
struct start {
	int64_t ns;
};

static int take_start(void *ctx, const char *key, const char *value)
{
	struct start *s = ctx;
	char *end;
	long long v;

	if (strcmp(key, "start_ns"))
		return 0;
	v = strtoll(value, &end, 10);
	s->ns = *value && !*end && v > 0 ? v : 0;
	return 0;
}

/* Where the merged capture's times would count from (sum_capture__time):
 * the run's start, unless something was recorded earlier. */
static int64_t job_zero(const struct job_plan *plan, const struct js_ranks *r)
{
	struct start s = { 0 };

	job_meta__write(plan, take_start, &s);
	if (s.ns > 0 && (!r->has_first || s.ns <= r->first_ns))
		return s.ns;
	return r->has_first ? r->first_ns : 0;
}

/* The diag_job of the reduced ranks r: every rank's time, in rank order,
 * its window counted from the job's zero; the calls of every process. */
static int build_job(const struct job_plan *plan, struct js_ranks *r, const struct sum_ranks *m,
		     const struct diag_settings *settings, struct source *src, struct diag_job *j,
		     struct prof_error *err)
{
	int64_t zero = job_zero(plan, r);
	struct nccl_arrival *v = NULL;
	int n = 0, cap = 0, rc;

	j->ranks = m;
	j->times.v = calloc((size_t)m->nranks + 1, sizeof *j->times.v);
	if (!j->times.v)
		return nomem(err);
	for (int i = 0; i < m->n; i++) {
		struct js_process *jp;
		struct rank_time *t;

		if (m->p[i].rank < 0 || !m->p[i].selected)
			continue;
		jp = js_ranks__find(r, m->p[i].global_pid);
		t = &j->times.v[j->times.n++];
		if (jp && jp->has_time) {
			/* the job takes its hidden intervals over */
			*t = jp->time;
			memset(&jp->time.hidden, 0, sizeof jp->time.hidden);
		}
		t->rank = m->p[i].rank;
		t->global_pid = m->p[i].global_pid;
		t->w.zero_ns = zero;
		sum_process__label(&m->p[i], t->label, sizeof t->label);
	}
	rc = js_ranks__arrivals(r, m, &v, &n, &cap, err);
	if (rc == 0 && nccl_calls__of_arrivals(v, n, &j->calls))
		rc = nomem(err);
	free(v);
	j->sizes = r->nccl_sizes;
	j->link_bytes_per_ns = r->link_capture >= 0 ? r->link : 0;
	j->src = (struct diag_job_source){ .diagnose = diagnose_rank, .load_work = load_rank_work, .arg = src };
	if (rc == 0)
		rc = diag_job__prepare(j, settings, err);
	return rc;
}

int job_diagnose__run(const struct job_inputs *in, const struct diag_settings *settings,
		      struct diag_report **out, struct prof_error *err)
{
	struct job_plan plan = { 0 };
	struct job_summary sum = { 0 };
	struct sum_loop_options loop;
	struct sum_ranks m = { 0 };
	struct diag_job j = { 0 };
	struct source src = { &plan, &sum.ranks };
	int rc, rank, size;

	*out = NULL;
	diag_job__loop_options(settings, &loop);
	job_mpi__begin(&rank, &size);
	rc = job_plan__make_share(in, rank, size, &plan, err);
	if (rc) {
		job_mpi__end(); /* as every process does: its plan failed alike */
		goto out;
	}
	plan.parts = JOB_PART_RANKS | JOB_PART_NCCL | JOB_PART_DIAGNOSE;
	plan.loop = &loop;
	rc = job_summary__compute(&plan, threads__count(), &sum, err);
	if (rc <= 0)
		goto out;
	rc = js_ranks__model(&plan, &sum.ranks, &m, err);
	/* a job of one rank, or of processes that are no job's ranks, is one
	 * process's diagnosis: read as the one capture it would merge into */
	if (rc == 0 && (m.nranks < 2 || !sum_ranks__is_job(&m))) {
		rc = 2;
		goto out;
	}
	if (rc == 0)
		rc = build_job(&plan, &sum.ranks, &m, settings, &src, &j, err);
	if (rc == 0)
		rc = diag__run_job_of(&j, settings, plan.name, NULL, out, err);
	if (rc == 0 && job_plan__unchanged(&plan, err))
		rc = err->code;
	if (rc == 0) {
		(*out)->rows_left_out = sum.ranks.bad_rows;
		(*out)->has_job_time = job_plan__time(&plan, &(*out)->job_time);
		if (diag_report__sort(*out))
			rc = nomem(err);
	}
	if (rc < 0 && *out) {
		diag_report__delete(*out);
		*out = NULL;
	}
	rc = rc < 0 ? rc : rc == 2 ? 2 : 1;
out:
	diag_job__exit(&j);
	sum_ranks__exit(&m);
	job_summary__exit(&sum);
	job_plan__exit(&plan);
	return rc;
}
