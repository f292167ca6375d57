/* call_runs.c - a table of calls counted by (name id, duration) in the
 * calls' census walk, for the API summary (call_runs.h). */
#include "model/call_runs.h"

#include "model/memo.h"
#include "model/sql.h"

/* One table's runs under its name: NULL where the walk could not count
 * them. */
static const char table_runs_key;

int sum_call_runs__take(struct prof_store *s, const char *table, const struct group_runs **out)
{
	const void *given = NULL;

	*out = NULL;
	if (prof_store__restricted(s) || !sum_shared__given(s, &table_runs_key, table, &given))
		return 0;
	*out = given;
	return 1;
}

void call_runs_walk__begin(struct call_runs_walk *w, bool wanted)
{
	w->r = wanted ? group_runs__new() : NULL;
}

static bool int_or_null(enum prof_value_kind k)
{
	return k == PROF_VALUE_INT || k == PROF_VALUE_NULL;
}

int call_runs_walk__add(struct call_runs_walk *w, struct prof_cursor *c, int name_col, int start_col, int end_col)
{
	enum prof_value_kind kn, ks, ke;
	int64_t start, end;
	int rc;

	if (!w->r)
		return 0;
	kn = prof_cursor__kind(c, name_col);
	ks = prof_cursor__kind(c, start_col);
	ke = prof_cursor__kind(c, end_col);
	/* the summary's join compares a name id of another type its own way */
	if (!int_or_null(kn) || !int_or_null(ks) || !int_or_null(ke)) {
		call_runs_walk__exit(w);
		return 0;
	}
	start = prof_cursor__int64(c, start_col);
	end = prof_cursor__int64(c, end_col);
	if (sum_call_span_bad(ks, start, ke, end)) {
		group_runs__add_left_out(w->r);
		return 0;
	}
	rc = group_runs__add(w->r, kn == PROF_VALUE_NULL, prof_cursor__int64(c, name_col), end - start);
	/* too many distinct durations: the summary counts them its own way */
	if (rc <= 0)
		call_runs_walk__exit(w);
	return rc < 0 ? PROF_E_NOMEM : 0;
}

static void runs_free(void *r)
{
	group_runs__free(r);
}

void call_runs_walk__give(struct prof_store *s, const char *table, struct call_runs_walk *w)
{
	if (w->r && group_runs__finish(w->r) < 0)
		call_runs_walk__exit(w);
	if (w->r && sum_shared__offer(s, &table_runs_key, table, w->r, runs_free))
		w->r = NULL;
	call_runs_walk__exit(w);
}

void call_runs_walk__exit(struct call_runs_walk *w)
{
	group_runs__free(w->r);
	w->r = NULL;
}
