/* kernel_groups.c - the window's kernels by name, read once for the rules
 * that ask (kernel_groups.h). */
#include "kernel_groups.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/core/grow.h"
#include "analysis/core/kernel_name_sql.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/error.h"
#include "prof/tables.h"

void kernel_groups__free(struct kernel_groups *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n; i++)
		free(g->v[i].name);
	free(g->v);
	free(g);
}

static int read_groups(struct diag_context *ctx, struct kernel_groups *g, struct prof_error *err)
{
	const char *sql =
		"SELECT " DIAG_KERNEL_NAME_SQL ", count(*), " SUM_TOTAL_SATURATED("k.end - k.start")
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.")
		" GROUP BY " PROF_SQL_KERNEL_NAME_ID("k.") " ORDER BY 3 DESC";
	struct prof_cursor *c;
	int cap = 0, rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *name = prof_cursor__text(c, 0);
		struct kernel_group *e;

		if (array__grow((void **)&g->v, &cap, g->n + 1, sizeof *g->v)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		e = &g->v[g->n];
		e->name = name ? strdup(name) : NULL;
		if (name && !e->name) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		e->count = prof_cursor__int64(c, 1);
		e->time_ns = prof_cursor__int64(c, 2);
		g->n++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int kernel_groups__of(struct diag_context *ctx, const struct kernel_groups **out, struct prof_error *err)
{
	struct kernel_groups *g = ctx->kernel_groups;
	int rc;

	*out = NULL;
	if (g && g->from == ctx->w->start_ns && g->to == ctx->w->end_ns) {
		*out = g;
		return 0;
	}
	g = calloc(1, sizeof *g);
	if (!g)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	g->from = ctx->w->start_ns;
	g->to = ctx->w->end_ns;
	rc = read_groups(ctx, g, err);
	if (rc) {
		kernel_groups__free(g);
		return rc;
	}
	kernel_groups__free(ctx->kernel_groups);
	ctx->kernel_groups = g;
	*out = g;
	return 0;
}
