/* parallel.c - n independent pieces of work (a job's captures probed,
 * their collectives read, the chosen ranks diagnosed) on several threads,
 * each thread taking the next piece (threads.h), and a thread that waits
 * with nothing to do among them (threads__help). The error reported is
 * that of the first piece to fail in index order, as a loop would report
 * it. */
#include "model/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
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
	bool done;               /* a helper's: it has left the work (helpers.lock) */
};

/* The threads that said they will help (threads__help_coming) and have
 * not yet left threads__help, and the one worker's place that a
 * threads__each with more pieces than threads offers them meanwhile. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int coming;
	struct each_worker *offered; /* NULL: none */
} helpers = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL };

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

/* The place w offered to a helper that is coming, with its own arg (made
 * here, outside the lock: for_thread runs on the thread that spreads the
 * work, as for its own threads, and may spread work of its own): false
 * where none is coming, or another place is on offer. The place stays on
 * offer until withdraw: a helper may come once its own work is done. */
static bool offer(struct each_worker *w, struct each *e, void *arg, void *(*for_thread)(void *arg),
		  void (*end_thread)(void *thread_arg))
{
	bool offered;

	pthread_mutex_lock(&helpers.lock);
	offered = helpers.coming > 0 && !helpers.offered;
	pthread_mutex_unlock(&helpers.lock);
	if (!offered)
		return false;
	*w = (struct each_worker){ .each = e, .failed = e->n };
	w->arg = for_thread ? for_thread(arg) : arg;
	if (!w->arg)
		return false;
	pthread_mutex_lock(&helpers.lock);
	offered = helpers.coming > 0 && !helpers.offered;
	if (offered) {
		helpers.offered = w;
		pthread_cond_broadcast(&helpers.changed);
	}
	pthread_mutex_unlock(&helpers.lock);
	if (!offered && for_thread)
		end_thread(w->arg);
	return offered;
}

/* The offered place taken back where no helper took it, else its helper
 * waited for: once every piece is taken, it is done. */
static void withdraw(struct each_worker *w)
{
	pthread_mutex_lock(&helpers.lock);
	if (helpers.offered == w) {
		helpers.offered = NULL;
		w->done = true;
	}
	while (!w->done)
		pthread_cond_wait(&helpers.changed, &helpers.lock);
	pthread_mutex_unlock(&helpers.lock);
}

void threads__help_coming(void)
{
	pthread_mutex_lock(&helpers.lock);
	helpers.coming++;
	pthread_mutex_unlock(&helpers.lock);
}

void threads__help(const atomic_bool *stop)
{
	pthread_mutex_lock(&helpers.lock);
	while (!atomic_load(stop)) {
		struct each_worker *w = helpers.offered;

		if (!w) {
			pthread_cond_wait(&helpers.changed, &helpers.lock);
			continue;
		}
		helpers.offered = NULL;
		pthread_mutex_unlock(&helpers.lock);
		each_work(w);
		pthread_mutex_lock(&helpers.lock);
		w->done = true;
		pthread_cond_broadcast(&helpers.changed);
	}
	helpers.coming--;
	pthread_mutex_unlock(&helpers.lock);
}

void threads__help_not_coming(void)
{
	pthread_mutex_lock(&helpers.lock);
	helpers.coming--;
	pthread_mutex_unlock(&helpers.lock);
}

void threads__help_wake(void)
{
	pthread_mutex_lock(&helpers.lock);
	pthread_cond_broadcast(&helpers.changed);
	pthread_mutex_unlock(&helpers.lock);
}

int threads__each(int n, int nthreads, int (*fn)(void *arg, int i, struct prof_error *err), void *arg,
		  void *(*for_thread)(void *arg), void (*end_thread)(void *thread_arg), int *failed,
		  struct prof_error *err)
{
	struct each e = { .fn = fn, .n = n };
	struct each_worker *w;
	int started = 0, best = -1, rc;
	bool helped;

	atomic_init(&e.next, 0);
	atomic_init(&e.first_failed, n);
	if (nthreads > n)
		nthreads = n > 0 ? n : 1;
	/* and one place more, a helper's */
	w = calloc((size_t)nthreads + 1, sizeof *w);
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
	/* a place after the threads' for a helper, where pieces are left over */
	helped = n > started + 1 && offer(&w[started + 1], &e, arg, for_thread, end_thread);
	each_work(&w[0]);
	for (int t = 1; t <= started; t++) {
		pthread_join(w[t].thread, NULL);
		if (for_thread)
			end_thread(w[t].arg);
	}
	if (helped) {
		withdraw(&w[started + 1]);
		if (for_thread)
			end_thread(w[started + 1].arg);
	}
	for (int t = 0; t <= started + helped; t++)
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
