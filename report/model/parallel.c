/* parallel.c - n independent pieces of work (a job's captures probed,
 * their collectives read, the chosen ranks diagnosed) on several threads,
 * each thread taking the next piece (threads.h). The error reported is
 * that of the first piece to fail in index order, as a loop would report
 * it. */
#include "model/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct each {
	int (*fn)(void *arg, int i, struct prof_error *err);
	int n;
	atomic_int next;
	atomic_int first_failed; /* the lowest piece that failed; n: none */
};

struct each_worker {
	pthread_t thread;
	struct each *each;
	void *arg;               /* fn's arg on this thread */
	int failed;              /* this thread's lowest failed piece; n: none */
	int rc;
	struct prof_error err;
};

static void *each_work(void *arg)
{
	struct each_worker *w = arg;
	struct each *e = w->each;
	int i;

	/* pieces past one that failed are not needed: a loop stops there */
	while ((i = atomic_fetch_add(&e->next, 1)) < e->n && i < atomic_load(&e->first_failed)) {
		struct prof_error err = { 0 };
		int rc = e->fn(w->arg, i, &err);
		int seen;

		if (!rc)
			continue;
		if (i < w->failed) {
			w->failed = i;
			w->rc = rc;
			w->err = err;
		}
		seen = atomic_load(&e->first_failed);
		while (i < seen && !atomic_compare_exchange_weak(&e->first_failed, &seen, i))
			;
	}
	return NULL;
}

int threads__each(int n, int nthreads, int (*fn)(void *arg, int i, struct prof_error *err), void *arg,
		  void *(*for_thread)(void *arg), void (*end_thread)(void *thread_arg), int *failed,
		  struct prof_error *err)
{
	struct each e = { .fn = fn, .n = n };
	struct each_worker *w;
	int started = 0, best = -1, rc;

	atomic_init(&e.next, 0);
	atomic_init(&e.first_failed, n);
	if (nthreads > n)
		nthreads = n > 0 ? n : 1;
	w = calloc((size_t)nthreads, sizeof *w);
	if (failed)
		*failed = w ? -1 : 0; /* none ran: the first failed */
	if (!w)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int t = 0; t < nthreads; t++) {
		w[t].each = &e;
		w[t].failed = n;
		w[t].arg = t > 0 && for_thread ? for_thread(arg) : arg;
		/* the first runs here: one piece, or a system without threads */
		if (t > 0 && w[t].arg && pthread_create(&w[t].thread, NULL, each_work, &w[t]) == 0) {
			started++;
			continue;
		}
		if (t > 0 && w[t].arg && for_thread)
			end_thread(w[t].arg);
		if (t > 0)
			break;
	}
	each_work(&w[0]);
	for (int t = 1; t <= started; t++) {
		pthread_join(w[t].thread, NULL);
		if (for_thread)
			end_thread(w[t].arg);
	}
	for (int t = 0; t <= started; t++)
		if (w[t].failed < n && (best < 0 || w[t].failed < w[best].failed))
			best = t;
	rc = best >= 0 ? w[best].rc : 0;
	if (best >= 0)
		*err = w[best].err;
	if (failed && best >= 0)
		*failed = w[best].failed;
	free(w);
	return rc;
}
