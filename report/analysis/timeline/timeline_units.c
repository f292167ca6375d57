/* timeline_units.c - each process's idle attribution and critical path,
 * made once for every reader of them (timeline_units.h). */
#include "timeline_units.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/core/grow.h"
#include "prof/error.h"

struct timeline_unit *timeline_units__get(struct timeline_units *u, int rank)
{
	for (int i = 0; i < u->n; i++)
		if (u->v[i].rank == rank)
			return &u->v[i];
	if (array__grow((void **)&u->v, &u->cap, u->n + 1, sizeof *u->v))
		return NULL;
	u->v[u->n] = (struct timeline_unit){ .rank = rank };
	return &u->v[u->n++];
}

bool timeline_unit__has(const struct timeline_unit *x, int need)
{
	return x->analysed && (!(need & TIMELINE_IDLE) || x->idle) && (!(need & TIMELINE_PATH) || x->cp);
}

void timeline_unit__note(struct timeline_unit *x, const struct diag_context *ctx)
{
	x->analysed = true;
	x->has_gpu_work = ctx->has_kernel || ctx->has_memcpy || ctx->has_memset || ctx->has_graph_trace;
	x->replayed = ctx->report->replayed;
}

int timeline_units__need(struct prof_store *s, struct timeline_units *u, int rank, int need,
			 struct timeline_unit **out, struct prof_error *err)
{
	struct timeline_unit *x = timeline_units__get(u, rank);
	struct diag_settings settings = { 0 };
	struct diag_context ctx;
	int rc;

	*out = x;
	if (!x)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (timeline_unit__has(x, need))
		return 0;
	if (diag_settings__init(&settings) < 0)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = diag_context__init_scope(&ctx, s, &settings, err);
	if (!rc) {
		timeline_unit__note(x, &ctx);
		if ((need & TIMELINE_IDLE) && !x->idle)
			rc = gpu_idle__analyse(&ctx.scope, &x->idle, err);
		if (!rc && (need & TIMELINE_PATH) && !x->cp)
			rc = critical_path__analyse_rows(&ctx.scope, x->idle, &x->cp, &x->rows, err);
	}
	diag_context__exit(&ctx);
	diag_settings__exit(&settings);
	return rc;
}

void timeline_units__exit(struct timeline_units *u)
{
	for (int i = 0; i < u->n; i++) {
		gpu_idle_result__delete(u->v[i].idle);
		critical_path__delete(u->v[i].cp);
		cp_step_rows__exit(&u->v[i].rows);
	}
	free(u->v);
	memset(u, 0, sizeof *u);
}
