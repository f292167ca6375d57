/* array.c - the growable array (prof/array.h). */
#include "prof/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prof/error.h"

#define ARRAY_FIRST_CAP 16

int prof_array__grow(void *array, size_t *cap, size_t need, size_t elem_size)
{
	void **p = array;
	size_t ncap = *cap ? *cap : ARRAY_FIRST_CAP;
	void *grown;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return PROF_E_NOMEM;
		ncap *= 2;
	}
	if (elem_size && ncap > SIZE_MAX / elem_size)
		return PROF_E_NOMEM;
	grown = realloc(*p, ncap * elem_size);
	if (!grown)
		return PROF_E_NOMEM;
	*p = grown;
	*cap = ncap;
	return 0;
}
