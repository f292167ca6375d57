/* json_ids.c - a list of ids as one SQL parameter (sql.h, sum_json_ids):
 * a statement over the few ids a reader holds in memory (the window's call
 * names, a capture's threads) reads them from json_each(?), bound, where it
 * was stepped once an id. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/sql.h"

char *sum_json_ids(const int64_t *ids, size_t n)
{
	/* "[", each id of at most 20 characters and its comma, "]" */
	size_t cap = 3 + n * 21, len = 0;
	char *json = malloc(cap);

	if (!json)
		return NULL;
	json[len++] = '[';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(json + len, cap - len, "%s%" PRId64, i ? "," : "", ids[i]);
	snprintf(json + len, cap - len, "]");
	return json;
}
