/* batch_ring.h - batches of rows handed in turn from the thread that
 * fills them to the thread that takes them (trace_feed.c, trace_ahead.c):
 * the two lock and signal a batch at a time, not a row, and the taker
 * gives a batch back only when it asks for the row after its last, so the
 * row it holds stays valid until its next call. */
#ifndef REPORT_BATCH_RING_H
#define REPORT_BATCH_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The first member of each batch. */
struct batch_head {
	int n;      /* rows filled */
	int rc;     /* after the n rows: 0, or the failure that ended them */
	bool full;  /* the taker's to read */
	bool last;  /* no batch follows */
};

/* The taker's place: its batch and its next row there. */
struct batch_taker {
	int take, pos;
	bool taking; /* batch take is the taker's */
};

/* The ring's batches: nbatches of stride bytes from first, each starting
 * with its head; lock and changed guard the heads. */
struct batch_ring {
	void *first;
	size_t stride;
	int nbatches;
	pthread_mutex_t *lock;
	pthread_cond_t *changed;
};

/* The taker's next row: the batch holding it, with *row its place there,
 * or *row -1 past the last row of the last batch (whose rc then says
 * whether a failure ended the rows). Past a batch's last row the batch is
 * given back and the next one waited for. */
struct batch_head *batch_ring__take(const struct batch_ring *r, struct batch_taker *t, int *row);

#endif
