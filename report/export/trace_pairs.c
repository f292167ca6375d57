/* trace_pairs.c - GPU rows paired with their launching calls in the merge
 * (see trace_pairs.h): the ids of the GPU rows and of their calls as bit
 * sets under their process (id_bits.h), and per process the ids held by
 * more than one GPU row or whose call is kept, with their count. */
#include "trace_pairs.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/id_bits.h"
#include "model/id_map.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/event.h"
#include "prof/strfmt.h"

/* An id with more than one GPU row, or whose call is kept: the rows
 * still to come, and the call of each table until the last has come. An
 * id with one row and no call kept has its GPU bit alone. */
struct tp_kept {
	int64_t left;
	bool has[TP_API_TABLES];
	int64_t tid[TP_API_TABLES], start[TP_API_TABLES], end[TP_API_TABLES];
};

struct tp_process {
	int64_t process;
	struct id_map kept;    /* struct tp_kept by id */
};

struct tm_pairs {
	struct id_bits gpu;                   /* ids with GPU rows to come, by process */
	struct id_bits call[TP_API_TABLES];   /* of those, the ids each table's calls hold */
	struct tp_process *procs;             /* by process */
	size_t nprocs, cap_procs;
	size_t last;           /* the entry found last: the merge's rows come in runs */
	int64_t from, to;
	int64_t bad_rows;      /* of an impossible span, in the tables read */
};

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* The entry of process, or where it would go (*found false). */
static size_t proc_at(struct tm_pairs *p, int64_t process, bool *found)
{
	size_t lo;

	*found = true;
	if (p->last < p->nprocs && p->procs[p->last].process == process)
		return p->last;
	lo = sum_sorted__count_before(p->procs, p->nprocs, sizeof *p->procs,
				      offsetof(struct tp_process, process), process, false);
	*found = lo < p->nprocs && p->procs[lo].process == process;
	if (*found)
		p->last = lo;
	return lo;
}

static struct tp_process *proc_find(struct tm_pairs *p, int64_t process)
{
	bool found;
	size_t at = proc_at(p, process, &found);

	return found ? &p->procs[at] : NULL;
}

static struct tp_process *proc_add(struct tm_pairs *p, int64_t process)
{
	bool found;
	size_t at = proc_at(p, process, &found);

	if (found)
		return &p->procs[at];
	if (sum_array__grow(&p->procs, &p->cap_procs, p->nprocs, sizeof *p->procs) < 0)
		return NULL;
	memmove(&p->procs[at + 1], &p->procs[at], (p->nprocs - at) * sizeof *p->procs);
	p->procs[at] = (struct tp_process){ .process = process };
	p->nprocs++;
	p->last = at;
	return &p->procs[at];
}

/* The entry of corr in x, made with rows rows to come where it has none;
 * NULL out of memory. */
static struct tp_kept *kept_of(struct tp_process *x, int64_t corr, int64_t rows)
{
	struct tp_kept *k = id_map__get(&x->kept, corr);

	if (k)
		return k;
	if (!(k = calloc(1, sizeof *k)))
		return NULL;
	k->left = rows;
	if (id_map__put(&x->kept, corr, k) < 0) {
		free(k);
		return NULL;
	}
	return k;
}

/* The row's first n columns, read once. */
static void read_row(struct prof_cursor *c, int n, struct tp_row *r)
{
	for (int i = 0; i < n; i++) {
		r->kind[i] = prof_cursor__kind(c, i);
		r->v[i] = r->kind[i] == PROF_VALUE_INT ? prof_cursor__int64(c, i) : 0;
	}
}

/* Whether the row's columns from..to are integers or NULL. */
static bool ints_or_null(const struct tp_row *r, int from, int to)
{
	for (int i = from; i <= to; i++)
		if (r->kind[i] != PROF_VALUE_INT && r->kind[i] != PROF_VALUE_NULL)
			return false;
	return true;
}

/* Every row of table as (who, correlationId, start, end, of an impossible
 * span) and then more columns (TP_*): who is its process or thread. */
