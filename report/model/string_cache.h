/* string_cache.h - StringIds values read once an id, for a reader that
 * meets one id on many rows (a kernel's name on each of its launches):
 * looked up per row, the name was a subquery a row, and its text went
 * through the rows' sort (string_cache.c). */
#ifndef REPORT_MODEL_STRING_CACHE_H
#define REPORT_MODEL_STRING_CACHE_H

#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

struct string_cache;

int string_cache__new(struct prof_store *s, struct string_cache **out, struct prof_error *err);
/* The value StringIds holds for the id in column col of cur, as
 * "(SELECT value FROM StringIds WHERE id = <column>)" would give it: NULL
 * for a NULL id, an id StringIds lacks or a NULL value. *tag is the
 * caller's number for the id, -1 until the caller sets one (a note of
 * what it made of the value), kept with an integer id; an id of another
 * type (a foreign file) is asked of SQLite each time, its tag -1 anew.
 * Valid until the cache is freed. < 0 on an error of SQLite's or memory. */
int string_cache__of_column(struct string_cache *c, struct prof_cursor *cur, int col, const char **value,
			    int **tag, struct prof_error *err);
/* The same for an integer id. */
int string_cache__of_id(struct string_cache *c, int64_t id, const char **value, int **tag, struct prof_error *err);
void string_cache__free(struct string_cache *c);

#endif
