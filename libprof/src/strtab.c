/* strtab.c - open-addressing hash table from string to StringIds id. */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#define STRTAB_INITIAL 1024

int strtab__init(struct strtab *t)
{
	t->slots = calloc(STRTAB_INITIAL, sizeof *t->slots);
	t->cap = STRTAB_INITIAL;
	t->used = 0;
	return t->slots ? 0 : -1;
}

void strtab__exit(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].text);
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = 0;
}

/* FNV-1a: short names dominate, where it is as fast as anything fancier. */
uint64_t strtab__hash(const char *text, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)text[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int64_t strtab__find(const struct strtab *t, const char *text, size_t len, uint64_t hash)
{
	size_t mask = t->cap - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct strtab_slot *s = &t->slots[i];

		if (!s->text)
			return 0;
		if (s->hash == hash && !memcmp(s->text, text, len) && s->text[len] == '\0')
			return s->id;
	}
}

static void place(struct strtab_slot *slots, size_t cap, const struct strtab_slot *from)
{
	size_t mask = cap - 1;
	size_t i = from->hash & mask;

	while (slots[i].text)
		i = (i + 1) & mask;
	slots[i] = *from;
}

static int grow(struct strtab *t)
{
	size_t cap = t->cap * 2;
	struct strtab_slot *slots = calloc(cap, sizeof *slots);

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].text)
			place(slots, cap, &t->slots[i]);
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int strtab__add(struct strtab *t, const char *text, size_t len, uint64_t hash, int64_t id)
{
	struct strtab_slot s = { .hash = hash, .id = id };

	/* Keep the load under 1/2 so probe chains stay short. */
	if ((t->used + 1) * 2 > t->cap && grow(t))
		return -1;
	s.text = malloc(len + 1);
	if (!s.text)
		return -1;
	memcpy(s.text, text, len);
	s.text[len] = '\0';
	place(t->slots, t->cap, &s);
	t->used++;
	return 0;
}
