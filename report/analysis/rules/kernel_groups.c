/* kernel_groups.c - the window's kernels by name and by launch shape, read
 * once for the rules that ask (kernel_groups.h).
 *
 * One pass in the table's order counts each group in a hash table, where
 * SQL's GROUP BY sorted every kernel by its group; the groups, few, are
 * then put in the statements' order by SQLite itself. Each sum is SQL's:
 * total()'s double, added in the same (the table's) order, cast as CAST
 * casts it. A column of another type than an integer (a foreign file) is
 * grouped by the statements themselves. */
#include "kernel_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/grow.h"
#include "analysis/core/id_groups.h"
#include "analysis/core/kernel_name_sql.h"
#include "analysis/diagnose/ahead.h"
#include "analysis/ranks/nccl.h"
#include "model/sql.h"
#include "model/string_cache.h"
#include "model/sums.h"
#include "prof/error.h"
#include "prof/tables.h"

/* A group's key: the name's id, then (shapes) the threads a block, the
 * registers a thread and the shared memory a block; bit i of nulls set
 * where key i is NULL. */
#define NKEYS 4

struct key {
	int64_t v[NKEYS];
	unsigned nulls;
};

struct group {
	struct key key;
	int64_t count;
	double total; /* SQL's total() */
	int64_t config;
	bool has_config;
};

struct groups {
	struct group *v;
	int n, cap;
	int *slots; /* index + 1 of a group; 0: free */
	size_t nslots;
	int nkeys;
};

static uint64_t key_hash(const struct key *k, int nkeys)
{
	uint64_t h = k->nulls * 0x9E3779B97F4A7C15ull;

	for (int i = 0; i < nkeys; i++)
		h = (h ^ (uint64_t)k->v[i]) * 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 31);
}

static bool key_same(const struct key *a, const struct key *b, int nkeys)
{
	if (a->nulls != b->nulls)
		return false;
	for (int i = 0; i < nkeys; i++)
		if (!(a->nulls & 1u << i) && a->v[i] != b->v[i])
			return false;
	return true;
}

static int slot_of(const struct groups *g, const struct key *k)
{
	size_t at = key_hash(k, g->nkeys) & (g->nslots - 1);

	while (g->slots[at] && !key_same(&g->v[g->slots[at] - 1].key, k, g->nkeys))
		at = (at + 1) & (g->nslots - 1);
	return (int)at;
}

/* The group of key, added with nothing counted where it is new; NULL
 * where memory runs out. */
static struct group *group_of(struct groups *g, const struct key *k)
{
	int at;

	if ((size_t)(g->n + 1) * 2 > g->nslots) {
		size_t n = g->nslots ? g->nslots * 2 : 64;
		int *slots = calloc(n, sizeof *slots);

		if (!slots)
			return NULL;
		free(g->slots);
		g->slots = slots;
		g->nslots = n;
		for (int i = 0; i < g->n; i++)
			g->slots[slot_of(g, &g->v[i].key)] = i + 1;
	}
	at = slot_of(g, k);
	if (!g->slots[at]) {
		if (array__grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v))
			return NULL;
		g->v[g->n] = (struct group){ .key = *k };
		g->slots[at] = ++g->n;
	}
	return &g->v[g->slots[at] - 1];
}

static void groups__exit(struct groups *g)
{
	free(g->v);
	free(g->slots);
}

/* The statements' order: the longest total first. How SQLite's GROUP BY
 * and ORDER BY leave equal totals is theirs alone (neither the keys' order
 * nor its reverse, by the shape), so the groups, one row each, go through
 * the same two clauses: each as [index, total, keys...] in json_each's
 * rows, grouped by the same keys, sorted by the same total. The groups
 * are few. */
static int sort_groups(struct prof_store *store, struct groups *g, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	struct group *sorted;
	char *json, *at, sql[512];
	int rc, n = 0;

	if (g->n < 2)
		return 0;
	json = malloc((size_t)g->n * (2 + NKEYS) * 22 + 3);
	sorted = malloc((size_t)g->n * sizeof *sorted);
	if (!json || !sorted) {
		free(json);
		free(sorted);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	at = json;
	*at++ = '[';
	for (int i = 0; i < g->n; i++) {
		at += sprintf(at, "%s[%d,%lld", i ? "," : "", i, (long long)id_groups__sql_integer(g->v[i].total));
		for (int k = 0; k < g->nkeys; k++)
			at += g->v[i].key.nulls & 1u << k ? sprintf(at, ",null")
							  : sprintf(at, ",%lld", (long long)g->v[i].key.v[k]);
		*at++ = ']';
	}
	strcpy(at, "]");
	/* key k is the row's element 2 + k */
	at = sql + sprintf(sql, "SELECT min(json_extract(value, '$[0]')), max(json_extract(value, '$[1]'))"
			   " FROM json_each(?1) GROUP BY ");
	for (int k = 0; k < g->nkeys; k++)
		at += sprintf(at, "%sjson_extract(value, '$[%d]')", k ? ", " : "", 2 + k);
	strcpy(at, " ORDER BY 2 DESC");
	rc = prof_cursor__open(store, sql, &c, err);
	if (rc == 0 && prof_cursor__bind_text(c, 1, json) != 0)
		rc = prof_error__set(err, PROF_E_SQL, "cannot bind the groups' totals");
	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		int64_t i = prof_cursor__int64(c, 0);

		if (i < 0 || i >= g->n || n >= g->n) {
			rc = prof_error__set(err, PROF_E_SQL, "the groups' sort gave a row of none");
			break;
		}
		sorted[n++] = g->v[i];
		rc = 0;
	}
	prof_cursor__close(c);
	if (rc == 0 && n != g->n)
		rc = prof_error__set(err, PROF_E_SQL, "the groups' sort lost a row");
	if (rc == 0)
		memcpy(g->v, sorted, (size_t)n * sizeof *sorted);
	free(json);
	free(sorted);
	return rc < 0 ? rc : 0;
}

