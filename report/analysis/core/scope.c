/* scope.c - what an analysis of one capture reads: the window's queries,
 * the GPU's busy union, the API call view (scope.h). */
#include "scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/grow.h"
#include "prof/tables.h"
#include "model/sql.h"
#include "prof/error.h"

int diag_scope__open_window(const struct diag_scope *ctx, const char *sql, enum diag_side side,
			    struct prof_cursor **out, struct prof_error *err)
{
	int rc = prof_cursor__open(ctx->store, sql, out, err);

	if (rc)
		return rc;
	prof_cursor__bind_int64(*out, 1, ctx->w->start_ns);
	prof_cursor__bind_int64(*out, 2, side == DIAG_HOST_SIDE ? ctx->w->host_end_ns : ctx->w->end_ns);
	return 0;
}

int diag_scope__load_union(const struct diag_scope *ctx, const char *sql, enum diag_side side,
			   struct diag_intervals *u, struct prof_error *err)
{
	int64_t lo = ctx->w->start_ns, hi = side == DIAG_HOST_SIDE ? ctx->w->host_end_ns : ctx->w->end_ns;
	struct prof_cursor *c;
	int rc = diag_scope__open_window(ctx, sql, side, &c, err);

	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);

		if (diag_intervals__merge(u, s > lo ? s : lo, e < hi ? e : hi)) {
			prof_cursor__close(c);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* ---- GPU busy intervals --------------------------------------------- */

/* One table's rows for the busy union: its work in the window and device
 * (table names are constants of this file, never data). */
#define BUSY_PART(table) \
	"SELECT start, end, coalesce(deviceId, 0) FROM " table " WHERE end > ?1 AND start < ?2" \
	" AND NOT " SUM_BAD_SPAN("")

/* Adds device to the devices seen (few: a search serves), ascending. */
static int note_device(struct diag_scope *ctx, int64_t device, int *cap)
{
	int i = 0;

	while (i < ctx->ndevices && ctx->devices[i] < device)
		i++;
	if (i < ctx->ndevices && ctx->devices[i] == device)
		return 0;
	if (array__grow((void **)&ctx->devices, cap, ctx->ndevices + 1, sizeof *ctx->devices))
		return PROF_E_NOMEM;
	memmove(ctx->devices + i + 1, ctx->devices + i, sizeof *ctx->devices * (size_t)(ctx->ndevices - i));
	ctx->devices[i] = device;
	ctx->ndevices++;
	return 0;
}

/* The union made from intervals walked already (struct diag_busy_source):
 * each device's union intervals, clipped to the window, merged as they
 * come while they come in start order (one device's do: no copy of them
 * is held), and once one does not, the rest held and united after. */
struct lent_busy {
	struct diag_scope *scope;
	int64_t lo, hi;
	struct diag_intervals merged; /* of those in start order */
	struct diag_intervals rest;   /* the others, any order */
	int devices_cap;
};

static int lent_interval(void *ctx, int64_t device_id, int64_t start, int64_t end)
{
	struct lent_busy *b = ctx;

	/* a device's union interval holds a row of the window's work (end
	 * after its start, start before its end) exactly when the interval
	 * meets the window so: the devices and the union clipped are the
	 * rows' own */
	if (!(end > b->lo && start < b->hi))
		return 0;
	if (note_device(b->scope, device_id, &b->devices_cap))
		return -1;
	if (start < b->lo)
		start = b->lo;
	if (end > b->hi)
		end = b->hi;
	if (b->rest.n == 0 && (b->merged.n == 0 || start >= b->merged.v[b->merged.n - 1].start_ns))
		return diag_intervals__merge(&b->merged, start, end) ? -1 : 0;
	return diag_intervals__push(&b->rest, start, end) ? -1 : 0;
}

/* Whether the union and devices were made from ctx's busy source; not
 * where it has none to give (not yet walked, lost) or memory ran out,
 * the scope then left as it was for the rows' walk. */
static bool load_lent_busy(struct diag_scope *ctx)
{
	struct lent_busy b = { .scope = ctx, .lo = ctx->w->start_ns, .hi = ctx->w->end_ns };
	int rc = ctx->busy_source->replay(ctx->busy_source->source, lent_interval, &b);
	struct diag_intervals *busy = b.rest.n ? &b.rest : &b.merged;

	/* those merged in order, a union already, united with the rest */
	for (int i = 0; rc == 0 && b.rest.n && i < b.merged.n; i++)
		rc = diag_intervals__push(&b.rest, b.merged.v[i].start_ns, b.merged.v[i].end_ns) ? -1 : 0;
	if (rc == 0 && b.rest.n)
		diag_intervals__unite(&b.rest);
	if (rc < 0) {
		diag_intervals__exit(&b.merged);
		diag_intervals__exit(&b.rest);
		free(ctx->devices);
		ctx->devices = NULL;
		ctx->ndevices = 0;
		return false;
	}
	ctx->busy = busy->v;
	ctx->nbusy = busy->n;
	ctx->busy_ns = diag_intervals__length(busy);
	ctx->devices_known = true;
	diag_intervals__exit(busy == &b.rest ? &b.merged : &b.rest);
	return true;
}

int diag_scope__load_busy(struct diag_scope *ctx, struct prof_error *err)
{
	const struct {
		bool has;
		const char *sql;
	} parts[] = {
		{ ctx->has_kernel, BUSY_PART(PROF_T_KERNEL) },
		{ ctx->has_memcpy, BUSY_PART(PROF_T_MEMCPY) },
		{ ctx->has_memset, BUSY_PART(PROF_T_MEMSET) },
		/* a graph launched whole is busy from its first node to its last */
		{ ctx->has_graph_trace, BUSY_PART(PROF_T_GRAPH_TRACE) },
	};
	int64_t lo = ctx->w->start_ns, hi = ctx->w->end_ns;
	struct diag_intervals busy = { 0 };
	struct prof_cursor *c;
	char sql[1536];
	int rc, cap = 0;

	if (ctx->busy_source && load_lent_busy(ctx))
		return 0;
	sql[0] = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (parts[i].has) {
			strcat(sql, sql[0] ? " UNION ALL " : "");
			strcat(sql, parts[i].sql);
		}
	if (!sql[0])
		return 0;
	strcat(sql, " ORDER BY 1");
	/* the devices come with the union: the idle attribution makes a pass
	 * per device, and a pass of its own to find them cost as much as one */
	rc = diag_scope__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t s = prof_cursor__int64(c, 0), e = prof_cursor__int64(c, 1);

		if (diag_intervals__merge(&busy, s > lo ? s : lo, e < hi ? e : hi) ||
		    note_device(ctx, prof_cursor__int64(c, 2), &cap)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc < 0) {
		diag_intervals__exit(&busy);
		return rc;
	}
	ctx->busy = busy.v;
	ctx->nbusy = busy.n;
	ctx->busy_ns = diag_intervals__length(&busy);
	ctx->devices_known = true;
	return 0;
}

/* The rules read CUDA API calls from one table over the runtime and
 * driver tables: libraries such as cuBLAS launch and allocate through the
 * driver, and the driver table holds only the calls made directly (the
 * runtime's own driver calls are not recorded twice). Its rows are the
 * summaries' own source (sum_api_calls: each call once, a NULL
 * correlation id where an older nsys export has none), copied once for
 * the scope with an index on the correlation id: the GPU work finds its
 * launches through it (the API tables have none), where a view was
 * evaluated again, and indexed again, by every query that joined it. A
 * temporary table lives in the connection's temp database: the store
 * stays read-only. Its rows go in by start, so that the readers that walk
 * them in start order (the idle attribution, the host's union) read them
 * in rowid order instead of each sorting them again: at 22M calls each of
 * those sorts took longer than this one. SQLite's sort keeps the order of
 * rows with the same start, so the order is the one a sort gave them. */
#define TABLE_HEAD "CREATE TEMP TABLE " DIAG_API_CALLS " AS SELECT * FROM ("
#define TABLE_TAIL ") WHERE NOT " SUM_BAD_SPAN("") " ORDER BY start" \
		   "; CREATE INDEX temp." DIAG_API_CALLS "_corr ON " DIAG_API_CALLS " (correlationId)"

/* The table of src's calls (none where src is NULL: no table of calls),
 * made again. */
static int make_table(struct diag_scope *ctx, const char *src, struct prof_error *err)
{
	int rc = prof_store__exec(ctx->store, "DROP TABLE IF EXISTS temp." DIAG_API_CALLS, err);
	char *table;

	ctx->api_table_here = false;
	if (rc || !src)
		return rc;
	/* less its calls with a bad span, which the summary counts and leaves
	 * out: every rule reads the calls here */
	table = malloc(strlen(src) + sizeof TABLE_HEAD TABLE_TAIL);
	if (!table)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	sprintf(table, TABLE_HEAD "%s" TABLE_TAIL, src);
	rc = prof_store__exec(ctx->store, table, err);
	ctx->api_table_here = rc == 0;
	free(table);
	return rc;
}

int diag_scope__api_view(struct diag_scope *ctx, struct prof_error *err)
{
	char *src;
	bool once = true;
	int rc;

	/* made before knowing whether a thread holds a call twice, which is a
	 * pass over every call (the calls' census, which another thread of
	 * the reader mostly makes meanwhile: 2.9 s of the diagnosis's own
	 * at 22M calls before the table), and made again where one does */
	ctx->api_table_here = false;
	src = sum_api_calls_assuming_once(ctx->store, &rc, err);
	if (!src && rc)
		return rc;
	rc = make_table(ctx, src, err);
	if (!src)
		return rc;
	ctx->has_api_calls = true;
	free(src);
	if (rc == 0)
		rc = sum_api_calls__once(ctx->store, &once, err);
	if (rc || once)
		return rc;
	src = sum_api_calls(ctx->store, &rc, err);
	if (!src)
		return rc;
	rc = make_table(ctx, src, err);
	free(src);
	return rc;
}

void diag_scope__exit(struct diag_scope *s)
{
	free(s->busy);
	s->busy = NULL;
	free(s->devices);
	s->devices = NULL;
	s->ndevices = 0;
	s->devices_known = false;
}

struct diag_scope diag_scope__bare(const struct diag_scope *s)
{
	struct diag_scope bare = *s;

	bare.busy = NULL;
	bare.nbusy = 0;
	bare.busy_ns = 0;
	bare.devices = NULL;
	bare.ndevices = 0;
	bare.devices_known = false;
	bare.api_names_read = NULL;
	bare.api_table_here = false;
	return bare;
}

void diag_scope__take_busy(struct diag_scope *s, struct diag_scope *from)
{
	diag_scope__exit(s);
	s->busy = from->busy;
	s->nbusy = from->nbusy;
	s->busy_ns = from->busy_ns;
	s->devices = from->devices;
	s->ndevices = from->ndevices;
	s->devices_known = from->devices_known;
	*from = diag_scope__bare(from);
}
