/* text.c - durations and bytes in human units for diagnose's text (text.h):
 * libprof's units in their fixed style. */
#include "text.h"

#include "prof/units.h"

const char *diag__ns(char *buf, size_t cap, int64_t ns)
{
	return prof_units__duration(buf, cap, ns, PROF_UNITS_FIXED);
}

const char *diag__bytes(char *buf, size_t cap, double bytes)
{
	return prof_units__bytes(buf, cap, bytes, PROF_UNITS_FIXED);
}
