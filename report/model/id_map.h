/* id_map.h - an open-addressed table from int64 ids to the caller's
 * values, for readers that meet one id on many rows and make something of
 * it once (a name read from StringIds, a frame made from it): the string
 * cache (string_cache.h) and the folded stacks' frame names; and for the
 * timeline exports' launching calls (trace_pairs.h), which come and go. */
#ifndef REPORT_MODEL_ID_MAP_H
#define REPORT_MODEL_ID_MAP_H

#include <stddef.h>
#include <stdint.h>

struct id_map {
	int64_t *ids;
	void **values; /* NULL: a free slot */
	size_t n, cap; /* cap: a power of two, or 0 */
};

/* The value put under id, or NULL. */
void *id_map__get(const struct id_map *m, int64_t id);
/* value (not NULL) under id, which the map does not hold yet; the map
 * owns it from then on. < 0 where memory runs out: the value stays the
 * caller's. */
int id_map__put(struct id_map *m, int64_t id, void *value);
/* id's value, taken out of the map (the caller's again), or NULL. */
void *id_map__take(struct id_map *m, int64_t id);
/* Every value given to free_value (NULL: free()), the map emptied. */
void id_map__exit(struct id_map *m, void (*free_value)(void *));

#endif
