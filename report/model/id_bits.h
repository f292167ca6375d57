/* id_bits.h - sets of int64 ids as bits, in blocks of 65,536 ids under a
 * space (a process, say: the ids of one space are apart from another's),
 * found by open addressing. CUPTI numbers a process's calls from 1
 * upwards, so a run of 22M calls fills about 340 blocks (2.7 MiB). For
 * readers that ask of many rows whether their id is held, where SQL would
 * join: whether a GPU row has a launching call (launch_ids.h), which calls
 * launched the rows of a timeline export (trace_pairs.h). */
#ifndef REPORT_MODEL_ID_BITS_H
#define REPORT_MODEL_ID_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct id_block;

struct id_bits {
	struct id_block **blocks;
	size_t n, cap;
	uint32_t *slots; /* index + 1 of a block; 0: free */
	size_t nslots;
	size_t max_blocks; /* blocks held at most (id_bits__init) */
};

#define ID_BITS_MAX_BLOCKS 4096 /* 32 MiB of bits */

/* An empty set of at most max_blocks blocks (ID_BITS_MAX_BLOCKS, say). */
void id_bits__init(struct id_bits *b, size_t max_blocks);
/* id set under space: 1; 0 where that takes a block more than max_blocks
 * (ids spread too thin: the caller asks SQL); < 0 (PROF_E_NOMEM) out of
 * memory. */
int id_bits__set(struct id_bits *b, int64_t space, int64_t id);
/* Every id of from set in into as well: 1; 0 where that takes more
 * blocks than into's max_blocks (into then holds part of them); < 0
 * (PROF_E_NOMEM) out of memory. */
int id_bits__union(struct id_bits *into, const struct id_bits *from);
bool id_bits__has(const struct id_bits *b, int64_t space, int64_t id);
/* id no longer held (its block stays). */
void id_bits__clear(struct id_bits *b, int64_t space, int64_t id);
/* Every block freed; the set empty, as after id_bits__init. */
void id_bits__exit(struct id_bits *b);

#endif
