/* name_table.h - interned names: each distinct text gets one small index.
 *
 * perfkit top aggregates kernels and NVTX ranges by name across several
 * stores (one per process), whose StringIds ids differ; the name text is the
 * key they share. Names are kept as given (callers sanitise them first). */
#ifndef TUI_NAME_TABLE_H
#define TUI_NAME_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "prof/strmap.h"

struct name_table {
	char **names;            /* index -> text */
	size_t n, cap;
	struct prof_strmap index; /* text -> index */
};

void name_table__init(struct name_table *t);
void name_table__exit(struct name_table *t);
/* The index of name, added when new; -1 when out of memory. */
int32_t name_table__intern(struct name_table *t, const char *name);
/* The index of name, or -1. */
int32_t name_table__find(const struct name_table *t, const char *name);
static inline const char *name_table__name(const struct name_table *t, int32_t i)
{
	return t->names[i];
}

#endif