/* Column col of c into key slot i; false where it is neither an integer
 * nor NULL. */
static bool key_take(struct prof_cursor *c, int col, struct key *k, int i)
{
	enum prof_value_kind kind = prof_cursor__kind(c, col);

	if (kind == PROF_VALUE_NULL) {
		k->nulls |= 1u << i;
		k->v[i] = 0;
		return true;
	}
	k->v[i] = prof_cursor__int64(c, col);
	return kind == PROF_VALUE_INT;
}

enum { COUNTED = 0, ODD_TYPES = 1 };

/* Both groupings counted in one pass; ODD_TYPES where a column is of
 * another type, left to the statements. */
static int count_pass(struct diag_context *ctx, struct groups *names, struct groups *shapes, struct prof_error *err)
{
	const char *sql =
		"SELECT " PROF_SQL_KERNEL_NAME_ID("k.") ", k.blockX * k.blockY * k.blockZ, k.registersPerThread,"
		" k.staticSharedMemory + k.dynamicSharedMemory, k.sharedMemoryExecuted, k.end - k.start,"
		" (" NCCL_KERNEL_SQL("k") ") IS 1"
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.");
	struct prof_cursor *c;
	int rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);

	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		struct key k = { 0 }, by_name = { 0 };
		enum prof_value_kind config_kind = prof_cursor__kind(c, 4);
		struct group *n, *s;
		int64_t dur = prof_cursor__int64(c, 5);
		bool typed = true;

		for (int i = 0; i < NKEYS; i++)
			typed &= key_take(c, i, &k, i);
		if (!typed || prof_cursor__kind(c, 5) != PROF_VALUE_INT ||
		    (config_kind != PROF_VALUE_INT && config_kind != PROF_VALUE_NULL)) {
			rc = ODD_TYPES;
			break;
		}
		by_name.v[0] = k.v[0];
		by_name.nulls = k.nulls & 1u;
		n = group_of(names, &by_name);
		if (!n)
			goto nomem;
		n->count++;
		n->total += (double)dur;
		if (prof_cursor__int64(c, 6))
			continue;
		s = group_of(shapes, &k);
		if (!s)
			goto nomem;
		s->count++;
		s->total += (double)dur;
		if (config_kind == PROF_VALUE_INT &&
		    (!s->has_config || prof_cursor__int64(c, 4) > s->config)) {
			s->config = prof_cursor__int64(c, 4);
			s->has_config = true;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : rc == ODD_TYPES ? ODD_TYPES : COUNTED;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* A group's name as DIAG_KERNEL_NAME_SQL gives it, malloc'd. */
static int name_of(struct string_cache *names, const struct key *k, char **out, struct prof_error *err)
{
	const char *value = NULL;
	int *tag;
	int rc = k->nulls & 1u ? 0 : string_cache__of_id(names, k->v[0], &value, &tag, err);

	if (rc < 0)
		return rc;
	*out = strdup(value ? value : "?");
	return *out ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* The counted groups, in the statements' order, into g. */
static int keep_counted(struct diag_context *ctx, struct groups *names, struct groups *shapes,
			struct kernel_groups *g, struct prof_error *err)
{
	struct string_cache *text = NULL;
	int rc = sort_groups(ctx->store, names, err);

	if (rc == 0)
		rc = sort_groups(ctx->store, shapes, err);
	if (rc == 0)
		rc = string_cache__new(ctx->store, &text, err);
	if (rc == 0 && ((names->n && !(g->v = calloc((size_t)names->n, sizeof *g->v))) ||
			(shapes->n && !(g->shapes = calloc((size_t)shapes->n, sizeof *g->shapes)))))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < names->n; i++, g->n++) {
		g->v[i].count = names->v[i].count;
		g->v[i].time_ns = id_groups__sql_integer(names->v[i].total);
		rc = name_of(text, &names->v[i].key, &g->v[i].name, err);
	}
	for (int i = 0; rc == 0 && i < shapes->n; i++, g->nshapes++) {
		const struct group *s = &shapes->v[i];

		g->shapes[i] = (struct kernel_shape){
			.threads_per_block = s->key.v[1], .registers_per_thread = s->key.v[2],
			.shared_bytes = s->key.v[3], .shared_config_bytes = s->has_config ? s->config : 0,
			.count = s->count, .time_ns = id_groups__sql_integer(s->total),
		};
		rc = name_of(text, &s->key, &g->shapes[i].name, err);
	}
	string_cache__free(text);
	return rc;
}

/* ---- a foreign file's columns: the statements themselves ---------------- */

/* A row of KERNEL_GROUPS_NAMES_SQL (shapes false) or of
 * KERNEL_GROUPS_SHAPES_SQL appended to g. */
static int keep_row(struct prof_cursor *c, bool shapes, struct kernel_groups *g, int *cap)
{
	const char *name = prof_cursor__text(c, 0);

	if (!shapes) {
		struct kernel_group *e;

		if (array__grow((void **)&g->v, cap, g->n + 1, sizeof *g->v))
			return PROF_E_NOMEM;
		e = &g->v[g->n];
		*e = (struct kernel_group){ .name = name ? strdup(name) : NULL, .count = prof_cursor__int64(c, 1),
					    .time_ns = prof_cursor__int64(c, 2) };
		if (name && !e->name)
			return PROF_E_NOMEM;
		g->n++;
		return 0;
	}
	if (array__grow((void **)&g->shapes, cap, g->nshapes + 1, sizeof *g->shapes))
		return PROF_E_NOMEM;
	g->shapes[g->nshapes] = (struct kernel_shape){
		.name = strdup(name ? name : "?"),
		.threads_per_block = prof_cursor__int64(c, 1), .registers_per_thread = prof_cursor__int64(c, 2),
		.shared_bytes = prof_cursor__int64(c, 3), .shared_config_bytes = prof_cursor__int64(c, 4),
		.count = prof_cursor__int64(c, 5), .time_ns = prof_cursor__int64(c, 6),
	};
	if (!g->shapes[g->nshapes].name)
		return PROF_E_NOMEM;
	g->nshapes++;
	return 0;
}

static int read_statement(struct diag_context *ctx, const char *sql, bool shapes, struct kernel_groups *g,
			  struct prof_error *err)
{
	struct prof_cursor *c;
	int cap = 0, rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);

	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1)
		if (keep_row(c, shapes, g, &cap)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* ---- the run's groups ---------------------------------------------------- */

void kernel_groups__free(struct kernel_groups *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n; i++)
		free(g->v[i].name);
	for (int i = 0; i < g->nshapes; i++)
		free(g->shapes[i].name);
	free(g->v);
	free(g->shapes);
	free(g);
}

