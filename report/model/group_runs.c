/* group_runs.c - a summary source's rows counted by (group, value) in one
 * pass in the store's own order. The sorted statements it stands in for
 * (groups.c: a GROUP BY for each group's count, an ORDER BY of every value
 * for its median) sort every row twice: 5.6 s for the 2.2M API calls of a
 * capture of 1M kernels, where reading the same rows costs 0.55 s. The
 * rows' values repeat (durations in ns of the same call, the same kernel),
 * so the distinct pairs are few and their runs, put in the sorted order
 * afterwards, give every statistic to the last bit. Memory is bounded by
 * GROUP_RUNS_MAX pairs; past it the caller sorts in SQL as before. */
#include "model/group_runs.h"
#include "model/sums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct label {
	char *bytes; /* NULL for SQL NULL */
	size_t len;
};

struct group {
	struct label l1, l2;
	bool k_null;
	int64_t k;
	uint64_t hash;
};

struct pair {
	int64_t v, count;
	uint32_t group; /* index + 1; 0: a free slot */
	bool v_null;
};

struct group_runs {
	struct group *groups;
	size_t ngroups, groups_cap;
	uint32_t *group_slots; /* index + 1 of a group; 0: free */
	size_t group_slots_cap;
	struct pair *pairs;
	size_t npairs, pairs_cap;
	int64_t left_out;
	/* the group of the row before: most sources group by an id alone,
	 * and neighbouring rows share it */
	uint32_t last;
	bool have_last;
	/* after the count: the pairs in (group order, value) order, each
	 * one's group field its group's place in order + 1 */
	struct pair *sorted;
	struct group **order; /* the groups in (l1, l2, k) order */
};

static size_t max_pairs = GROUP_RUNS_MAX;

void group_runs__set_max(size_t max)
{
	max_pairs = max;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser: every input bit reaches every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_label(uint64_t h, const char *p, size_t len)
{
	if (!p)
		return mix(h ^ 0x6e756c6cULL);
	h ^= len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return mix(h);
}

static bool label_is(const struct label *l, const char *p, size_t len)
{
	if (!l->bytes || !p)
		return !l->bytes && !p;
	return l->len == len && memcmp(l->bytes, p, len) == 0;
}

static int label_set(struct label *l, const char *p, size_t len)
{
	if (!p)
		return 0;
	l->bytes = malloc(len + 1);
	if (!l->bytes)
		return PROF_E_NOMEM;
	memcpy(l->bytes, p, len);
	l->bytes[len] = '\0';
	l->len = len;
	return 0;
}

/* SQL's BINARY order: NULL first, then the bytes, a prefix first. */
static int label_cmp(const struct label *a, const struct label *b)
{
	int c;

	if (!a->bytes || !b->bytes)
		return (a->bytes != NULL) - (b->bytes != NULL);
	c = memcmp(a->bytes, b->bytes, a->len < b->len ? a->len : b->len);
	if (c)
		return c;
	return (a->len > b->len) - (a->len < b->len);
}

static int grow_group_slots(struct group_runs *r)
{
	size_t cap = r->group_slots_cap ? r->group_slots_cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof *slots);

	if (!slots)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < r->ngroups; i++) {
		size_t at = r->groups[i].hash & (cap - 1);

		while (slots[at])
			at = (at + 1) & (cap - 1);
		slots[at] = (uint32_t)(i + 1);
	}
	free(r->group_slots);
	r->group_slots = slots;
	r->group_slots_cap = cap;
	return 0;
}

/* The index of the group of (l1, l2, k), added where new. */
static int find_group(struct group_runs *r, const char *l1, size_t l1_len, const char *l2,
		      size_t l2_len, bool k_null, int64_t k, uint32_t *out)
{
	uint64_t h = hash_label(hash_label(mix((uint64_t)k ^ (k_null ? 0x9e37ULL : 0)), l1, l1_len),
				l2, l2_len);
	size_t at;
	struct group *g;
	int rc;

	if ((r->ngroups + 1) * 2 > r->group_slots_cap && (rc = grow_group_slots(r)) < 0)
		return rc;
	for (at = h & (r->group_slots_cap - 1); r->group_slots[at];
	     at = (at + 1) & (r->group_slots_cap - 1)) {
		g = &r->groups[r->group_slots[at] - 1];
		if (g->hash == h && g->k_null == k_null && (k_null || g->k == k) &&
		    label_is(&g->l1, l1, l1_len) && label_is(&g->l2, l2, l2_len)) {
			*out = r->group_slots[at] - 1;
			return 0;
		}
	}
	if (sum_array__grow(&r->groups, &r->groups_cap, r->ngroups, sizeof *r->groups) < 0)
		return PROF_E_NOMEM;
	g = &r->groups[r->ngroups];
	memset(g, 0, sizeof *g);
	g->k_null = k_null;
	g->k = k_null ? 0 : k;
	g->hash = h;
	if ((rc = label_set(&g->l1, l1, l1_len)) < 0 || (rc = label_set(&g->l2, l2, l2_len)) < 0) {
		free(g->l1.bytes);
		return rc;
	}
	r->group_slots[at] = (uint32_t)(r->ngroups + 1);
	*out = (uint32_t)r->ngroups++;
	return 0;
}

