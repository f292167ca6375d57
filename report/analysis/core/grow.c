/* grow.c - array growth for the analyses (grow.h). */
#include "grow.h"

#include <stdlib.h>

#include "prof/error.h"

int array__grow(void **v, int *cap, int need, size_t size)
{
	int ncap;
	void *nv;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(*v, size * (size_t)ncap);
	if (!nv)
		return PROF_E_NOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}
