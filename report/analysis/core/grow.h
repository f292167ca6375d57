/* grow.h - array growth for the analyses (grow.c). */
#ifndef REPORT_GROW_H
#define REPORT_GROW_H

#include <stddef.h>

/* Room for need elements of size bytes in *v (capacity *cap, doubled as
 * needed). Returns 0 or PROF_E_NOMEM, leaving *v as it was. */
int array__grow(void **v, int *cap, int need, size_t size);

#endif
