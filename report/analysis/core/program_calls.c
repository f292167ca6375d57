/* program_calls.c - what the CUDA calls' names say of the program
 * (prog_model__take_call_names): graph launches, managed allocation,
 * prefetch; and a thread whose only calls pin host memory (cudaHostAlloc,
 * cudaHostRegister) while others launch: a DataLoader's pin_memory
 * thread. A thread's names are matched once each, not once a call: the
 * LIKEs of every call cost 2.2 s of CPU at 1M calls. The distinct names of
 * each thread come from the calls' pairs (sum_call_pairs__load), which the
 * threads' labels read as well: a DISTINCT over the calls sorted every
 * one (8.2 s at 22M calls, against a walk of 1.2 s a table), and is left
 * for what the pairs cannot stand for: a table that holds a call twice,
 * values of another type than integer, and the diagnosis's own table of a
 * rank's calls. */
#include "program.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"
#include "prof/tables.h"
#include "model/call_pairs.h"
#include "model/memo.h"
#include "model/sql.h"
#include "model/sums.h"
#include "analysis/core/scope.h"

/* The names' prefixes, as SQL's LIKE 'prefix%' matches them (ASCII
 * letters in either case). */
static const char *const graph_calls[] = { "cudaGraphLaunch", "cuGraphLaunch", NULL };
static const char *const managed_calls[] = { "cudaMallocManaged", "cuMemAllocManaged", NULL };
static const char *const prefetch_calls[] = { "cudaMemPrefetchAsync", "cuMemPrefetchAsync", NULL };
static const char *const pinning_calls[] = { "cudaHostAlloc", "cudaMallocHost", "cuMemHostAlloc",
					     "cudaHostRegister", NULL };
/* what a pinning thread calls besides */
static const char *const setup_calls[] = { "cudaGetDevice", "cudaSetDevice", "cudaGetLastError",
					   "cudaPeekAtLastError", NULL };

enum { CALL_GRAPH, CALL_MANAGED, CALL_PREFETCH, CALL_PINNING, CALL_SETUP, CALL_NKINDS };
/* a pinning thread's kind of string: pinning or setup */
#define PINNING_OR_SETUP (1u << CALL_NKINDS)

static const char *const *const kinds[CALL_NKINDS] = {
	[CALL_GRAPH] = graph_calls,
	[CALL_MANAGED] = managed_calls,
	[CALL_PREFETCH] = prefetch_calls,
	[CALL_PINNING] = pinning_calls,
	[CALL_SETUP] = setup_calls,
};

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* ---- SQL's way ------------------------------------------------------------- */

/* "(value LIKE 'a%' OR value LIKE 'b%' ...)" of the kinds set in mask,
 * malloc'd. */
static char *like_any(unsigned mask)
{
	char *sql = prof_strfmt("(0");

	for (int k = 0; sql && k < CALL_NKINDS; k++)
		for (const char *const *p = kinds[k]; sql && (mask >> k & 1) && *p; p++) {
			char *more = prof_strfmt("%s OR value LIKE '%s%%'", sql, *p);

			free(sql);
			sql = more;
		}
	if (sql) {
		char *closed = prof_strfmt("%s)", sql);

		free(sql);
		sql = closed;
	}
	return sql;
}

/* The flags from calls (a table or a subquery: every call once, less
 * those of a bad span) by SQL: its distinct names of each thread, matched
 * once (kept once: SQLite read the calls again for the second use, 0.72
 * against 0.49 s at 2.2M calls). */
