/* id_bits.c - id sets in blocks of bits (see id_bits.h): a block holds the
 * 65,536 ids sharing id >> 16 in one space, and the blocks are found
 * through a table of slots, linearly probed, grown before it is half
 * full. */
#include "model/id_bits.h"

#include <stdlib.h>

#include "model/sums.h"
#include "prof/error.h"

#define BLOCK_BITS 16
#define BLOCK_WORDS ((1u << BLOCK_BITS) / 64)

struct id_block {
	int64_t space, hi; /* id >> BLOCK_BITS */
	uint64_t bits[BLOCK_WORDS];
};

static uint64_t key_hash(int64_t space, int64_t hi)
{
	uint64_t x = (uint64_t)space * 0x9e3779b97f4a7c15ULL ^ (uint64_t)hi;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

static size_t slot_of(const struct id_bits *b, int64_t space, int64_t hi)
{
	size_t at = key_hash(space, hi) & (b->nslots - 1);

	for (; b->slots[at]; at = (at + 1) & (b->nslots - 1)) {
		const struct id_block *k = b->blocks[b->slots[at] - 1];

		if (k->hi == hi && k->space == space)
			break;
	}
	return at;
}

static int grow_slots(struct id_bits *b)
{
	size_t n = b->nslots ? b->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof *slots), *old = b->slots;

	if (!slots)
		return PROF_E_NOMEM;
	b->slots = slots;
	b->nslots = n;
	for (size_t i = 0; i < b->n; i++)
		b->slots[slot_of(b, b->blocks[i]->space, b->blocks[i]->hi)] = (uint32_t)(i + 1);
	free(old);
	return 0;
}

/* The block of (space, id), or NULL. */
static struct id_block *block_of(const struct id_bits *b, int64_t space, int64_t id)
{
	size_t at;

	if (!b->nslots)
		return NULL;
	at = slot_of(b, space, id >> BLOCK_BITS);
	return b->slots[at] ? b->blocks[b->slots[at] - 1] : NULL;
}

void id_bits__init(struct id_bits *b, size_t max_blocks)
{
	*b = (struct id_bits){ .max_blocks = max_blocks };
}

int id_bits__set(struct id_bits *b, int64_t space, int64_t id)
{
	uint64_t low = (uint64_t)id & ((1u << BLOCK_BITS) - 1);
	struct id_block *k = block_of(b, space, id);
	size_t at;

	if (!k) {
		if (b->n >= b->max_blocks)
			return 0;
		if ((b->n + 1) * 2 > b->nslots && grow_slots(b) < 0)
			return PROF_E_NOMEM;
		if (sum_array__grow(&b->blocks, &b->cap, b->n, sizeof *b->blocks) < 0)
			return PROF_E_NOMEM;
		k = calloc(1, sizeof *k);
		if (!k)
			return PROF_E_NOMEM;
		k->space = space;
		k->hi = id >> BLOCK_BITS;
		at = slot_of(b, space, k->hi);
		b->blocks[b->n] = k;
		b->slots[at] = (uint32_t)++b->n;
	}
	k->bits[low / 64] |= 1ULL << (low % 64);
	return 1;
}

int id_bits__union(struct id_bits *into, const struct id_bits *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct id_block *f = from->blocks[i];
		/* the block's first id, set to find or make its block in into */
		int64_t first = (int64_t)((uint64_t)f->hi << BLOCK_BITS);
		bool had = id_bits__has(into, f->space, first);
		int rc = id_bits__set(into, f->space, first);
		struct id_block *k;

		if (rc <= 0)
			return rc;
		k = block_of(into, f->space, first);
		/* set only to make the block: whether it is held is from's say */
		if (!had)
			k->bits[0] &= ~1ULL;
		for (size_t w = 0; w < BLOCK_WORDS; w++)
			k->bits[w] |= f->bits[w];
	}
	return 1;
}

bool id_bits__has(const struct id_bits *b, int64_t space, int64_t id)
{
	uint64_t low = (uint64_t)id & ((1u << BLOCK_BITS) - 1);
	const struct id_block *k = block_of(b, space, id);

	return k && (k->bits[low / 64] >> (low % 64) & 1);
}

void id_bits__clear(struct id_bits *b, int64_t space, int64_t id)
{
	uint64_t low = (uint64_t)id & ((1u << BLOCK_BITS) - 1);
	struct id_block *k = block_of(b, space, id);

	if (k)
		k->bits[low / 64] &= ~(1ULL << (low % 64));
}

void id_bits__exit(struct id_bits *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->blocks[i]);
	free(b->blocks);
	free(b->slots);
	id_bits__init(b, b->max_blocks);
}
