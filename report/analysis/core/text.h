/* text.h - the text analyses write (text.c): durations and byte counts in
 * human units into a caller's buffer, and a formatted string allocated for
 * the caller (evidence, changes, labels, SQL built of constants). */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include "prof/strfmt.h"

#include <stddef.h>
#include <stdint.h>

const char *diag__ns(char *buf, size_t cap, int64_t ns);
const char *diag__bytes(char *buf, size_t cap, double bytes);
/* NULL when out of memory; the caller frees. */
/* A finding's text in a new allocation: libprof's one formatted allocation. */
#define diag__fmt(...) prof_strfmt(__VA_ARGS__)

#endif
