/* array.h - the one growable array of perfkit: room for need elements in
 * a malloc'd array, doubling, the size checked for overflow.
 *
 *	struct row *rows = NULL;
 *	size_t n = 0, cap = 0;
 *	if (prof_array__grow(&rows, &cap, n + 1, sizeof *rows) < 0)
 *		return PROF_E_NOMEM;
 *	rows[n++] = row;
 */
#ifndef PROF_ARRAY_H
#define PROF_ARRAY_H

#include <stddef.h>

/* Make *(void **)array hold at least need elements of elem_size bytes: a
 * full array doubles (from 16 elements), so appending one at a time costs
 * amortised constant time. *cap is its capacity in elements. 0, or
 * PROF_E_NOMEM with the array and *cap as they were (also when need
 * elements would not fit in a size_t). */
int prof_array__grow(void *array, size_t *cap, size_t need, size_t elem_size);

#endif
