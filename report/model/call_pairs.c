/* call_pairs.c - each (thread, name id) of the calls once (call_pairs.h):
 * one walk of each table of calls, shared by a finished capture's
 * connections. The HTML page's threads' labels and the diagnosis's model
 * of the program each asked it, on two threads: the model's DISTINCT
 * sorted every call (8.2 s at 22M calls, where a walk takes 1.2 s a
 * table), and the labels walked the calls again. */
#include "model/call_pairs.h"

#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"
#include "model/memo.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/tables.h"

static uint64_t pair_hash(bool tid_null, int64_t tid, int64_t name)
{
	uint64_t h = (uint64_t)tid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)name * 0xc2b2ae3d27d4eb4fULL ^ tid_null;

	return h ^ (h >> 29);
}

static size_t pair_at(const struct call_pair *v, size_t cap, bool tid_null, int64_t tid, int64_t name)
{
	size_t at = pair_hash(tid_null, tid, name) & (cap - 1);

	while (v[at].used && (v[at].tid_null != tid_null || v[at].tid != tid || v[at].name != name))
		at = (at + 1) & (cap - 1);
	return at;
}

static int add_pair(struct call_pairs *p, bool tid_null, int64_t tid, int64_t name, bool good)
{
	size_t at;

	if ((p->n + 1) * 2 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct call_pair *v = calloc(cap, sizeof *v);

		if (!v)
			return -1;
		for (size_t i = 0; i < p->cap; i++)
			if (p->v[i].used)
				v[pair_at(v, cap, p->v[i].tid_null, p->v[i].tid, p->v[i].name)] = p->v[i];
		free(p->v);
		p->v = v;
		p->cap = cap;
	}
	at = pair_at(p->v, p->cap, tid_null, tid, name);
	if (!p->v[at].used) {
		p->v[at] = (struct call_pair){ tid, name, tid_null, good, true };
		p->n++;
	}
	p->v[at].good |= good;
	return 0;
}

static int add_tid(struct call_pairs *p, int64_t tid)
{
	size_t at = sum_sorted__count_before(p->tids, p->ntids, sizeof *p->tids, 0, tid, false);

	if (at < p->ntids && p->tids[at] == tid)
		return 0;
	if (sum_array__grow(&p->tids, &p->tids_cap, p->ntids, sizeof *p->tids) < 0)
		return -1;
	memmove(&p->tids[at + 1], &p->tids[at], (p->ntids - at) * sizeof *p->tids);
	p->tids[at] = tid;
	p->ntids++;
	return 0;
}

static bool int_or_null(enum prof_value_kind k)
{
	return k == PROF_VALUE_INT || k == PROF_VALUE_NULL;
}

void call_pairs_walk__begin(struct call_pairs_walk *w)
{
	*w = (struct call_pairs_walk){ .p = calloc(1, sizeof *w->p) };
}

int call_pairs_walk__add(struct call_pairs_walk *w, struct prof_cursor *c, int tid_col, int name_col, int start_col,
			 int end_col)
{
	enum prof_value_kind kt = prof_cursor__kind(c, tid_col), kn = prof_cursor__kind(c, name_col);
	enum prof_value_kind ks = prof_cursor__kind(c, start_col), ke = prof_cursor__kind(c, end_col);
	bool tid_null = kt == PROF_VALUE_NULL, named = kn == PROF_VALUE_INT, good;
	int64_t tid, name;

	if (!w->p)
		return PROF_E_NOMEM;
	if (w->odd)
		return 0;
	if (!int_or_null(kt) || !int_or_null(kn) || !int_or_null(ks) || !int_or_null(ke)) {
		w->odd = true;
		return 0;
	}
	tid = tid_null ? 0 : prof_cursor__int64(c, tid_col);
	name = named ? prof_cursor__int64(c, name_col) : 0;
	good = !sum_call_span_bad(ks, prof_cursor__int64(c, start_col), ke, prof_cursor__int64(c, end_col));
	/* a thread's calls come in runs, of a few names */
	if (w->any && w->tid_null == tid_null && w->tid == tid) {
		/* the run's pair again, with nothing new to say */
		if (!named || (w->named && w->name == name && (w->good || !good)))
			return 0;
	} else if (!tid_null && add_tid(w->p, tid) < 0) {
		return PROF_E_NOMEM;
	}
	w->any = true;
	w->tid_null = tid_null;
	w->named = named;
	w->good = good;
	w->tid = tid;
	w->name = name;
	if (named && add_pair(w->p, tid_null, tid, name, good) < 0)
		return PROF_E_NOMEM;
	return 0;
}

void call_pairs_walk__exit(struct call_pairs_walk *w)
{
	sum_call_pairs__delete(w->p);
	w->p = NULL;
}

/* table's rows into p: 1; 0 where a thread, name id, start or end is of
 * another type than integer (or NULL); < 0 an error. */
