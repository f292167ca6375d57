/* idmap.h - an int64 -> int32 hash map (open addressing, linear probing).
 *
 * perfkit top keeps one per store to turn StringIds ids into entries of its
 * name tables without asking SQLite again for a name it has seen. Keys are
 * any int64 but INT64_MIN, which marks a free slot. */
#ifndef TUI_IDMAP_H
#define TUI_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	int64_t *keys;
	int32_t *values;
	size_t cap;   /* a power of two, or 0 before the first put */
	size_t used;
};

void idmap__init(struct idmap *m);
void idmap__exit(struct idmap *m);
/* The value of key, or -1 when absent. */
int32_t idmap__get(const struct idmap *m, int64_t key);
/* Insert or replace. 0, or -1 when out of memory. */
int idmap__put(struct idmap *m, int64_t key, int32_t value);

#endif
