/* text.h - the text analyses write (text.c): durations and byte counts in
 * human units into a caller's buffer, and a formatted string allocated for
 * the caller (evidence, changes, labels, SQL built of constants). */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>

const char *diag__ns(char *buf, size_t cap, int64_t ns);
const char *diag__bytes(char *buf, size_t cap, double bytes);
/* NULL when out of memory; the caller frees. */
char *diag__fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
