/* idmap.c - the int64 -> int32 hash map of idmap.h. Grown at 50 % load so
 * probe chains stay short. */
#include "idmap.h"

#include <stdlib.h>

#define FREE_KEY INT64_MIN

static size_t slot_of(int64_t key, size_t cap)
{
	uint64_t x = (uint64_t)key;

	/* splitmix64 finaliser: StringIds ids are dense small integers */
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBULL;
	x ^= x >> 31;
	return (size_t)x & (cap - 1);
}

void idmap__init(struct idmap *m)
{
	m->keys = NULL;
	m->values = NULL;
	m->cap = m->used = 0;
}

void idmap__exit(struct idmap *m)
{
	free(m->keys);
	free(m->values);
	idmap__init(m);
}

int32_t idmap__get(const struct idmap *m, int64_t key)
{
	if (!m->cap)
		return -1;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->values[i];
		if (m->keys[i] == FREE_KEY)
			return -1;
	}
}

static int grow(struct idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	int64_t *keys = malloc(cap * sizeof *keys);
	int32_t *values = malloc(cap * sizeof *values);

	if (!keys || !values) {
		free(keys);
		free(values);
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		keys[i] = FREE_KEY;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->keys[i] == FREE_KEY)
			continue;
		for (j = slot_of(m->keys[i], cap); keys[j] != FREE_KEY; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		values[j] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return 0;
}

int idmap__put(struct idmap *m, int64_t key, int32_t value)
{
	size_t i;

	if ((m->used + 1) * 2 > m->cap && grow(m))
		return -1;
	for (i = slot_of(key, m->cap); m->keys[i] != FREE_KEY && m->keys[i] != key;
	     i = (i + 1) & (m->cap - 1))
		;
	if (m->keys[i] == FREE_KEY)
		m->used++;
	m->keys[i] = key;
	m->values[i] = value;
	return 0;
}
