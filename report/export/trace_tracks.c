/* trace_tracks.c - the track lists' ids and the extent gathered by the
 * pairs' passes (see trace_tracks.h): each list a set of distinct tuples
 * of up to three integers, each of which may be NULL. */
#include "trace_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/window.h"

#define TUPLE_MAX 3
#define EXTENT_TABLES_MAX 8

/* A tuple's values, and which are NULL (bit i: value i), with SLOT_USED
 * set in a slot that holds one. */
struct tuple {
	int64_t v[TUPLE_MAX];
	int64_t nulls;
};
#define SLOT_USED ((int64_t)1 << 62)

/* Distinct tuples, open-addressed; the tuple added last is kept apart, as
 * rows come in runs of one thread or one stream. */
struct tuple_set {
	struct tuple *slots;
	size_t n, cap; /* cap: a power of two, or 0 */
	struct tuple last;
	bool has_last;
};

struct tm_tracks {
	struct tuple_set host;       /* (thread) */
	struct tuple_set gpu;        /* (process, device, stream) */
	struct tuple_set names[2];   /* (thread, name id), by API table */
	bool unusable;               /* a value that is neither an integer nor NULL */
	bool extent_rows;            /* the pass under way counts toward the extent */
	const char *extent_tables[EXTENT_TABLES_MAX + 1];
	size_t nextent;
	int64_t lo, hi;
};

static uint64_t tuple_hash(const struct tuple *t)
{
	uint64_t h = (uint64_t)t->nulls * 0x9E3779B97F4A7C15u;

	for (int i = 0; i < TUPLE_MAX; i++) {
		h ^= (uint64_t)t->v[i] + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
		h *= 0xBF58476D1CE4E5B9u;
	}
	return h ^ (h >> 31);
}

static bool tuple_same(const struct tuple *a, const struct tuple *b)
{
	return a->nulls == b->nulls && memcmp(a->v, b->v, sizeof a->v) == 0;
}

/* t in set s's slots (cap a power of two, with room). */
static void slot_put(struct tuple *slots, size_t cap, const struct tuple *t)
{
	size_t i = (size_t)tuple_hash(t) & (cap - 1);

	while (slots[i].nulls & SLOT_USED) {
		if (tuple_same(&slots[i], t))
			return;
		i = (i + 1) & (cap - 1);
	}
	slots[i] = *t;
}

static int set_grow(struct tuple_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct tuple *slots = calloc(cap, sizeof *slots);

	if (!slots)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].nulls & SLOT_USED)
			slot_put(slots, cap, &s->slots[i]);
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

/* Adds t (its nulls without SLOT_USED); < 0 out of memory. */
static int set_add(struct tuple_set *s, struct tuple t)
{
	size_t i;

	t.nulls |= SLOT_USED;
	if (s->has_last && tuple_same(&s->last, &t))
		return 0;
	s->last = t;
	s->has_last = true;
	if ((s->n + 1) * 4 > s->cap * 3 && set_grow(s) < 0)
		return -1;
	i = (size_t)tuple_hash(&t) & (s->cap - 1);
	while (s->slots[i].nulls & SLOT_USED) {
		if (tuple_same(&s->slots[i], &t))
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i] = t;
	s->n++;
	return 0;
}

static void set_free(struct tuple_set *s)
{
	free(s->slots);
	memset(s, 0, sizeof *s);
}

struct tm_tracks *tm_tracks__new(void)
{
	struct tm_tracks *t = calloc(1, sizeof *t);

	if (t) {
		t->lo = INT64_MAX;
		t->hi = INT64_MIN;
	}
	return t;
}

void tm_tracks__free(struct tm_tracks *t)
{
	if (!t)
		return;
	set_free(&t->host);
	set_free(&t->gpu);
	set_free(&t->names[0]);
	set_free(&t->names[1]);
	free(t);
}

void tm_tracks__table(struct tm_tracks *t, const char *table)
{
	t->extent_rows = sum_capture__extent_table(table);
	if (!t->extent_rows)
		return;
	/* more tables than the extent has: what is known is not all */
	if (t->nextent == EXTENT_TABLES_MAX) {
		t->unusable = true;
		return;
	}
	t->extent_tables[t->nextent++] = table;
}

/* Column col of r into tuple slot i: false where it is neither an
 * integer nor NULL. */
