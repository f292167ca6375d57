/* job_mapreduce.c - a job's summary computed where it can be: this
 * process's share of the captures (all of them, or every size-th from its
 * rank under MPI) mapped on every local core, each thread reducing what it
 * mapped, the threads' summaries reduced, and under MPI every process's
 * summary sent to rank 0, which reduces them in rank order and alone
 * prints. The reduce is exact, so one process or many give the same
 * bytes. */
#include "job_impl.h"
#include "job_mpi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct share {
	const struct job_plan *plan;
	int rank, size;
	atomic_int next;      /* the next of this process's captures to map */
	atomic_bool failed;
};

struct worker {
	pthread_t thread;
	struct share *share;
	struct job_summary sum;
	struct prof_error err;
	int rc;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct share *sh = w->share;
	int k;

	memset(&w->sum, 0, sizeof w->sum);
	w->sum.session_capture = -1;
	w->sum.ranks.link_capture = -1;
	while (!atomic_load(&sh->failed) && (k = atomic_fetch_add(&sh->next, 1)) >= 0) {
		int i = sh->rank + k * sh->size;
		struct job_summary one;

		if (i >= sh->plan->n)
			break;
		w->rc = job_summary__map(sh->plan, i, &one, &w->err);
		if (!w->rc)
			w->rc = job_summary__reduce(&w->sum, &one, &w->err);
		if (w->rc) {
			atomic_store(&sh->failed, true);
			break;
		}
	}
	return NULL;
}

/* This process's share, on nthreads threads, into *out. */
static int map_share(struct share *sh, int nthreads, struct job_summary *out,
		     struct prof_error *err)
{
	int mine = job_share__count(sh->plan->n, sh->rank, sh->size);
	struct worker *w;
	int rc = 0, started = 0;

	if (nthreads > mine)
		nthreads = mine > 0 ? mine : 1;
	w = calloc((size_t)nthreads, sizeof *w);
	memset(out, 0, sizeof *out);
	out->session_capture = -1;
	out->ranks.link_capture = -1;
	if (!w)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int t = 0; t < nthreads; t++) {
		w[t].share = sh;
		/* the first runs here: one capture, or a system without threads */
		if (t > 0 && pthread_create(&w[t].thread, NULL, work, &w[t]) == 0)
			started++;
		else if (t > 0)
			break;
	}
	work(&w[0]);
	for (int t = 1; t <= started; t++)
		pthread_join(w[t].thread, NULL);
	for (int t = 0; t <= started; t++) {
		if (!rc && w[t].rc) {
			rc = w[t].rc;
			*err = w[t].err;
		}
		/* in thread order; exact, so the order only saves work */
		if (!rc)
			rc = job_summary__reduce(out, &w[t].sum, err);
		job_summary__exit(&w[t].sum);
	}
	free(w);
	return rc;
}

int job_summary__compute(const struct job_plan *p, int nthreads, struct job_summary *out,
			 struct prof_error *err)
{
	struct share sh = { .plan = p };
	char **bufs = NULL, *buf = NULL;
	size_t *lens = NULL, len = 0;
	bool *oks = NULL, ok;
	int rc;

	job_mpi__begin(&sh.rank, &sh.size);
	rc = map_share(&sh, nthreads, out, err);
	if (!job_mpi__active())
		return rc ? rc : 1;
	/* every process sends, failed or not, so that none waits forever */
	ok = !rc && !job_summary__pack(out, &buf, &len);
	if (job_mpi__gather(buf, len, ok, &bufs, &lens, &oks) < 0 && !rc)
		rc = prof_error__set(err, PROF_E_IO, "the MPI processes could not gather their summaries");
	free(buf);
	job_summary__exit(out);
	if (sh.rank != 0) {
		job_mpi__end();
		return rc ? rc : 0;
	}
	for (int r = 0; r < sh.size; r++) {
		struct job_summary part;

		if (!rc && !oks[r])
			rc = prof_error__set(err, PROF_E_IO, "MPI process %d could not map its captures",
					     r);
		if (!rc && job_summary__unpack(bufs[r], lens[r], &part))
			rc = prof_error__set(err, PROF_E_CORRUPT, "MPI process %d sent a damaged summary", r);
		else if (!rc)
			rc = job_summary__reduce(out, &part, err);
		free(bufs[r]);
	}
	free(bufs);
	free(lens);
	free(oks);
	job_mpi__end();
	if (!rc && out->mapped != p->n)
		rc = prof_error__set(err, PROF_E_IO, "%d of %d captures were mapped", out->mapped, p->n);
	return rc ? rc : 1;
}
