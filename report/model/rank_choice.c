/* rank_choice.c - --rank's choice read back from the store's temporary
 * tables (rank_choice.h): below the rank model and the filter both. */
#include "rank_choice.h"
#include "model/ranks.h"


int sum_temp__exec_int(struct prof_store *s, const char *sql, int64_t v, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, sql, &c, err);

	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, v);
	rc = prof_cursor__next(c, err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int sum_ranks__mark_selected(struct prof_store *s, struct sum_ranks *r, struct prof_error *err)
{
	struct prof_cursor *c;
	bool filtered;
	int rc = sum_temp__exists(s, FILTER_MARK, &filtered, err);

	if (rc || !filtered)
		return rc;
	r->filtered = true;
	for (int i = 0; i < r->n; i++)
		r->p[i].selected = false;
	rc = prof_cursor__open(s, "SELECT globalPid FROM temp." CHOICE_TABLE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1)
		for (int i = 0; i < r->n; i++)
			if (r->p[i].global_pid == prof_cursor__int64(c, 0))
				r->p[i].selected = true;
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}
