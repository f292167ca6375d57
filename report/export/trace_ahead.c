/* trace_ahead.c - a merge's rows read ahead on a thread of their own
 * (trace_ahead.h). The thread fills batches of copied rows in turn; the
 * writer takes them in the same turn, and gives a batch back when it asks
 * for the row after its last, so the row it holds stays valid until its
 * next call, as in place. */
#include "trace_ahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "batch_ring.h"
#include "prof/array.h"

/* Four batches of 256 rows: the writer formats one while the thread fills
 * another, and a row of either costs a few microseconds; a batch, not a
 * row, is what the two lock and signal for. */
#define AHEAD_BATCHES 4
#define AHEAD_ROWS 256

struct ahead_row {
	struct tm_row row;          /* cur: copy below, or NULL (a projected range) */
	struct prof_cursor *copy;
	char *name;                 /* trace_merge__name of a kernel or a call */
	size_t cap_name;
	bool named;                 /* name is this row's */
	uint64_t *launched;         /* trace_merge__launched of a call */
	size_t nlaunched, cap_launched;
};

struct ahead_batch {
	struct batch_head head;     /* first (batch_ring.h); last: the merge ends after it */
	struct ahead_row row[AHEAD_ROWS];
};

struct tm_ahead {
	struct tm_reader r;         /* first: m->ahead points here */
	struct trace_merge *m;
	struct prof_error *caller_err; /* m->err, given back at the stop */
	struct prof_error err;      /* the thread's, copied to the caller's when told */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool stop;
	int fill;                   /* the thread's batch */
	struct batch_taker taker;   /* the writer's */
	const struct ahead_row *current;
	struct ahead_batch batch[AHEAD_BATCHES];
};

static int nomem(struct trace_merge *m)
{
	return prof_error__set(m->err, PROF_E_NOMEM, "out of memory");
}

static int keep_name(struct trace_merge *m, struct ahead_row *x, const char *name)
{
	size_t len = strlen(name);

	if (prof_array__grow(&x->name, &x->cap_name, len + 1, 1) < 0)
		return nomem(m);
	memcpy(x->name, name, len + 1);
	return 0;
}

static int keep_launched(struct trace_merge *m, struct ahead_row *x, const uint64_t *ids, size_t n)
{
	if (prof_array__grow(&x->launched, &x->cap_launched, n, sizeof *x->launched) < 0)
		return nomem(m);
	if (n)
		memcpy(x->launched, ids, n * sizeof *ids);
	x->nlaunched = n;
	return 0;
}

/* r into x, with what the writers ask of it beside the merge: a kernel's
 * or a call's name, and with launch_rows the work a call launched. Asked
 * of every such row, where a writer may skip one: neither answer depends
 * on which rows asked before. */
static int copy_row(struct trace_merge *m, struct ahead_row *x, const struct tm_row *r)
{
	int name_col = r->kind == TM_KERNEL ? TM_KERNEL_NAME
		       : r->kind == TM_RUNTIME || r->kind == TM_DRIVER ? TM_API_NAME : -1;
	int rc;

	x->row = *r;
	x->named = false;
	x->nlaunched = 0;
	if (!r->cur)
		return 0;
	if (!x->copy && prof_cursor__new_copy(&x->copy, m->err) < 0)
		return PROF_E_NOMEM;
	rc = prof_cursor__copy_row(x->copy, r->cur, m->err);
	x->row.cur = x->copy;
	if (rc == 0 && name_col >= 0) {
		rc = keep_name(m, x, tm_in_place__name(m, r->cur, name_col));
		x->named = rc == 0;
	}
	if (rc == 0 && name_col == TM_API_NAME && m->launch_rows) {
		uint64_t *ids;
		size_t n;

		rc = tm_in_place__launched(m, r->kind, r->cur, &ids, &n);
		if (rc == 0)
			rc = keep_launched(m, x, ids, n);
	}
	return rc;
}

static void *ahead_run(void *arg)
{
	struct tm_ahead *a = arg;

	for (;;) {
		struct ahead_batch *b = &a->batch[a->fill];
		struct tm_row r;
		bool stop;
		int rc = 0, n = 0;

		pthread_mutex_lock(&a->lock);
		while (b->head.full && !a->stop)
			pthread_cond_wait(&a->changed, &a->lock);
		stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			return NULL;
		while (n < AHEAD_ROWS && (rc = tm_in_place__next(a->m, &r)) > 0 &&
		       (rc = copy_row(a->m, &b->row[n], &r)) == 0) {
			rc = 1;
			n++;
		}
		pthread_mutex_lock(&a->lock);
		b->head.n = n;
		b->head.rc = rc < 0 ? rc : 0;
		b->head.last = rc <= 0;
		b->head.full = true;
		pthread_cond_broadcast(&a->changed);
		pthread_mutex_unlock(&a->lock);
		if (rc <= 0)
			return NULL;
		a->fill = (a->fill + 1) % AHEAD_BATCHES;
	}
}

static int ahead_next(struct tm_reader *r, struct tm_row *row)
{
	struct tm_ahead *a = (struct tm_ahead *)r;
	const struct batch_ring ring = { a->batch, sizeof a->batch[0], AHEAD_BATCHES, &a->lock,
					 &a->changed };
	struct batch_head *b;
	int at;

	a->current = NULL;
	b = batch_ring__take(&ring, &a->taker, &at);
	if (at < 0) {
		if (b->rc < 0 && a->caller_err)
			*a->caller_err = a->err;
		return b->rc;
	}
	a->current = &((struct ahead_batch *)b)->row[at];
	*row = a->current->row;
	return 1;
}

static const char *ahead_name(const struct tm_reader *r, const struct prof_cursor *cur)
{
	const struct tm_ahead *a = (const struct tm_ahead *)r;

	return a->current && a->current->row.cur == cur && a->current->named ? a->current->name : "";
}

static void ahead_launched(const struct tm_reader *r, uint64_t **flow_ids, size_t *n)
{
	const struct tm_ahead *a = (const struct tm_ahead *)r;

	*flow_ids = a->current ? a->current->launched : NULL;
	*n = a->current ? a->current->nlaunched : 0;
}

static void ahead_stop(struct tm_reader *r)
{
	struct tm_ahead *a = (struct tm_ahead *)r;

	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	a->m->err = a->caller_err;
	for (int i = 0; i < AHEAD_BATCHES; i++)
		for (int j = 0; j < AHEAD_ROWS; j++) {
			prof_cursor__close(a->batch[i].row[j].copy);
			free(a->batch[i].row[j].name);
			free(a->batch[i].row[j].launched);
		}
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void trace_ahead__start(struct trace_merge *m)
{
	struct tm_ahead *a;

	if (m->ahead || !trace_merge__apart(m) || !(a = calloc(1, sizeof *a)))
		return;
	a->r = (struct tm_reader){ .next = ahead_next, .name = ahead_name,
				   .launched = ahead_launched, .stop = ahead_stop };
	a->m = m;
	a->caller_err = m->err;
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		return;
	}
	if (pthread_cond_init(&a->changed, NULL) != 0) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		return;
	}
	m->err = &a->err;
	m->ahead = &a->r;
	if (pthread_create(&a->thread, NULL, ahead_run, a) != 0) {
		m->err = a->caller_err;
		m->ahead = NULL;
		pthread_cond_destroy(&a->changed);
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
}

