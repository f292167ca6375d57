/* buffers.c - CUPTI's buffer callbacks and the hand-over to the writer.
 *
 * A completed buffer is pushed onto a lock-free stack (one compare-and-swap)
 * and the callback returns: it never touches the disk or takes a lock, so it
 * is safe on any application thread and inside a signal handler's forced
 * flush. The writer takes the whole stack with one exchange. */
#include "collector.h"

#include <stdlib.h>

/* 8 MiB: few callbacks in launch-bound loops, bounded memory per thread. */
#define HANDOFF_BUFFER_BYTES (8u << 20)
#define HANDOFF_ALIGN 32u

static _Atomic(struct handoff_node *) handoff_top;

_Static_assert(sizeof(struct handoff_node) % HANDOFF_ALIGN == 0,
	       "records must stay aligned behind the header");

void buffers__requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	struct handoff_node *node = aligned_alloc(HANDOFF_ALIGN,
						  sizeof(*node) + HANDOFF_BUFFER_BYTES);

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
	free(node);
}