static size_t pair_slot(const struct pair *pairs, size_t cap, uint32_t group, bool v_null, int64_t v)
{
	size_t at = mix(((uint64_t)group << 1 | v_null) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)v) & (cap - 1);

	while (pairs[at].group &&
	       (pairs[at].group != group || pairs[at].v_null != v_null || pairs[at].v != v))
		at = (at + 1) & (cap - 1);
	return at;
}

static int grow_pairs(struct group_runs *r)
{
	size_t cap = r->pairs_cap ? r->pairs_cap * 2 : 1024;
	struct pair *pairs = calloc(cap, sizeof *pairs);

	if (!pairs)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < r->pairs_cap; i++) {
		const struct pair *p = &r->pairs[i];

		if (p->group)
			pairs[pair_slot(pairs, cap, p->group, p->v_null, p->v)] = *p;
	}
	free(r->pairs);
	r->pairs = pairs;
	r->pairs_cap = cap;
	return 0;
}

/* 1: counted; 0: more pairs than GROUP_RUNS_MAX; < 0: out of memory. */
static int add_pair(struct group_runs *r, uint32_t group, bool v_null, int64_t v)
{
	struct pair *p;
	int rc;

	if ((r->npairs + 1) * 2 > r->pairs_cap && (rc = grow_pairs(r)) < 0)
		return rc;
	p = &r->pairs[pair_slot(r->pairs, r->pairs_cap, group + 1, v_null, v)];
	if (!p->group) {
		if (r->npairs >= max_pairs)
			return 0;
		*p = (struct pair){ .v = v_null ? 0 : v, .group = group + 1, .v_null = v_null };
		r->npairs++;
	}
	p->count++;
	return 1;
}

static bool is_label(enum prof_value_kind k)
{
	return k == PROF_VALUE_NULL || k == PROF_VALUE_TEXT;
}

static bool is_integer(enum prof_value_kind k)
{
	return k == PROF_VALUE_NULL || k == PROF_VALUE_INT;
}

/* v into the group of (l1, l2, k): 1 counted, 0 more pairs than the
 * limit, < 0 out of memory. */
static int add_value(struct group_runs *r, const char *l1, size_t l1_len, const char *l2, size_t l2_len,
		     bool k_null, int64_t k, bool v_null, int64_t v)
{
	uint32_t group = 0;
	int rc;

	if (r->have_last && !l1 && !l2) {
		const struct group *g = &r->groups[r->last];

		if (!g->l1.bytes && !g->l2.bytes && g->k_null == k_null && g->k == k)
			return add_pair(r, r->last, v_null, v);
	}
	rc = find_group(r, l1, l1_len, l2, l2_len, k_null, k, &group);
	if (rc < 0)
		return rc;
	r->last = group;
	r->have_last = true;
	return add_pair(r, group, v_null, v);
}

/* One row into r: 1 counted, 0 not countable here, < 0 out of memory. */
static int count_row(struct group_runs *r, struct prof_cursor *c)
{
	const char *l1, *l2;
	size_t l1_len = 0, l2_len = 0;
	bool k_null;

	if (prof_cursor__kind(c, 4) != PROF_VALUE_INT)
		return 0;
	if (prof_cursor__int64(c, 4)) {
		r->left_out++;
		return 1;
	}
	if (!is_label(prof_cursor__kind(c, 0)) || !is_label(prof_cursor__kind(c, 1)) ||
	    !is_integer(prof_cursor__kind(c, 2)) || !is_integer(prof_cursor__kind(c, 3)))
		return 0;
	l1 = prof_cursor__text_bytes(c, 0, &l1_len);
	l2 = prof_cursor__text_bytes(c, 1, &l2_len);
	k_null = prof_cursor__is_null(c, 2);
	return add_value(r, l1, l1_len, l2, l2_len, k_null, k_null ? 0 : prof_cursor__int64(c, 2),
			 prof_cursor__is_null(c, 3), prof_cursor__int64(c, 3));
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = *(const struct group *const *)pa, *b = *(const struct group *const *)pb;
	int c = label_cmp(&a->l1, &b->l1);

	if (!c)
		c = label_cmp(&a->l2, &b->l2);
	if (!c && a->k_null != b->k_null)
		c = a->k_null ? -1 : 1;
	if (!c)
		c = (a->k > b->k) - (a->k < b->k);
	return c;
}

