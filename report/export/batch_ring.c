/* batch_ring.c - batches handed from a filling thread to a taking one
 * (batch_ring.h). */
#include "batch_ring.h"

static struct batch_head *head_at(const struct batch_ring *r, int i)
{
	return (struct batch_head *)((char *)r->first + (size_t)i * r->stride);
}

struct batch_head *batch_ring__take(const struct batch_ring *r, struct batch_taker *t, int *row)
{
	struct batch_head *b = head_at(r, t->take);

	if (t->taking && t->pos == b->n && !b->last) {
		pthread_mutex_lock(r->lock);
		b->full = false;
		pthread_cond_broadcast(r->changed);
		pthread_mutex_unlock(r->lock);
		t->take = (t->take + 1) % r->nbatches;
		b = head_at(r, t->take);
		t->taking = false;
	}
	if (!t->taking) {
		pthread_mutex_lock(r->lock);
		while (!b->full)
			pthread_cond_wait(r->changed, r->lock);
		pthread_mutex_unlock(r->lock);
		t->taking = true;
		t->pos = 0;
	}
	*row = t->pos < b->n ? t->pos++ : -1;
	return b;
}
