/* name_ids.c - the ids of the strings matching a pattern (name_ids.h). */
#include "name_ids.h"

#include <stdlib.h>

#include "grow.h"
#include "model/sums.h"
#include "prof/tables.h"

int name_ids__load(struct prof_store *s, const char *glob, struct name_ids *out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc, cap = 0;

	*out = (struct name_ids){ 0 };
	if (!prof_store__has_table(s, PROF_T_STRINGS))
		return 0;
	rc = prof_cursor__open(s, "SELECT id FROM " PROF_T_STRINGS " WHERE value GLOB ?1 ORDER BY id", &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, glob);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (array__grow((void **)&out->v, &cap, out->n + 1, sizeof *out->v)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		out->v[out->n++] = prof_cursor__int64(c, 0);
	}
	prof_cursor__close(c);
	if (rc < 0)
		name_ids__exit(out);
	return rc < 0 ? rc : 0;
}

bool name_ids__has(const struct name_ids *ids, int64_t id)
{
	size_t i = sum_sorted__count_before(ids->v, (size_t)ids->n, sizeof *ids->v, 0, id, false);

	return i < (size_t)ids->n && ids->v[i] == id;
}

void name_ids__exit(struct name_ids *ids)
{
	free(ids->v);
	*ids = (struct name_ids){ 0 };
}
