/* folded_impl.h - internals of the folded stacks: the table that merges
 * equal stacks while rows stream by. */
#ifndef REPORT_FOLDED_IMPL_H
#define REPORT_FOLDED_IMPL_H

#include "folded.h"

/* Open addressing over the stacks of a struct folded_stacks. */
struct stack_table {
	struct folded_stacks *st;
	size_t *slots;      /* index + 1 into st->v; 0: empty */
	uint64_t *hashes;   /* per stack, so growing never rehashes the text */
	size_t nslots;
};

int stack_table__init(struct stack_table *t, struct folded_stacks *st);
/* Add weight to the stack key[0..len) (frames already sanitized). */
int stack_table__add(struct stack_table *t, const char *key, size_t len, int64_t weight_ns);
/* Free the index and sort st frame by frame; st keeps the stacks. */
void stack_table__finish(struct stack_table *t);

#endif
