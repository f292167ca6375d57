/* html_apart.c - the page's diagnosis made on a thread of its own, through
 * a connection of its own to the capture, while the page renders the
 * sections that never ask for it (html_report.c). The diagnosis is most of
 * a page's time; on two cores the page then takes about as long as the
 * diagnosis alone. Every section reads what it read before, in the same
 * order on its connection, so the page is the same bytes. */
#include "html_page_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose_run.h"
#include "model/memo.h"
#include "model/threads.h"

struct html_apart {
	pthread_t thread;
	struct prof_store *store; /* the thread's own connection */
	const struct diag_busy_source *busy; /* the page's, lent */
	struct diag_report *report;
	struct diag_keep keep;
	char failed[PROF_ERROR_MSG_MAX];
	/* done: the thread has made it (html_apart__wait; set under lock,
	 * read without it by the page's thread that helps meanwhile) */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	atomic_bool done;
	bool helper_coming; /* threads__help_coming said, not yet helped */
};

static void *diagnose_apart(void *arg)
{
	struct html_apart *a = arg;

	html_page__diagnose(a->store, a->busy, &a->keep, &a->report, a->failed, sizeof a->failed);
	pthread_mutex_lock(&a->lock);
	atomic_store(&a->done, true);
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	threads__help_wake();
	return NULL;
}

void html_apart__help(struct html_apart *a)
{
	if (!a || !a->helper_coming)
		return;
	a->helper_coming = false;
	threads__help(&a->done);
}

bool html_apart__wait(struct html_apart *a, const atomic_bool *stop)
{
	bool done;

	pthread_mutex_lock(&a->lock);
	while (!atomic_load(&a->done) && !atomic_load(stop))
		pthread_cond_wait(&a->changed, &a->lock);
	done = atomic_load(&a->done);
	pthread_mutex_unlock(&a->lock);
	return done;
}

void html_apart__wake(struct html_apart *a)
{
	pthread_mutex_lock(&a->lock);
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
}

struct prof_store *html_apart__store(struct html_apart *a)
{
	return a->store;
}

struct html_apart *html_apart__start(struct html_page *p)
{
	struct prof_error ignored = { 0 };
	struct html_apart *a;

	/* a capture that cannot be opened again (prof_store__reopen) is
	 * diagnosed in place */
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	atomic_init(&a->done, false);
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		return NULL;
	}
	if (pthread_cond_init(&a->changed, NULL) != 0) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		return NULL;
	}
	a->busy = html_page__busy_lent(p);
	/* said before the diagnosis spreads its ranks: they keep a place */
	threads__help_coming();
	a->helper_coming = true;
	if (prof_store__reopen(p->store, &a->store, &ignored) == 0 &&
	    pthread_create(&a->thread, NULL, diagnose_apart, a) == 0)
		return a;
	threads__help_not_coming();
	prof_store__close(a->store);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return NULL;
}

void html_apart__finish(struct html_apart *a, struct html_page *p, struct prof_store **kept)
{
	struct prof_error ignored = { 0 };

	if (kept)
		*kept = NULL;
	if (!a)
		return;
	if (a->helper_coming)
		threads__help_not_coming();
	pthread_join(a->thread, NULL);
	/* what the diagnosis learnt of every row (the rank bounds, ...) serves
	 * the sections that read on after it */
	(void)sum_memo__share(a->store, p->store, &ignored);
	if (kept)
		*kept = a->store;
	else
		prof_store__close(a->store);
	p->diagnosed = true;
	p->diagnosis = a->report;
	p->keep = a->keep;
	snprintf(p->diagnosis_failed, sizeof p->diagnosis_failed, "%s", a->failed);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