static int open_rows(struct prof_store *s, const char *who, const char *more, const char *table,
		     struct prof_cursor **c, struct prof_error *err)
{
	char *sql = prof_strfmt("SELECT %s, correlationId, start, end, " SUM_BAD_SPAN("") "%s FROM %s",
				who, more, table);
	int rc;

	if (!sql)
		return nomem(err);
	rc = prof_cursor__open(s, sql, c, err);
	free(sql);
	return rc;
}

/* One GPU table's rows counted by (process, id). *made false: no pairs. */
static int count_gpu(struct tm_pairs *p, struct prof_store *s, const char *table,
		     struct tm_tracks *tracks, bool *made, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = open_rows(s, "globalPid", tracks ? TP_GPU_TRACK_COLS : "", table, &c, err);

	if (tracks)
		tm_tracks__table(tracks, table);
	while (rc >= 0 && *made && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t process, corr;
		struct tp_process *x;
		struct tp_kept *k;
		struct tp_row r;

		read_row(c, tracks ? TP_STREAM + 1 : TP_COLS, &r);
		if (tracks && tm_tracks__gpu_row(tracks, &r) < 0) {
			rc = nomem(err);
			break;
		}
		if (r.v[TP_BAD]) {
			p->bad_rows++;
			continue;
		}
		/* a row without a process or an id joins no call */
		if (r.kind[TP_WHO] == PROF_VALUE_NULL || r.kind[TP_CORR] == PROF_VALUE_NULL)
			continue;
		/* a possible span has both ends; the export's window, which
		 * the pairs are made for unbounded, leaves none out */
		if (!ints_or_null(&r, TP_WHO, TP_END) || !(r.v[TP_END] > p->from && r.v[TP_START] < p->to)) {
			*made = false;
			break;
		}
		process = prof_process_of(r.v[TP_WHO]);
		corr = r.v[TP_CORR];
		if (!id_bits__has(&p->gpu, process, corr)) {
			rc = id_bits__set(&p->gpu, process, corr);
			*made = rc != 0;
			rc = rc < 0 ? nomem(err) : 0;
			continue;
		}
		/* a second row of the id: counted from here on */
		if (!(x = proc_add(p, process)) || !(k = kept_of(x, corr, 1))) {
			rc = nomem(err);
			break;
		}
		k->left++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The calls' bits, for the ids a GPU row holds: a bit met twice is a call
 * held twice (*made false). */
static int mark_calls(struct tm_pairs *p, struct prof_store *s, const struct tm_pairs_input *in,
		      int api, bool *made, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = open_rows(s, "globalTid", in->tracks ? TP_CALL_TRACK_COLS : "",
			   in->api_tables[api], &c, err);

	if (in->tracks)
		tm_tracks__table(in->tracks, in->api_tables[api]);
	while (rc >= 0 && *made && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t tid, process, corr;
		struct tp_row r;

		read_row(c, in->tracks ? TP_NAME + 1 : TP_COLS, &r);
		if (!ints_or_null(&r, TP_WHO, TP_END)) {
			*made = false;
			break;
		}
		if (in->tracks && tm_tracks__call_row(in->tracks, api, &r) < 0) {
			rc = nomem(err);
			break;
		}
		p->bad_rows += r.v[TP_BAD] != 0;
		/* a call without a thread or an id joins no GPU row */
		if (r.kind[TP_WHO] == PROF_VALUE_NULL || r.kind[TP_CORR] == PROF_VALUE_NULL)
			continue;
		tid = r.v[TP_WHO];
		process = prof_process_of(tid);
		corr = r.v[TP_CORR];
		if (!id_bits__has(&p->gpu, process, corr))
			continue;
		if (id_bits__has(&p->call[api], process, corr)) {
			*made = false;
			break;
		}
		/* the GPU set's blocks bound this set's: never past the limit */
		if (id_bits__set(&p->call[api], process, corr) < 0) {
			rc = nomem(err);
			break;
		}
		if (in->on_call && r.kind[TP_START] != PROF_VALUE_NULL)
			rc = in->on_call(in->ctx, tid, r.v[TP_START], process, corr);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int tm_pairs__make(struct prof_store *s, const struct tm_pairs_input *in, struct tm_pairs **out,
		   struct prof_error *err)
{
	struct tm_pairs *p = calloc(1, sizeof *p);
	bool made = true;
	int rc = 0;

	*out = NULL;
	if (!p)
		return nomem(err);
	p->from = in->from;
	p->to = in->to;
	id_bits__init(&p->gpu, ID_BITS_MAX_BLOCKS);
	for (int api = 0; api < TP_API_TABLES; api++)
		id_bits__init(&p->call[api], ID_BITS_MAX_BLOCKS);
	for (size_t t = 0; rc == 0 && made && t < sizeof in->gpu_tables / sizeof *in->gpu_tables; t++)
		if (in->gpu_tables[t])
			rc = count_gpu(p, s, in->gpu_tables[t], in->tracks, &made, err);
	for (int api = 0; rc == 0 && made && api < TP_API_TABLES; api++)
		if (in->api_tables[api])
			rc = mark_calls(p, s, in, api, &made, err);
	if (rc < 0 || !made) {
		tm_pairs__free(p);
		return rc < 0 ? rc : 0;
	}
	*out = p;
	return 0;
}

int tm_pairs__call(struct tm_pairs *p, int api, int64_t tid, int64_t corr, int64_t start,
		   int64_t end)
{
	int64_t process = prof_process_of(tid);
	struct tp_process *x;
	struct tp_kept *k;

	if (!id_bits__has(&p->gpu, process, corr))
		return 0;
	/* an id of one row, not counted in the map until now */
	if (!(x = proc_add(p, process)) || !(k = kept_of(x, corr, 1)))
		return -1;
	k->has[api] = true;
	k->tid[api] = tid;
	k->start[api] = start;
	k->end[api] = end;
	return 0;
}

/* One GPU row of (process, id) has come: with the last, the entry goes,
 * and a call of the id handed out later is not kept. */
static void gpu_row_came(struct tm_pairs *p, struct tp_process *x, int64_t process, int64_t corr,
			 struct tp_kept *k)
{
	if (k && --k->left > 0)
		return;
	if (k)
		free(id_map__take(&x->kept, corr));
	id_bits__clear(&p->gpu, process, corr);
}

int tm_pairs__gpu(struct tm_pairs *p, int64_t process, int64_t corr, struct tm_launch *l)
{
	struct tp_process *x;
	struct tp_kept *k;
	int api = -1;

	if (!id_bits__has(&p->gpu, process, corr))
		return 0;
	x = proc_find(p, process);
	k = x ? id_map__get(&x->kept, corr) : NULL;
	/* the runtime's call first, as the join's coalesce; a call that has
	 * the id but was not handed out yet is SQL's to find */
	for (int a = 0; a < TP_API_TABLES && api < 0; a++) {
		if (k && k->has[a]) {
			api = a;
		} else if (id_bits__has(&p->call[a], process, corr)) {
			gpu_row_came(p, x, process, corr, k);
			return 0;
		}
	}
	*l = (struct tm_launch){ 0 };
	if (api >= 0) {
		l->tid = k->tid[api];
		l->start = k->start[api];
		l->has_start = k->end[api] > p->from && k->start[api] < p->to;
	}
	gpu_row_came(p, x, process, corr, k);
	return 1;
}

int64_t tm_pairs__bad_rows(const struct tm_pairs *p)
{
	return p->bad_rows;
}

bool tm_pairs__has_call(const struct tm_pairs *p, int api, int64_t process, int64_t corr)
{
	return id_bits__has(&p->call[api], process, corr);
}

void tm_pairs__free(struct tm_pairs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nprocs; i++) {
		id_map__exit(&p->procs[i].kept, free);
	}
	free(p->procs);
	id_bits__exit(&p->gpu);
	for (int api = 0; api < TP_API_TABLES; api++)
		id_bits__exit(&p->call[api]);
	free(p);
}
