/* strmap.c - the string map (prof/strmap.h). */
#include "prof/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "prof/error.h"

#define STRMAP_FIRST_CAP 64

void prof_strmap__init(struct prof_strmap *m)
{
	memset(m, 0, sizeof *m);
}

void prof_strmap__exit(struct prof_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	prof_strmap__init(m);
}

uint64_t prof_strmap__hash(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

bool prof_strmap__find(const struct prof_strmap *m, const char *key, size_t len, uint64_t hash,
		       int64_t *value)
{
	size_t mask = m->cap - 1;

	if (!m->cap)
		return false;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct prof_strmap_slot *s = &m->slots[i];

		if (!s->key)
			return false;
		/* strncmp stops at the stored key's end, which memcmp would
		 * read past when it is the shorter */
		if (s->hash == hash && !strncmp(s->key, key, len) && s->key[len] == '\0') {
			if (value)
				*value = s->value;
			return true;
		}
	}
}

static void place(struct prof_strmap_slot *slots, size_t cap, const struct prof_strmap_slot *from)
{
	size_t mask = cap - 1;
	size_t i = from->hash & mask;

	while (slots[i].key)
		i = (i + 1) & mask;
	slots[i] = *from;
}

static int grow(struct prof_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : STRMAP_FIRST_CAP;
	struct prof_strmap_slot *slots;

	if (cap < m->cap || cap > SIZE_MAX / sizeof *slots)
		return PROF_E_NOMEM;
	slots = calloc(cap, sizeof *slots);
	if (!slots)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			place(slots, cap, &m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int prof_strmap__add(struct prof_strmap *m, const char *key, size_t len, uint64_t hash,
		     int64_t value)
{
	struct prof_strmap_slot s = { .hash = hash, .value = value };

	/* Keep the load under 1/2 so probe chains stay short. */
	if ((m->used + 1) * 2 > m->cap && grow(m) < 0)
		return PROF_E_NOMEM;
	s.key = malloc(len + 1);
	if (!s.key)
		return PROF_E_NOMEM;
	memcpy(s.key, key, len);
	s.key[len] = '\0';
	place(m->slots, m->cap, &s);
	m->used++;
	return 0;
}
