/* strfmt.h - printf into a new allocation: the one formatted allocation
 * of perfkit (asprintf is a GNU extension, and each file that wanted it
 * wrote its own). */
#ifndef PROF_STRFMT_H
#define PROF_STRFMT_H

#include <stdarg.h>

/* The formatted text in a malloc'd string, or NULL when out of memory or
 * when fmt cannot be formatted. */
char *prof_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *prof_vstrfmt(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
