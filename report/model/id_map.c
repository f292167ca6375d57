/* id_map.c - ids to values by open addressing (see id_map.h): linear
 * probing, grown to twice its size before it is half full; a value taken
 * out moves the run after it back, so no slot is left marked deleted. */
#include "model/id_map.h"

#include <stdlib.h>

static size_t slot_of(int64_t id, size_t cap)
{
	return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

/* the slot holding id, or the free slot where it would go */
static size_t find(const struct id_map *m, int64_t id)
{
	size_t j = slot_of(id, m->cap);

	while (m->values[j] && m->ids[j] != id)
		j = (j + 1) & (m->cap - 1);
	return j;
}

void *id_map__get(const struct id_map *m, int64_t id)
{
	return m->cap ? m->values[find(m, id)] : NULL;
}

/* Slot hole is free now: each later slot of the run whose home lies
 * cyclically at or before the hole moves into it, which opens a new hole
 * where it was, so every id stays reachable from its home. */
static void close_hole(struct id_map *m, size_t hole)
{
	size_t mask = m->cap - 1;

	for (size_t j = (hole + 1) & mask; m->values[j]; j = (j + 1) & mask) {
		size_t home = slot_of(m->ids[j], m->cap);

		/* home outside (hole, j]: the entry may fill the hole */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->ids[hole] = m->ids[j];
			m->values[hole] = m->values[j];
			m->values[j] = NULL;
			hole = j;
		}
	}
}

void *id_map__take(struct id_map *m, int64_t id)
{
	size_t j;
	void *value;

	if (!m->cap)
		return NULL;
	j = find(m, id);
	value = m->values[j];
	if (!value)
		return NULL;
	m->values[j] = NULL;
	m->n--;
	close_hole(m, j);
	return value;
}

static int grow(struct id_map *m)
{
	struct id_map grown = { .cap = m->cap ? m->cap * 2 : 64 };

	grown.ids = malloc(grown.cap * sizeof *grown.ids);
	grown.values = calloc(grown.cap, sizeof *grown.values);
	if (!grown.ids || !grown.values) {
		free(grown.ids);
		free(grown.values);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->values[i]) {
			size_t j = find(&grown, m->ids[i]);

			grown.ids[j] = m->ids[i];
			grown.values[j] = m->values[i];
		}
	grown.n = m->n;
	free(m->ids);
	free(m->values);
	*m = grown;
	return 0;
}

int id_map__put(struct id_map *m, int64_t id, void *value)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	j = find(m, id);
	m->ids[j] = id;
	m->values[j] = value;
	m->n++;
	return 0;
}

void id_map__exit(struct id_map *m, void (*free_value)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->values[i])
			(free_value ? free_value : free)(m->values[i]);
	free(m->ids);
	free(m->values);
	*m = (struct id_map){ 0 };
}
