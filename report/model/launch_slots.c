/* launch_slots.c - the loop search's launches counted between the NVTX
 * instances' boundaries (see launch_slots.h). */
#include "launch_slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sums.h"
#include "prof/strfmt.h"

/* One instance boundary: its process and time. */
struct boundary {
	int64_t p, t;
};

struct launch_slots {
	/* the processes with instances, ascending; process i's boundaries are
	 * times[first[i] .. first[i + 1]), ascending, and its slots are
	 * slot[first[i] + i .. first[i + 1] + i]: slot j holds the launches
	 * with exactly j of the process's boundaries at or before them */
	int64_t *pids;
	size_t *first;
	int64_t *times;
	size_t nproc;
	struct slot {
		int64_t n, gpu, t; /* t: the earliest launch's start */
	} *slot;
	/* every process's boundary times, ascending, without repeats; end[j]
	 * the latest end of the work launched between all[j - 1] and all[j] */
	int64_t *all;
	size_t nall;
	struct slot_end {
		int64_t end;
		bool any;
	} *end;
};

static int64_t max_instances = LAUNCH_SLOTS_MAX_INSTANCES;

void launch_slots__set_max_instances(int64_t max)
{
	max_instances = max;
}

int64_t launch_slots__max_instances(void)
{
	return max_instances;
}

static int cmp_boundary(const void *a, const void *b)
{
	const struct boundary *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* How many of v[0..n) (ascending) are before t, or at or before it. */
static size_t count_before(const int64_t *v, size_t n, int64_t t, bool or_at)
{
	return sum_sorted__count_before(v, n, sizeof *v, 0, t, or_at);
}

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* The instances' boundaries, sorted; *b NULL and *n 0 when there are more
 * instances than LAUNCH_SLOTS_MAX_INSTANCES. */
static int read_boundaries(struct prof_store *s, const char *instances, const char *marked,
			   struct boundary **b, size_t *n, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	size_t cap = 0;
	int rc;

	*b = NULL;
	*n = 0;
	rc = prof_cursor__open(s, instances, &c, err);
	if (rc)
		return rc;
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		/* an instance of no process shares its running sums with no launch */
		if (prof_cursor__is_null(c, 0))
			continue;
		if ((int64_t)(*n / 2) >= max_instances) {
			free(*b);
			*b = NULL;
			*n = 0;
			prof_cursor__close(c);
			return 0;
		}
		if (*n + 2 > cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct boundary *nb;

			nb = realloc(*b, ncap * sizeof *nb);
			if (!nb) {
				rc = nomem(err);
				break;
			}
			*b = nb;
			cap = ncap;
		}
		(*b)[(*n)++] = (struct boundary){ prof_cursor__int64(c, 0), prof_cursor__int64(c, 1) };
		(*b)[(*n)++] = (struct boundary){ prof_cursor__int64(c, 0), prof_cursor__int64(c, 2) };
	}
	prof_cursor__close(c);
	if (rc < 0) {
		free(*b);
		*b = NULL;
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(*b, *n, sizeof **b, cmp_boundary);
	return 0;
}

/* The processes, their boundaries and slots, and every boundary time once. */
static int lay_out(struct launch_slots *ls, const struct boundary *b, size_t n, struct prof_error *err)
{
	size_t np = 0;

	for (size_t i = 0; i < n; i++)
		np += i == 0 || b[i].p != b[i - 1].p;
	ls->pids = malloc((np ? np : 1) * sizeof *ls->pids);
	ls->first = malloc((np + 1) * sizeof *ls->first);
	ls->times = malloc((n ? n : 1) * sizeof *ls->times);
	ls->slot = calloc(n + np + 1, sizeof *ls->slot);
	ls->all = malloc((n ? n : 1) * sizeof *ls->all);
	if (!ls->pids || !ls->first || !ls->times || !ls->slot || !ls->all)
		return nomem(err);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || b[i].p != b[i - 1].p) {
			ls->pids[ls->nproc] = b[i].p;
			ls->first[ls->nproc++] = i;
		}
		ls->times[i] = b[i].t;
		ls->all[i] = b[i].t;
	}
	ls->first[ls->nproc] = n;
	if (n > 1)
		qsort(ls->all, n, sizeof *ls->all, cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (ls->nall == 0 || ls->all[i] != ls->all[ls->nall - 1])
			ls->all[ls->nall++] = ls->all[i];
	ls->end = calloc(ls->nall + 1, sizeof *ls->end);
	return ls->end ? 0 : nomem(err);
}

/* The process's place among ls->pids; -1 when it has no instance. */
static long process_of(const struct launch_slots *ls, int64_t p)
{
	size_t i = count_before(ls->pids, ls->nproc, p, false);

	return i < ls->nproc && ls->pids[i] == p ? (long)i : -1;
}

