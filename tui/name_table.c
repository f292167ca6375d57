/* name_table.c - string interning for perfkit top (name_table.h). */
#include "name_table.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
	uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
	return h;
}

void name_table__init(struct name_table *t)
{
	memset(t, 0, sizeof *t);
}

void name_table__exit(struct name_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->slots);
	name_table__init(t);
}

static size_t probe(const struct name_table *t, const char *name)
{
	size_t i = (size_t)hash(name) & (t->nslots - 1);

	while (t->slots[i] >= 0 && strcmp(t->names[t->slots[i]], name))
		i = (i + 1) & (t->nslots - 1);
	return i;
}

int32_t name_table__find(const struct name_table *t, const char *name)
{
	return t->nslots ? t->slots[probe(t, name)] : -1;
}

static int rehash(struct name_table *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	int32_t *slots = malloc(nslots * sizeof *slots);

	if (!slots)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	for (size_t i = 0; i < nslots; i++)
		slots[i] = -1;
	for (size_t i = 0; i < t->n; i++)
		slots[probe(t, t->names[i])] = (int32_t)i;
	return 0;
}

int32_t name_table__intern(struct name_table *t, const char *name)
{
	size_t slot;
	char *copy;

	if ((t->n + 1) * 2 > t->nslots && rehash(t))
		return -1;
	slot = probe(t, name);
	if (t->slots[slot] >= 0)
		return t->slots[slot];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **names = realloc(t->names, cap * sizeof *names);

		if (!names)
			return -1;
		t->names = names;
		t->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -1;
	t->names[t->n] = copy;
	t->slots[slot] = (int32_t)t->n;
	return (int32_t)t->n++;
}