static int walk(struct prof_store *s, const char *table, struct call_pairs *p, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	struct call_pairs_walk w = { .p = p };
	char *sql = prof_strfmt("SELECT globalTid, nameId, start, end FROM %s", table);
	int rc = sql ? prof_cursor__open(s, sql, &cur, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	free(sql);
	while (rc >= 0 && !w.odd && (rc = prof_cursor__next(cur, err)) > 0)
		if (call_pairs_walk__add(&w, cur, 0, 1, 2, 3) < 0)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	prof_cursor__close(cur);
	return rc < 0 ? rc : w.odd ? 0 : 1;
}

static struct call_pairs *copy_pairs(const struct call_pairs *p)
{
	struct call_pairs *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->tids = malloc(sizeof *c->tids * (p->ntids ? p->ntids : 1));
	c->v = calloc(p->cap ? p->cap : 1, sizeof *c->v);
	if (!c->tids || !c->v) {
		sum_call_pairs__delete(c);
		return NULL;
	}
	if (p->ntids)
		memcpy(c->tids, p->tids, sizeof *c->tids * p->ntids);
	if (p->cap)
		memcpy(c->v, p->v, sizeof *c->v * p->cap);
	c->ntids = c->tids_cap = p->ntids;
	c->n = p->n;
	c->cap = p->cap;
	return c;
}

static void pairs_free(void *p)
{
	sum_call_pairs__delete(p);
}

static const char pairs_key;
/* One table's pairs, as the calls' census walked them, under the table's
 * name: NULL where a value was of another type. */
static const char table_pairs_key;

void call_pairs_walk__give(struct prof_store *s, const char *table, struct call_pairs_walk *w)
{
	if (prof_store__is_finished(s) && w->p &&
	    sum_shared__offer(s, &table_pairs_key, table, w->odd ? NULL : w->p, pairs_free) && !w->odd)
		w->p = NULL;
	call_pairs_walk__exit(w);
}

/* p's pairs and threads added to into. 0, or PROF_E_NOMEM. */
static int merge(struct call_pairs *into, const struct call_pairs *p)
{
	for (size_t i = 0; i < p->ntids; i++)
		if (add_tid(into, p->tids[i]) < 0)
			return PROF_E_NOMEM;
	for (size_t i = 0; i < p->cap; i++)
		if (p->v[i].used && add_pair(into, p->v[i].tid_null, p->v[i].tid, p->v[i].name, p->v[i].good) < 0)
			return PROF_E_NOMEM;
	return 0;
}

/* table's rows into p, from the pairs the calls' census walked where it
 * did (every reader of a file asks for the census first: its extent),
 * else by a walk of its own: as walk(). */
static int table_into(struct prof_store *s, const char *table, struct call_pairs *p, struct prof_error *err)
{
	const void *given = NULL;

	/* none given: the census did not walk every row, or is not done */
	if (sum_shared__given(s, &table_pairs_key, table, &given))
		return merge(p, given) ? prof_error__set(err, PROF_E_NOMEM, "out of memory") : 1;
	return walk(s, table, p, err);
}

int sum_call_pairs__load(struct prof_store *s, const char *const tables[2], struct call_pairs **out,
			 struct prof_error *err)
{
	/* which tables were walked: the question the shared answer is of */
	char tag[2] = { tables[0] != NULL, tables[1] != NULL };
	struct call_pairs *p = calloc(1, sizeof *p);
	void *known = NULL;
	int got = -1, rc = 1;

	*out = NULL;
	if (!p)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (prof_store__is_finished(s) && !prof_store__restricted(s))
		got = prof_store__shared_take(s, &pairs_key, tag, sizeof tag, &known);
	if (got == 1) {
		free(p);
		/* none kept: the calls were of another type */
		if (!known)
			return 0;
		*out = copy_pairs(known);
		return *out ? 1 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; rc == 1 && i < 2; i++)
		if (tables[i])
			rc = got == 0 ? table_into(s, tables[i], p, err) : walk(s, tables[i], p, err);
	if (got == 0) {
		struct call_pairs *copy = rc == 1 ? copy_pairs(p) : NULL;

		if (rc == 0 || copy)
			prof_store__shared_give(s, &pairs_key, tag, sizeof tag, copy, pairs_free);
		else /* whoever waits reads them for itself */
			prof_store__shared_drop(s, &pairs_key, tag, sizeof tag);
	}
	if (rc != 1) {
		sum_call_pairs__delete(p);
		return rc;
	}
	*out = p;
	return 1;
}

void sum_call_pairs__delete(struct call_pairs *p)
{
	if (!p)
		return;
	free(p->tids);
	free(p->v);
	free(p);
}

int sum_call_pairs__each_string(struct prof_store *s, const struct call_pairs *p, bool good_only,
				void (*each)(void *arg, size_t k, const char *value), void *arg, size_t *n,
				struct prof_error *err)
{
	int64_t *names = malloc(sizeof *names * (p->n ? p->n : 1));
	struct prof_cursor *c = NULL;
	char *json;
	int rc;

	*n = 0;
	if (!names)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (size_t i = 0; i < p->cap; i++)
		if (p->v[i].used && (p->v[i].good || !good_only))
			names[(*n)++] = p->v[i].name;
	json = sum_json_ids(names, *n);
	free(names);
	rc = json ? prof_cursor__open(s, "SELECT j.key, v.value FROM json_each(?1) j JOIN " PROF_T_STRINGS
				      " v ON v.id = j.value", &c, err)
		  : prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc == 0 && prof_cursor__bind_text(c, 1, json))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t k = prof_cursor__int64(c, 0);
		const char *value = prof_cursor__text(c, 1);

		if (k >= 0 && (size_t)k < *n && value)
			each(arg, (size_t)k, value);
	}
	prof_cursor__close(c);
	free(json);
	return rc < 0 ? rc : 0;
}