/* Pairs whose group field holds their group's place in order (+ 1). */
static int pair_cmp(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->v_null != b->v_null)
		return a->v_null ? -1 : 1;
	return (a->v > b->v) - (a->v < b->v);
}

/* Put the pairs in the order of the sorted statements: the groups in
 * (l1, l2, k) order, each pair's group field its group's place in it. The
 * comparisons need no context (the job's map sorts on several threads). */
static int sort_runs(struct group_runs *r)
{
	uint32_t *place = malloc((r->ngroups ? r->ngroups : 1) * sizeof *place);
	size_t n = 0;

	r->order = malloc((r->ngroups ? r->ngroups : 1) * sizeof *r->order);
	r->sorted = malloc((r->npairs ? r->npairs : 1) * sizeof *r->sorted);
	if (!place || !r->order || !r->sorted) {
		free(place);
		return PROF_E_NOMEM;
	}
	for (size_t i = 0; i < r->ngroups; i++)
		r->order[i] = &r->groups[i];
	qsort(r->order, r->ngroups, sizeof *r->order, group_cmp);
	for (size_t i = 0; i < r->ngroups; i++)
		place[r->order[i] - r->groups] = (uint32_t)i;
	for (size_t i = 0; i < r->pairs_cap; i++)
		if (r->pairs[i].group) {
			r->sorted[n] = r->pairs[i];
			r->sorted[n++].group = place[r->pairs[i].group - 1] + 1;
		}
	free(place);
	qsort(r->sorted, n, sizeof *r->sorted, pair_cmp);
	free(r->pairs);
	r->pairs = NULL;
	r->pairs_cap = 0;
	free(r->group_slots);
	r->group_slots = NULL;
	return 0;
}

struct group_runs *group_runs__new(void)
{
	return calloc(1, sizeof(struct group_runs));
}

int group_runs__add(struct group_runs *r, bool k_null, int64_t k, int64_t v)
{
	return add_value(r, NULL, 0, NULL, 0, k_null, k_null ? 0 : k, false, v);
}

void group_runs__add_left_out(struct group_runs *r)
{
	r->left_out++;
}

int group_runs__finish(struct group_runs *r)
{
	return sort_runs(r);
}

int group_runs__count(struct prof_store *s, const char *src, struct group_runs **out,
		      struct prof_error *err)
{
	static const char fmt[] = "SELECT l1, l2, k, v, bad FROM (%s)";
	struct prof_cursor *c = NULL;
	struct group_runs *r;
	size_t len = strlen(src) + sizeof fmt;
	char *sql = malloc(len);
	int rc, counted = 1;

	*out = NULL;
	r = calloc(1, sizeof *r);
	if (!sql || !r) {
		free(sql);
		free(r);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	/* src is SQL text written in this module, never data. */
	snprintf(sql, len, fmt, src);
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0 &&
	       (counted = count_row(r, c)) > 0)
		;
	if (c)
		prof_cursor__close(c);
	if (rc >= 0 && counted < 0)
		rc = prof_error__set(err, counted, "out of memory");
	else if (rc >= 0 && counted == 0)
		rc = 0;
	else if (rc >= 0 && (rc = sort_runs(r)) < 0)
		prof_error__set(err, rc, "out of memory");
	else if (rc >= 0)
		rc = 1;
	if (rc == 1)
		*out = r;
	else
		group_runs__free(r);
	return rc;
}

int64_t group_runs__left_out(const struct group_runs *r)
{
	return r->left_out;
}

int group_runs__walk(const struct group_runs *r, group_runs_fn fn, void *ctx)
{
	struct sum_run *runs = malloc((r->npairs ? r->npairs : 1) * sizeof *runs);
	size_t i = 0;
	int rc = 0;

	if (!runs)
		return PROF_E_NOMEM;
	while (rc >= 0 && i < r->npairs) {
		uint32_t group = r->sorted[i].group;
		const struct group *g = r->order[group - 1];
		size_t n = 0;

		for (; i < r->npairs && r->sorted[i].group == group; i++)
			runs[n++] = (struct sum_run){ r->sorted[i].v, r->sorted[i].count };
		rc = fn(ctx, g->l1.bytes, g->l2.bytes, g->k_null, g->k, runs, n);
	}
	free(runs);
	return rc < 0 ? rc : 0;
}

void group_runs__free(struct group_runs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngroups; i++) {
		free(r->groups[i].l1.bytes);
		free(r->groups[i].l2.bytes);
	}
	free(r->groups);
	free(r->group_slots);
	free(r->pairs);
	free(r->sorted);
	free(r->order);
	free(r);
}
