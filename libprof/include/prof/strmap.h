/* strmap.h - the one string map of perfkit: text -> int64_t value.
 *
 * Open addressing with linear probing over a power-of-two table, kept at
 * most half full; the map owns copies of its keys. Keys are counted bytes
 * (they need no terminating NUL), so a caller that
 * looks a name up many times hashes it once (prof_strmap__hash) and passes
 * the hash with every call. Finding a key that is there costs one hash and
 * usually one comparison, no allocation. A key holds no NUL byte. */
#ifndef PROF_STRMAP_H
#define PROF_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof_strmap_slot {
	uint64_t hash;
	char *key; /* NULL: an empty slot */
	int64_t value;
};

struct prof_strmap {
	struct prof_strmap_slot *slots;
	size_t cap;  /* 0, or a power of two */
	size_t used; /* keys held */
};

/* An empty map (it allocates at its first key). */
void prof_strmap__init(struct prof_strmap *m);
/* Free the keys and the table; the map is empty again. */
void prof_strmap__exit(struct prof_strmap *m);
/* FNV-1a of key[0..len): short names dominate, where it is as fast as
 * anything fancier. */
uint64_t prof_strmap__hash(const char *key, size_t len);
/* Whether key[0..len) (hash: its prof_strmap__hash) is in m; its value in
 * *value (may be NULL) when it is. */
bool prof_strmap__find(const struct prof_strmap *m, const char *key, size_t len, uint64_t hash,
		       int64_t *value);
/* Add key[0..len), not yet in m, with value. 0 or PROF_E_NOMEM. */
int prof_strmap__add(struct prof_strmap *m, const char *key, size_t len, uint64_t hash,
		     int64_t value);

#endif
