/* launch_ids.c - the correlation ids of a capture's CUDA calls as bit
 * sets (id_bits.h), one a process and one of every call. The SQL it
 * stands in for (a DISTINCT (process, id) table of every call, joined to
 * each GPU row) built an index of every call: 3.3 s of CPU at 1M
 * kernels and 2.2M calls, where reading the ids costs about 0.4 s. Ids
 * spread thinner than the blocks allow leave the question to SQL. */
#include "model/launch_ids.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/id_bits.h"
#include "model/memo.h"
#include "model/sql.h"
#include "prof/tables.h"

#define MAX_BLOCKS_DEFAULT ID_BITS_MAX_BLOCKS /* 32 MiB of bits, both sets */

static size_t max_blocks = MAX_BLOCKS_DEFAULT;

void launch_ids__set_max_blocks(size_t blocks)
{
	max_blocks = blocks;
}

struct launch_ids {
	struct id_bits every;   /* every call's id, under space 0 */
	struct id_bits by_pid;  /* a call's id under its process's global pid */
	struct id_bits runtime; /* the same of the runtime's calls alone */
};

/* 1: added; 0: a block more than allowed; < 0: out of memory. The limit
 * is on the three sets together. */
static int add(struct launch_ids *ids, struct id_bits *set, int64_t space, int64_t corr)
{
	set->max_blocks = max_blocks + set->n - (ids->every.n + ids->by_pid.n + ids->runtime.n);
	return id_bits__set(set, space, corr);
}

/* One call's ids (corr not NULL): 1 added, 0 a block more than allowed,
 * 2 an id or thread of another type (SQL compares those its own way: not
 * here), < 0 out of memory. */
static int add_call(struct launch_ids *ids, bool runtime, struct prof_cursor *c, int tid_col, int corr_col)
{
	int64_t corr = prof_cursor__int64(c, corr_col);
	bool tid_null = prof_cursor__is_null(c, tid_col);
	int rc;

	if (prof_cursor__kind(c, corr_col) != PROF_VALUE_INT ||
	    !(prof_cursor__kind(c, tid_col) == PROF_VALUE_INT || tid_null))
		return 2;
	rc = add(ids, &ids->every, 0, corr);
	if (rc > 0 && !tid_null)
		rc = add(ids, &ids->by_pid, sum_global_pid_of_tid(prof_cursor__int64(c, tid_col)), corr);
	if (rc > 0 && runtime && !tid_null)
		rc = add(ids, &ids->runtime, sum_global_pid_of_tid(prof_cursor__int64(c, tid_col)), corr);
	return rc;
}

/* One API table's ids: 1 read, 0 too many blocks, < 0 an error. */
static int load_table(struct prof_store *s, struct launch_ids *ids, const char *table,
		      struct prof_error *err)
{
	char sql[160];
	struct prof_cursor *c = NULL;
	bool runtime = strcmp(table, PROF_T_RUNTIME) == 0;
	int rc;

	snprintf(sql, sizeof sql, "SELECT globalTid, correlationId FROM %s WHERE correlationId IS NOT NULL",
		 table);
	rc = prof_cursor__open(s, sql, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0 && (rc = add_call(ids, runtime, c, 0, 1)) == 1)
		;
	prof_cursor__close(c);
	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, rc, "out of memory");
	if (rc == 2 || (rc == 0 && ids->every.n + ids->by_pid.n + ids->runtime.n >= max_blocks))
		return 0;
	return rc < 0 ? rc : 1;
}

/* Each table's ids as the calls' census walked them, under its name:
 * NULL where the walk could not keep them. */
static const char table_ids_key;

static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };

