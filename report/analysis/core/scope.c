/* scope.c - what an analysis of one capture reads: the window's queries,
 * the GPU's busy union, the API call view (scope.h). */
#include "scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int diag_scope__load_busy(struct diag_scope *ctx, struct prof_error *err)
{
	char sql[1024];
	bool first = true;
	struct diag_intervals busy = { 0 };
	int rc;

	sql[0] = 0;
	/* table names are constants of this file, never data */
	if (ctx->has_kernel) {
		strcat(sql, "SELECT start, end FROM " PROF_T_KERNEL " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (ctx->has_memcpy) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMCPY " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (ctx->has_memset) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMSET " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	/* a graph launched whole is busy from its first node to its last */
	if (ctx->has_graph_trace) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_GRAPH_TRACE " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (first)
		return 0;
	strcat(sql, " ORDER BY 1");
	rc = diag_scope__load_union(ctx, sql, DIAG_GPU_SIDE, &busy, err);
	if (rc) {
		diag_intervals__exit(&busy);
		return rc;
	}
	ctx->busy = busy.v;
	ctx->nbusy = busy.n;
	ctx->busy_ns = diag_intervals__length(&busy);
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
 * stays read-only. */
#define TABLE_HEAD "CREATE TEMP TABLE " DIAG_API_CALLS " AS SELECT * FROM ("
#define TABLE_TAIL ") WHERE NOT " SUM_BAD_SPAN("") \
		   "; CREATE INDEX temp." DIAG_API_CALLS "_corr ON " DIAG_API_CALLS " (correlationId)"

int diag_scope__api_view(struct diag_scope *ctx, struct prof_error *err)
{
	char *src, *table;
	int rc = prof_store__exec(ctx->store, "DROP TABLE IF EXISTS temp." DIAG_API_CALLS, err);

	if (rc)
		return rc;
	src = sum_api_calls(ctx->store, &rc, err);
	if (!src)
		return rc;
	ctx->has_api_calls = true;
	/* less its calls with a bad span, which the summary counts and leaves
	 * out: every rule reads the calls here */
	table = malloc(strlen(src) + sizeof TABLE_HEAD TABLE_TAIL);
	if (table) {
		sprintf(table, TABLE_HEAD "%s" TABLE_TAIL, src);
		rc = prof_store__exec(ctx->store, table, err);
	} else {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	free(table);
	free(src);
	return rc;
}

void diag_scope__exit(struct diag_scope *s)
{
	free(s->busy);
	s->busy = NULL;
}
