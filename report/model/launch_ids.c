/* launch_ids.c - the correlation ids of a capture's CUDA calls as bit
 * sets, in blocks of 65,536 ids a process. CUPTI numbers a process's calls
 * from 1 upwards, so a run of 22M calls fills about 340 blocks (2.7 MiB).
 * The SQL it stands in for (a DISTINCT (process, id) table of every call,
 * joined to each GPU row) built an index of every call: 3.3 s of CPU at 1M
 * kernels and 2.2M calls, where reading the ids costs about 0.4 s. Ids
 * spread thinner than the blocks allow leave the question to SQL. */
#include "model/launch_ids.h"
#include "model/sums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"

#define BLOCK_BITS 16
#define BLOCK_WORDS ((1u << BLOCK_BITS) / 64)
#define MAX_BLOCKS_DEFAULT 4096 /* 32 MiB of bits */

static size_t max_blocks = MAX_BLOCKS_DEFAULT;

void launch_ids__set_max_blocks(size_t blocks)
{
	max_blocks = blocks;
}

struct block {
	int64_t pid, hi; /* the process (any: every call's) and corr >> BLOCK_BITS */
	bool any;
	uint64_t bits[BLOCK_WORDS];
};

struct launch_ids {
	struct block **blocks;
	size_t n, cap;
	uint32_t *slots; /* index + 1 of a block; 0: free */
	size_t nslots;
};

static uint64_t key_hash(bool any, int64_t pid, int64_t hi)
{
	uint64_t x = (uint64_t)pid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)hi ^ (any ? 0x5bd1e995ULL : 0);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

static size_t slot_of(const struct launch_ids *ids, bool any, int64_t pid, int64_t hi)
{
	size_t at = key_hash(any, pid, hi) & (ids->nslots - 1);

	for (; ids->slots[at]; at = (at + 1) & (ids->nslots - 1)) {
		const struct block *b = ids->blocks[ids->slots[at] - 1];

		if (b->any == any && b->hi == hi && (any || b->pid == pid))
			break;
	}
	return at;
}

static int grow_slots(struct launch_ids *ids)
{
	size_t n = ids->nslots ? ids->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof *slots), *old = ids->slots;

	if (!slots)
		return PROF_E_NOMEM;
	ids->slots = slots;
	ids->nslots = n;
	for (size_t i = 0; i < ids->n; i++) {
		const struct block *b = ids->blocks[i];

		ids->slots[slot_of(ids, b->any, b->pid, b->hi)] = (uint32_t)(i + 1);
	}
	free(old);
	return 0;
}

/* 1: added; 0: a block more than allowed; < 0: out of memory. */
static int add(struct launch_ids *ids, bool any, int64_t pid, int64_t corr)
{
	int64_t hi = corr >> BLOCK_BITS;
	uint64_t low = (uint64_t)corr & ((1u << BLOCK_BITS) - 1);
	struct block *b;
	size_t at;

	if ((ids->n + 1) * 2 > ids->nslots && grow_slots(ids) < 0)
		return PROF_E_NOMEM;
	at = slot_of(ids, any, pid, hi);
	if (ids->slots[at]) {
		b = ids->blocks[ids->slots[at] - 1];
	} else {
		if (ids->n >= max_blocks)
			return 0;
		if (sum_array__grow(&ids->blocks, &ids->cap, ids->n, sizeof *ids->blocks) < 0)
			return PROF_E_NOMEM;
		b = calloc(1, sizeof *b);
		if (!b)
			return PROF_E_NOMEM;
		b->any = any;
		b->pid = any ? 0 : pid;
		b->hi = hi;
		ids->blocks[ids->n] = b;
		ids->slots[at] = (uint32_t)++ids->n;
	}
	b->bits[low / 64] |= 1ULL << (low % 64);
	return 1;
}

static bool has(const struct launch_ids *ids, bool any, int64_t pid, int64_t corr)
{
	uint64_t low = (uint64_t)corr & ((1u << BLOCK_BITS) - 1);
	size_t at;

	if (!ids->nslots)
		return false;
	at = slot_of(ids, any, pid, corr >> BLOCK_BITS);
	return ids->slots[at] &&
	       (ids->blocks[ids->slots[at] - 1]->bits[low / 64] >> (low % 64) & 1);
}

/* PROF_SQL_GLOBAL_PID_OF_TID as SQLite computes it. */
static int64_t global_pid_of(int64_t tid)
{
	return (int64_t)((uint64_t)(tid >> 24) << 24);
}

/* One API table's ids: 1 read, 0 too many blocks, < 0 an error. */
static int load_table(struct prof_store *s, struct launch_ids *ids, const char *table,
		      struct prof_error *err)
{
	char sql[160];
	struct prof_cursor *c = NULL;
	int rc;

	snprintf(sql, sizeof sql, "SELECT globalTid, correlationId FROM %s WHERE correlationId IS NOT NULL",
		 table);
	rc = prof_cursor__open(s, sql, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t corr = prof_cursor__int64(c, 1);

		/* ids of another type compare as SQL compares them: not here */
		if (prof_cursor__kind(c, 1) != PROF_VALUE_INT ||
		    !(prof_cursor__kind(c, 0) == PROF_VALUE_INT || prof_cursor__is_null(c, 0))) {
			rc = 2;
			break;
		}
		rc = add(ids, true, 0, corr);
		if (rc > 0 && !prof_cursor__is_null(c, 0))
			rc = add(ids, false, global_pid_of(prof_cursor__int64(c, 0)), corr);
		if (rc <= 0)
			break;
	}
	prof_cursor__close(c);
	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, rc, "out of memory");
	if (rc == 2 || (rc == 0 && ids->n >= max_blocks))
		return 0;
	return rc < 0 ? rc : 1;
}

int launch_ids__load(struct prof_store *s, struct launch_ids **out, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	struct launch_ids *ids = calloc(1, sizeof *ids);
	int rc = 1;

	*out = NULL;
	if (!ids)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (size_t t = 0; rc > 0 && t < 2; t++)
		if (prof_store__has_table(s, tables[t]))
			rc = load_table(s, ids, tables[t], err);
	if (rc > 0)
		*out = ids;
	else
		launch_ids__free(ids);
	return rc;
}

bool launch_ids__launched(const struct launch_ids *ids, bool pid_known, int64_t global_pid,
			  bool corr_known, int64_t corr)
{
	if (!corr_known)
		return false;
	if (!pid_known || global_pid == 0)
		return has(ids, true, 0, corr);
	return has(ids, false, global_pid, corr);
}

void launch_ids__free(struct launch_ids *ids)
{
	if (!ids)
		return;
	for (size_t i = 0; i < ids->n; i++)
		free(ids->blocks[i]);
	free(ids->blocks);
	free(ids->slots);
	free(ids);
}