static int read_calls_sql(struct prof_store *s, const char *calls, struct prog_model *m, struct prof_error *err)
{
	char *graph = like_any(1u << CALL_GRAPH), *managed = like_any(1u << CALL_MANAGED);
	char *prefetch = like_any(1u << CALL_PREFETCH), *pinning = like_any(1u << CALL_PINNING);
	char *pinning_or_setup = like_any(1u << CALL_PINNING | 1u << CALL_SETUP), *sql = NULL;
	struct prof_cursor *c = NULL;
	int64_t used[4] = { 0 };
	int rc;

	if (graph && managed && prefetch && pinning && pinning_or_setup)
		sql = prof_strfmt("WITH names AS MATERIALIZED (SELECT a.globalTid AS tid, n.value AS value"
				  " FROM (SELECT DISTINCT globalTid, nameId FROM %s) a"
				  " JOIN " PROF_T_STRINGS " n ON n.id = a.nameId)"
				  " SELECT max(%s), max(%s), max(%s),"
				  " (SELECT count(*) FROM (SELECT tid FROM names GROUP BY tid"
				  "  HAVING max(%s) AND min(%s)))"
				  " FROM names",
				  calls, graph, managed, prefetch, pinning, pinning_or_setup);
	free(graph);
	free(managed);
	free(prefetch);
	free(pinning);
	free(pinning_or_setup);
	rc = sql ? prof_cursor__open(s, sql, &c, err) : nomem(err);
	free(sql);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	for (int i = 0; rc == 1 && i < 4; i++)
		used[i] = prof_cursor__is_null(c, i) ? 0 : prof_cursor__int64(c, i);
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (used[0] > 0)
		m->framework[PROG_CUDA_GRAPHS] = true;
	m->uses[USE_MANAGED] = used[1] > 0;
	m->uses[USE_PREFETCH] = used[2] > 0;
	m->uses[USE_DATALOADER] = used[3] > 0;
	return 0;
}

/* ---- the pairs' way -------------------------------------------------------- */

/* Whether value begins with prefix, as LIKE 'prefix%' says: ASCII letters
 * match in either case. */
static bool like_prefix(const char *value, const char *prefix)
{
	for (; *prefix; prefix++, value++) {
		int a = (unsigned char)*value, b = (unsigned char)*prefix;

		if (!a)
			return false;
		a = a >= 'A' && a <= 'Z' ? a + 32 : a;
		b = b >= 'A' && b <= 'Z' ? b + 32 : b;
		if (a != b)
			return false;
	}
	return true;
}

/* The kinds value is of, a bit each, and PINNING_OR_SETUP. */
static unsigned kinds_of(const char *value)
{
	unsigned mask = 0;

	for (int k = 0; k < CALL_NKINDS; k++)
		for (const char *const *p = kinds[k]; *p; p++)
			if (like_prefix(value, *p)) {
				mask |= 1u << k;
				break;
			}
	return mask & (1u << CALL_PINNING | 1u << CALL_SETUP) ? mask | PINNING_OR_SETUP : mask;
}

/* What a pair's name's strings say: any the kinds of some string; all
 * those every string is of; named: some string is not NULL (a NULL one
 * matches nothing, and SQL's max and min pass it by). */
struct pair_kinds {
	unsigned any, all;
	bool named;
};

static void note_kinds(void *arg, size_t k, const char *value)
{
	struct pair_kinds *kv = arg;
	unsigned mask = kinds_of(value);

	kv[k].any |= mask;
	kv[k].all &= mask;
	kv[k].named = true;
}

/* The flags from the pairs of s's calls: 1; 0 where the pairs cannot
 * stand for SQL's DISTINCT; < 0 an error. */