/* One launch: p its call's process, t the call's start, e the work's end
 * (null: none), gpu the work's time. */
static void add_launch(struct launch_slots *ls, int64_t p, int64_t t, bool has_end, int64_t e, int64_t gpu)
{
	long i = process_of(ls, p);

	if (has_end) {
		struct slot_end *x = &ls->end[count_before(ls->all, ls->nall, t, true)];

		if (!x->any || e > x->end)
			*x = (struct slot_end){ e, true };
	}
	if (i >= 0) {
		size_t from = ls->first[i], nb = ls->first[i + 1] - from;
		struct slot *x = &ls->slot[from + (size_t)i + count_before(ls->times + from, nb, t, true)];

		if (x->n == 0 || t < x->t)
			x->t = t;
		x->n++;
		x->gpu += gpu;
	}
}

static int count_launches(struct launch_slots *ls, struct prof_store *s, const char *launches,
			  struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *sql = prof_strfmt("WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT p, t, e, gpu FROM (%s)",
				launches);
	int rc;

	if (!sql)
		return nomem(err);
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	if (rc)
		return rc;
	/* the launch SQL's span: from the first instance's start to the last end */
	prof_cursor__bind_int64(c, 1, ls->all[0]);
	prof_cursor__bind_int64(c, 2, ls->all[ls->nall - 1]);
	while ((rc = prof_cursor__next(c, err)) == 1)
		add_launch(ls, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1), !prof_cursor__is_null(c, 2),
			   prof_cursor__int64(c, 2), prof_cursor__int64(c, 3));
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int write_table(const struct launch_slots *ls, struct prof_store *s, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." LAUNCH_SLOTS_TABLE "; CREATE TEMP TABLE "
				  LAUNCH_SLOTS_TABLE " (p INTEGER, t INTEGER, n INTEGER, g INTEGER)", err);

	if (rc == 0)
		rc = prof_cursor__open(s, "INSERT INTO temp." LAUNCH_SLOTS_TABLE " VALUES (?1, ?2, ?3, ?4)", &c,
				       err);
	for (size_t i = 0; rc == 0 && i < ls->nproc; i++) {
		size_t from = ls->first[i] + i, to = ls->first[i + 1] + i;

		for (size_t j = from; rc == 0 && j <= to; j++) {
			if (ls->slot[j].n == 0)
				continue;
			prof_cursor__reset(c);
			prof_cursor__bind_int64(c, 1, ls->pids[i]);
			prof_cursor__bind_int64(c, 2, ls->slot[j].t);
			prof_cursor__bind_int64(c, 3, ls->slot[j].n);
			prof_cursor__bind_int64(c, 4, ls->slot[j].gpu);
			rc = prof_cursor__next(c, err);
			rc = rc < 0 ? rc : 0;
		}
	}
	prof_cursor__close(c);
	return rc;
}

int launch_slots__count(struct prof_store *s, const char *instances, const char *marked,
			const char *launches, struct launch_slots **out, struct prof_error *err)
{
	struct launch_slots *ls;
	struct boundary *b;
	size_t n;
	int rc;

	*out = NULL;
	rc = read_boundaries(s, instances, marked, &b, &n, err);
	if (rc || !b)
		return rc;
	ls = calloc(1, sizeof *ls);
	rc = ls ? lay_out(ls, b, n, err) : nomem(err);
	free(b);
	if (rc == 0 && ls->nall > 0)
		rc = count_launches(ls, s, launches, err);
	if (rc == 0)
		rc = write_table(ls, s, err);
	if (rc) {
		launch_slots__delete(ls, s);
		return rc;
	}
	*out = ls;
	return 0;
}

bool launch_slots__max_end(const struct launch_slots *ls, int64_t lo, int64_t hi, int64_t *end, bool *any)
{
	size_t from = count_before(ls->all, ls->nall, lo, true), to = count_before(ls->all, ls->nall, hi, false);

	/* [lo, hi) in slots: the launches at or after lo are those past every
	 * boundary up to lo, those before hi those past none from hi on */
	if (from == 0 || ls->all[from - 1] != lo || to >= ls->nall || ls->all[to] != hi)
		return false;
	*any = false;
	for (size_t j = from; j <= to; j++)
		if (ls->end[j].any && (!*any || ls->end[j].end > *end)) {
			*end = ls->end[j].end;
			*any = true;
		}
	return true;
}

void launch_slots__delete(struct launch_slots *ls, struct prof_store *s)
{
	struct prof_error ignored;

	if (!ls)
		return;
	(void)prof_store__exec(s, "DROP TABLE IF EXISTS temp." LAUNCH_SLOTS_TABLE, &ignored);
	free(ls->pids);
	free(ls->first);
	free(ls->times);
	free(ls->slot);
	free(ls->all);
	free(ls->end);
	free(ls);
}
