/* name_table.c - string interning for perfkit top (name_table.h): libprof's
 * string map from text to index, and the texts by index. */
#include "name_table.h"

#include <stdlib.h>
#include <string.h>

#include "prof/array.h"

void name_table__init(struct name_table *t)
{
	memset(t, 0, sizeof *t);
	prof_strmap__init(&t->index);
}

void name_table__exit(struct name_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	prof_strmap__exit(&t->index);
	name_table__init(t);
}

int32_t name_table__find(const struct name_table *t, const char *name)
{
	size_t len = strlen(name);
	int64_t i;

	if (!prof_strmap__find(&t->index, name, len, prof_strmap__hash(name, len), &i))
		return -1;
	return (int32_t)i;
}

int32_t name_table__intern(struct name_table *t, const char *name)
{
	size_t len = strlen(name);
	uint64_t hash = prof_strmap__hash(name, len);
	int64_t i;
	char *copy;

	if (prof_strmap__find(&t->index, name, len, hash, &i))
		return (int32_t)i;
	if (t->n >= INT32_MAX || prof_array__grow(&t->names, &t->cap, t->n + 1, sizeof *t->names) < 0)
		return -1;
	copy = strdup(name);
	if (!copy)
		return -1;
	if (prof_strmap__add(&t->index, name, len, hash, (int64_t)t->n) < 0) {
		free(copy);
		return -1;
	}
	t->names[t->n] = copy;
	return (int32_t)t->n++;
}