static int read_calls_paired(struct prof_store *s, struct prog_model *m, struct prof_error *err)
{
	static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	const char *tables[2] = { NULL, NULL };
	struct call_pairs *p = NULL;
	struct pair_kinds *kv = NULL;
	unsigned *thread_any = NULL, *thread_all = NULL;
	unsigned any = 0;
	size_t n = 0, nthreads;
	int64_t dataloader = 0;
	bool once;
	/* a call held twice is once in SQL's calls (sum_call_once_sql) */
	int rc = sum_api_calls__once(s, &once, err);

	if (rc < 0 || !once)
		return rc;
	for (int i = 0; i < 2; i++)
		tables[i] = prof_store__has_table(s, api_tables[i]) ? api_tables[i] : NULL;
	rc = sum_call_pairs__load(s, tables, &p, err);
	if (rc != 1)
		return rc;
	/* a thread's kinds at [its place among p->tids], the calls of no thread last */
	nthreads = p->ntids + 1;
	kv = malloc(sizeof *kv * (p->n ? p->n : 1));
	thread_any = calloc(nthreads, sizeof *thread_any);
	thread_all = malloc(sizeof *thread_all * nthreads);
	for (size_t k = 0; kv && k < p->n; k++)
		kv[k] = (struct pair_kinds){ 0, ~0u, false };
	/* the strings of the pairs of a real span (SQL's JOIN: a name id of no
	 * string is no name) */
	rc = kv && thread_any && thread_all ? sum_call_pairs__each_string(s, p, true, note_kinds, kv, &n, err)
					    : nomem(err);
	for (size_t t = 0; rc == 0 && t < nthreads; t++)
		thread_all[t] = ~0u;
	for (size_t i = 0, k = 0; rc == 0 && i < p->cap; i++) {
		const struct call_pair *q = &p->v[i];
		size_t t;

		if (!q->used || !q->good)
			continue;
		if (kv[k].named) {
			t = q->tid_null ? p->ntids
					: sum_sorted__count_before(p->tids, p->ntids, sizeof *p->tids, 0, q->tid, false);
			any |= kv[k].any;
			thread_any[t] |= kv[k].any;
			thread_all[t] &= kv[k].all;
		}
		k++;
	}
	for (size_t t = 0; rc == 0 && t < nthreads; t++)
		dataloader += (thread_any[t] >> CALL_PINNING & 1) && (thread_all[t] & PINNING_OR_SETUP);
	if (rc == 0) {
		if (any >> CALL_GRAPH & 1)
			m->framework[PROG_CUDA_GRAPHS] = true;
		m->uses[USE_MANAGED] = any >> CALL_MANAGED & 1;
		m->uses[USE_PREFETCH] = any >> CALL_PREFETCH & 1;
		m->uses[USE_DATALOADER] = dataloader > 0;
	}
	free(kv);
	free(thread_any);
	free(thread_all);
	sum_call_pairs__delete(p);
	return rc < 0 ? rc : 1;
}

/* ---- the model ------------------------------------------------------------- */

/* What the calls' names say, a model of its own (a struct prog_model:
 * sum_shared__value's maker); none where the capture has no calls. */
static int make_call_names(struct prof_store *s, void *out, struct prof_error *err)
{
	struct prog_model *m = out;
	char *calls, *good;
	int rc;

	memset(m, 0, sizeof *m);
	rc = read_calls_paired(s, m, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	calls = sum_api_calls(s, &rc, err);
	if (!calls)
		return rc;
	good = prof_strfmt("(SELECT * FROM (%s) WHERE NOT " SUM_BAD_SPAN("") ")", calls);
	rc = good ? read_calls_sql(s, good, m, err) : nomem(err);
	free(good);
	free(calls);
	return rc;
}

/* make_call_names from the diagnosis's table of the same calls on s's own
 * connection (diag_scope__api_view): the same answer from fewer columns,
 * in a third of the time a rank of ddp2_even. */
static int make_call_names_from_table(struct prof_store *s, void *out, struct prof_error *err)
{
	memset(out, 0, sizeof(struct prog_model));
	return read_calls_sql(s, DIAG_API_CALLS, out, err);
}

/* Shared by the file's connections where they show every row (the
 * diagnosis's thread ahead takes it before the window is known); read for
 * the rows shown under --rank or a rank's scope. */
static const char call_names_key;

int prog_model__take_call_names(struct prof_store *s, bool table_here, struct prog_model *m,
				struct prof_error *err)
{
	return sum_shared__value(s, &call_names_key, m, sizeof *m,
				 table_here ? make_call_names_from_table : make_call_names, err);
}