int launch_ids__of_census(struct prof_store *s, struct launch_ids **out)
{
	const void *parts[2] = { NULL, NULL };
	struct launch_ids *ids;
	int rc = 1;

	*out = NULL;
	if (prof_store__restricted(s))
		return 0;
	for (size_t t = 0; t < 2; t++)
		if (prof_store__has_table(s, api_tables[t]) && !sum_shared__given(s, &table_ids_key, api_tables[t], &parts[t]))
			return 0;
	ids = calloc(1, sizeof *ids);
	if (!ids)
		return PROF_E_NOMEM;
	for (size_t t = 0; rc > 0 && t < 2; t++) {
		const struct launch_ids *part = parts[t];

		if (!part)
			continue;
		ids->every.max_blocks = ids->by_pid.max_blocks = ids->runtime.max_blocks = max_blocks;
		if ((rc = id_bits__union(&ids->every, &part->every)) > 0 &&
		    (rc = id_bits__union(&ids->by_pid, &part->by_pid)) > 0)
			rc = id_bits__union(&ids->runtime, &part->runtime);
	}
	/* the limit as the reads keep it: on the three sets together */
	if (rc > 0 && ids->every.n + ids->by_pid.n + ids->runtime.n >= max_blocks)
		rc = 0;
	if (rc > 0)
		*out = ids;
	else
		launch_ids__free(ids);
	return rc;
}

int launch_ids__load(struct prof_store *s, struct launch_ids **out, struct prof_error *err)
{
	struct launch_ids *ids;
	int rc = launch_ids__of_census(s, out);

	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, rc, "out of memory");
	if (rc > 0)
		return 1;
	ids = calloc(1, sizeof *ids);
	if (!ids)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = 1;
	for (size_t t = 0; rc > 0 && t < 2; t++)
		if (prof_store__has_table(s, api_tables[t]))
			rc = load_table(s, ids, api_tables[t], err);
	if (rc > 0)
		*out = ids;
	else
		launch_ids__free(ids);
	return rc;
}

void launch_ids_walk__begin(struct launch_ids_walk *w, const char *table, bool wanted)
{
	w->ids = wanted ? calloc(1, sizeof *w->ids) : NULL;
	w->runtime = strcmp(table, PROF_T_RUNTIME) == 0;
}

int launch_ids_walk__add(struct launch_ids_walk *w, struct prof_cursor *c, int tid_col, int corr_col)
{
	int rc;

	if (!w->ids || prof_cursor__is_null(c, corr_col))
		return 0;
	rc = add_call(w->ids, w->runtime, c, tid_col, corr_col);
	/* too many blocks, or an id of another type: the reader asks SQL */
	if (rc != 1)
		launch_ids_walk__exit(w);
	return rc < 0 ? PROF_E_NOMEM : 0;
}

static void ids_free(void *ids)
{
	launch_ids__free(ids);
}

void launch_ids_walk__give(struct prof_store *s, const char *table, struct launch_ids_walk *w)
{
	if (w->ids && sum_shared__offer(s, &table_ids_key, table, w->ids, ids_free))
		w->ids = NULL;
	launch_ids_walk__exit(w);
}

void launch_ids_walk__exit(struct launch_ids_walk *w)
{
	launch_ids__free(w->ids);
	w->ids = NULL;
}

bool launch_ids__launched(const struct launch_ids *ids, bool pid_known, int64_t global_pid,
			  bool corr_known, int64_t corr)
{
	if (!corr_known)
		return false;
	if (!pid_known || global_pid == 0)
		return id_bits__has(&ids->every, 0, corr);
	return id_bits__has(&ids->by_pid, global_pid, corr);
}

bool launch_ids__runtime_has(const struct launch_ids *ids, bool tid_known, int64_t global_tid, int64_t corr)
{
	/* a driver call of no thread matches no runtime call, and counts only
	 * where the runtime's calls have no threads either */
	if (!tid_known)
		return ids->runtime.n > 0;
	return id_bits__has(&ids->runtime, sum_global_pid_of_tid(global_tid), corr);
}

void launch_ids__free(struct launch_ids *ids)
{
	if (!ids)
		return;
	id_bits__exit(&ids->every);
	id_bits__exit(&ids->by_pid);
	id_bits__exit(&ids->runtime);
	free(ids);
}
