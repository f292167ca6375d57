/* strtab.h - the writer's in-memory index of StringIds: text -> id.
 *
 * Open addressing with linear probing over a power-of-two table; the table
 * owns copies of the strings. Interning a name that is already known costs
 * one hash and usually one comparison, no allocation. */
#ifndef PROF_STRTAB_H
#define PROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab_slot {
	uint64_t hash;
	char *text;   /* NULL: empty slot */
	int64_t id;
};

struct strtab {
	struct strtab_slot *slots;
	size_t cap;   /* power of two */
	size_t used;
};

int strtab__init(struct strtab *t);
void strtab__exit(struct strtab *t);
uint64_t strtab__hash(const char *text, size_t len);
/* The id of text, or 0 when it is not in the table. */
int64_t strtab__find(const struct strtab *t, const char *text, size_t len, uint64_t hash);
/* Add text (not yet present) with id. Returns 0 or -1 when out of memory. */
int strtab__add(struct strtab *t, const char *text, size_t len, uint64_t hash, int64_t id);

#endif