static int read_groups(struct diag_context *ctx, struct kernel_groups *g, struct prof_error *err)
{
	struct groups names = { .nkeys = 1 }, shapes = { .nkeys = NKEYS };
	int rc = ctx->has_kernel ? count_pass(ctx, &names, &shapes, err) : COUNTED;

	if (rc == COUNTED)
		rc = keep_counted(ctx, &names, &shapes, g, err);
	else if (rc == ODD_TYPES) {
		rc = read_statement(ctx, KERNEL_GROUPS_NAMES_SQL, false, g, err);
		if (rc == 0)
			rc = read_statement(ctx, KERNEL_GROUPS_SHAPES_SQL, true, g, err);
	}
	groups__exit(&names);
	groups__exit(&shapes);
	return rc;
}

int kernel_groups__make(struct diag_context *ctx, void **out, struct prof_error *err)
{
	struct kernel_groups *g = calloc(1, sizeof *g);
	int rc;

	*out = NULL;
	if (!g)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	g->from = ctx->w->start_ns;
	g->to = ctx->w->end_ns;
	rc = read_groups(ctx, g, err);
	if (rc) {
		kernel_groups__free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void kernel_groups__free_made(void *groups)
{
	kernel_groups__free(groups);
}

int kernel_groups__of(struct diag_context *ctx, const struct kernel_groups **out, struct prof_error *err)
{
	struct kernel_groups *g = ctx->kernel_groups;
	void *made;
	int rc;

	*out = NULL;
	if (g && g->from == ctx->w->start_ns && g->to == ctx->w->end_ns) {
		*out = g;
		return 0;
	}
	rc = diag_ahead__take_or_make(ctx, DIAG_AHEAD_KERNEL_GROUPS, kernel_groups__make, &made, err);
	if (rc)
		return rc;
	g = made;
	kernel_groups__free(ctx->kernel_groups);
	ctx->kernel_groups = g;
	*out = g;
	return 0;
}