static bool read_value(const struct tp_row *r, int col, struct tuple *t, int i)
{
	switch (r->kind[col]) {
	case PROF_VALUE_INT:
		t->v[i] = r->v[col];
		return true;
	case PROF_VALUE_NULL:
		t->nulls |= (int64_t)1 << i;
		return true;
	default:
		return false;
	}
}

/* The row's start and end toward the extent: a real row (SQL's "start >
 * 0 AND NOT bad") whose times are integers; else the extent is SQL's. */
static void extent_row(struct tm_tracks *t, const struct tp_row *r)
{
	int64_t start, end;

	if (!t->extent_rows || r->v[TP_BAD])
		return;
	if (r->kind[TP_START] != PROF_VALUE_INT || r->kind[TP_END] != PROF_VALUE_INT) {
		t->unusable = true;
		return;
	}
	start = r->v[TP_START];
	end = r->v[TP_END];
	if (start <= 0)
		return;
	if (start < t->lo)
		t->lo = start;
	if (end > t->hi)
		t->hi = end;
}

int tm_tracks__gpu_row(struct tm_tracks *t, const struct tp_row *r)
{
	struct tuple k = { 0 };

	if (t->unusable)
		return 0;
	extent_row(t, r);
	if (!read_value(r, TP_WHO, &k, 0) || !read_value(r, TP_DEVICE, &k, 1) ||
	    !read_value(r, TP_STREAM, &k, 2)) {
		t->unusable = true;
		return 0;
	}
	return set_add(&t->gpu, k);
}

int tm_tracks__call_row(struct tm_tracks *t, int api, const struct tp_row *r)
{
	struct tuple tid = { 0 }, name = { 0 };

	if (t->unusable)
		return 0;
	extent_row(t, r);
	if (!read_value(r, TP_WHO, &tid, 0)) {
		t->unusable = true;
		return 0;
	}
	if (set_add(&t->host, tid) < 0)
		return -1;
	/* a name id that is no integer names nothing in StringIds: the
	 * labels' join leaves the call out, and so does the list */
	if (r->kind[TP_NAME] != PROF_VALUE_INT)
		return 0;
	name = tid;
	name.v[1] = r->v[TP_NAME];
	return set_add(&t->names[api], name);
}

bool tm_tracks__usable(const struct tm_tracks *t)
{
	return t && !t->unusable;
}

const char *const *tm_tracks__extent_tables(const struct tm_tracks *t)
{
	return t->extent_tables;
}

void tm_tracks__extent(const struct tm_tracks *t, int64_t *lo, int64_t *hi)
{
	*lo = t->lo;
	*hi = t->hi;
}

/* Each tuple of set into table through an INSERT of ncols parameters. */
static int fill_table(const struct tuple_set *set, struct prof_store *s, const char *table,
		      int ncols, struct prof_error *err)
{
	static const char *const params[] = { "", "?1", "?1, ?2", "?1, ?2, ?3" };
	char sql[160];
	struct prof_cursor *c = NULL;
	int rc;

	/* OR IGNORE: a thread the list holds already (an NVTX row's) */
	snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO temp.%s VALUES (%s)", table, params[ncols]);
	rc = prof_cursor__open(s, sql, &c, err);
	for (size_t i = 0; rc >= 0 && i < set->cap; i++) {
		const struct tuple *k = &set->slots[i];

		if (!(k->nulls & SLOT_USED))
			continue;
		for (int col = 0; col < ncols; col++)
			if (k->nulls & ((int64_t)1 << col))
				prof_cursor__bind_text(c, col + 1, NULL); /* NULL */
			else
				prof_cursor__bind_int64(c, col + 1, k->v[col]);
		rc = prof_cursor__next(c, err);
		prof_cursor__reset(c);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int tm_tracks__fill(const struct tm_tracks *t, struct prof_store *s, const char *host_ids,
		    const char *gpu_ids, const char *const call_names[2], struct prof_error *err)
{
	int rc = fill_table(&t->host, s, host_ids, 1, err);

	if (rc == 0)
		rc = fill_table(&t->gpu, s, gpu_ids, 3, err);
	for (int api = 0; rc == 0 && api < 2; api++)
		rc = fill_table(&t->names[api], s, call_names[api], 2, err);
	return rc;
}
