/* trace_feed.c - the GPU side's sources stepped on a thread of their own
 * (trace_feed.h). Each source has a ring of batches of copied rows
 * (batch_ring.h); the thread fills a free batch of whichever source has
 * the fewest filled, the merge takes a source's batches in turn. */
#include "trace_feed.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "batch_ring.h"

/* Four batches of 256 rows a source, as trace_ahead.c's. */
#define FEED_BATCHES 4
#define FEED_ROWS 256

struct feed_row {
	struct prof_cursor *copy;
	int64_t start_ns;
};

struct feed_batch {
	struct batch_head head; /* first (batch_ring.h); last: the source ends after it */
	struct feed_row row[FEED_ROWS];
};

struct feed_source {
	struct tm_source src;      /* the feed's: stepped by its thread, closed at the stop */
	struct feed_batch batch[FEED_BATCHES];
	int fill;                  /* the thread's next batch */
	bool ended;                /* its last batch is filled */
	struct batch_taker taker;  /* the merge's */
};

struct tm_feed {
	pthread_t thread;
	pthread_mutex_t lock;      /* the batches' state */
	pthread_cond_t changed;
	pthread_mutex_t store;     /* the side's connection */
	bool stop;
	tm_feed_step step;
	void *ctx;
	const struct prof_error *step_err;
	struct prof_error err;     /* the failure a batch ended with */
	int n;
	struct feed_source s[];
};

/* fs's batches filled and not given back (under the lock). */
static int filled(const struct feed_source *fs)
{
	int n = 0;

	for (int j = 0; j < FEED_BATCHES; j++)
		n += fs->batch[j].head.full;
	return n;
}

/* The source to fill next: a free batch, the fewest filled; NULL when
 * none has room. *all_ended: no source has rows left to read. */
static struct feed_source *to_fill(struct tm_feed *f, bool *all_ended)
{
	struct feed_source *best = NULL;
	int best_filled = FEED_BATCHES;

	*all_ended = true;
	for (int i = 0; i < f->n; i++) {
		struct feed_source *fs = &f->s[i];
		int n;

		if (fs->ended)
			continue;
		*all_ended = false;
		if ((n = filled(fs)) < best_filled) {
			best = fs;
			best_filled = n;
		}
	}
	return best;
}

/* One batch of fs read, under the connection's lock. */
static void fill(struct tm_feed *f, struct feed_source *fs)
{
	struct feed_batch *b = &fs->batch[fs->fill];
	struct prof_error err = { 0 };
	int n = 0, rc = 0;

	pthread_mutex_lock(&f->store);
	while (n < FEED_ROWS && fs->src.has_row) {
		struct feed_row *r = &b->row[n];

		if ((!r->copy && prof_cursor__new_copy(&r->copy, &err) < 0) ||
		    prof_cursor__copy_row(r->copy, fs->src.cur, &err) < 0) {
			rc = PROF_E_NOMEM;
			break;
		}
		r->start_ns = fs->src.start_ns;
		n++;
		if ((rc = f->step(f->ctx, &fs->src)) < 0) {
			err = *f->step_err;
			break;
		}
	}
	pthread_mutex_unlock(&f->store);
	pthread_mutex_lock(&f->lock);
	b->head.n = n;
	b->head.rc = rc < 0 ? rc : 0;
	b->head.last = rc < 0 || !fs->src.has_row;
	if (rc < 0)
		f->err = err;
	b->head.full = true;
	fs->ended = b->head.last;
	fs->fill = (fs->fill + 1) % FEED_BATCHES;
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}

static void *feed_run(void *arg)
{
	struct tm_feed *f = arg;

	for (;;) {
		struct feed_source *fs;
		bool all_ended;

		pthread_mutex_lock(&f->lock);
		while (!f->stop && !(fs = to_fill(f, &all_ended)) && !all_ended)
			pthread_cond_wait(&f->changed, &f->lock);
		if (f->stop || !fs) {
			pthread_mutex_unlock(&f->lock);
			return NULL;
		}
		pthread_mutex_unlock(&f->lock);
		fill(f, fs);
	}
}

void tm_feed__start(struct tm_feed **out, const struct tm_source *src, int n, tm_feed_step step,
		    void *ctx, const struct prof_error *step_err)
{
	struct tm_feed *f = calloc(1, sizeof *f + (size_t)n * sizeof f->s[0]);

	*out = NULL;
	if (!f)
		return;
	f->step = step;
	f->ctx = ctx;
	f->step_err = step_err;
	f->n = n;
	for (int i = 0; i < n; i++)
		f->s[i].src = src[i];
	if (pthread_mutex_init(&f->lock, NULL) != 0)
		goto no_lock;
	if (pthread_mutex_init(&f->store, NULL) != 0)
		goto no_store;
	if (pthread_cond_init(&f->changed, NULL) != 0)
		goto no_cond;
	if (pthread_create(&f->thread, NULL, feed_run, f) != 0)
		goto no_thread;
	*out = f;
	return;
no_thread:
	pthread_cond_destroy(&f->changed);
no_cond:
	pthread_mutex_destroy(&f->store);
no_store:
	pthread_mutex_destroy(&f->lock);
no_lock:
	free(f);
}

int tm_feed__next(struct tm_feed *f, int i, struct tm_source *s, struct prof_error *err)
{
	struct feed_source *fs = &f->s[i];
	const struct batch_ring ring = { fs->batch, sizeof fs->batch[0], FEED_BATCHES, &f->lock,
					 &f->changed };
	struct batch_head *b;
	struct feed_row *r;
	int at;

	b = batch_ring__take(&ring, &fs->taker, &at);
	if (at < 0) {
		s->has_row = false;
		if (b->rc < 0 && err) {
			pthread_mutex_lock(&f->lock);
			*err = f->err;
			pthread_mutex_unlock(&f->lock);
		}
		return b->rc;
	}
	r = &((struct feed_batch *)b)->row[at];
	s->cur = r->copy;
	s->start_ns = r->start_ns;
	s->has_row = true;
	return 0;
}

void tm_feed__lock(struct tm_feed *f)
{
	pthread_mutex_lock(&f->store);
}

void tm_feed__unlock(struct tm_feed *f)
{
	pthread_mutex_unlock(&f->store);
}

void tm_feed__stop(struct tm_feed *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	for (int i = 0; i < f->n; i++) {
		prof_cursor__close(f->s[i].src.cur);
		for (int j = 0; j < FEED_BATCHES; j++)
			for (int k = 0; k < FEED_ROWS; k++)
				prof_cursor__close(f->s[i].batch[j].row[k].copy);
	}
	pthread_cond_destroy(&f->changed);
	pthread_mutex_destroy(&f->store);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
