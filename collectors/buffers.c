/* buffers.c - CUPTI's buffer callbacks and the hand-over to the writer.
 *
 * A completed buffer is pushed onto a lock-free stack (one compare-and-swap)
 * and the callback returns: it never touches the disk or takes a lock, so it
 * is safe on any application thread and inside a signal handler's forced
 * flush. The writer takes the whole stack with one exchange.
 *
 * Buffers the writer is done with wait in a few spare slots for CUPTI's next
 * request: a fresh 8 MiB buffer is a new mapping whose every page faults on
 * the application thread that CUPTI fills it from, and freeing it unmaps it
 * again. A slot is taken and given with one atomic exchange, so the slots
 * need no lock either. */
#include "collector.h"

#include <stdlib.h>

/* 8 MiB: few callbacks in launch-bound loops, bounded memory per thread. */
#define HANDOFF_BUFFER_BYTES (8u << 20)
#define HANDOFF_ALIGN 32u

/* At most this many idle buffers are kept (4 x 8 MiB); more are freed. */
#define SPARE_BUFFERS 4

static _Atomic(struct handoff_node *) handoff_top;
static _Atomic(struct handoff_node *) spare[SPARE_BUFFERS];

_Static_assert(sizeof(struct handoff_node) % HANDOFF_ALIGN == 0,
	       "records must stay aligned behind the header");

static struct handoff_node *spare_take(void)
{
	for (int i = 0; i < SPARE_BUFFERS; i++) {
		struct handoff_node *node = atomic_exchange_explicit(&spare[i], NULL,
								     memory_order_acquire);

		if (node)
			return node;
	}
	return NULL;
}

void buffers__requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	struct handoff_node *node = spare_take();

	if (!node)
		node = aligned_alloc(HANDOFF_ALIGN, sizeof(*node) + HANDOFF_BUFFER_BYTES);

	*max_records = 0; /* as many as fit */
	if (!node) {
		/* CUPTI counts what it cannot store as dropped records. */
		*buffer = NULL;
		*size = 0;
		return;
	}
	node->next = NULL;
	node->valid_bytes = 0;
	node->records = (uint8_t *)(node + 1);
	*buffer = node->records;
	*size = HANDOFF_BUFFER_BYTES;
}

void buffers__completed(uint8_t *buffer, size_t valid_bytes)
{
	struct handoff_node *node, *top;

	if (!buffer)
		return;
	node = (struct handoff_node *)buffer - 1;
	node->valid_bytes = valid_bytes;
	top = atomic_load_explicit(&handoff_top, memory_order_relaxed);
	do {
		node->next = top;
	} while (!atomic_compare_exchange_weak_explicit(&handoff_top, &top, node,
							memory_order_release,
							memory_order_relaxed));
}

struct handoff_node *buffers__take_all(void)
{
	struct handoff_node *node = atomic_exchange_explicit(&handoff_top, NULL,
							     memory_order_acquire);
	struct handoff_node *fifo = NULL;

	/* The stack is newest first; records are written in delivery order. */
	while (node) {
		struct handoff_node *next = node->next;

		node->next = fifo;
		fifo = node;
		node = next;
	}
	return fifo;
}

void buffers__free(struct handoff_node *node)
{
	for (int i = 0; i < SPARE_BUFFERS; i++) {
		struct handoff_node *empty = NULL;

		if (atomic_compare_exchange_strong_explicit(&spare[i], &empty, node,
							    memory_order_release,
							    memory_order_relaxed))
			return;
	}
	free(node);
}
