/* api_groups.c - the window's CUDA calls counted by name id in one pass,
 * for the rules that weigh the calls of a kind (api_groups.h).
 *
 * The pass reads the calls the diagnosis's table holds
 * (diag_scope__api_view: every call once, less those of a bad span) from
 * the API tables themselves, so that the thread ahead, whose connection
 * has no such table, reads the same rows. A call's span is end - start,
 * never negative there, so the saturated sums are the same in any order;
 * they are what the statements' CAST(total()) gave wherever a sum stays
 * under 2^53 ns (104 days of calls), past which a double rounds. A value
 * that is no integer (a foreign file) leaves the groups empty and each
 * kind to its own statement, which compares as SQL does. */
#include "api_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/ahead.h"
#include "analysis/diagnose/diagnose.h"
#include "model/names.h"
#include "model/sql.h"
#include "prof/error.h"
#include "prof/saturate.h"
#include "prof/strfmt.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

int api_groups__make(struct diag_context *ctx, void **out, struct prof_error *err)
{
	struct api_groups *g = calloc(1, sizeof *g);
	struct prof_cursor *c = NULL;
	char *calls, *sql;
	int rc = 0;

	*out = NULL;
	if (!g)
		return nomem(err);
	g->from = ctx->w->start_ns;
	g->to = ctx->w->host_end_ns;
	/* the diagnosis's table where it is on this connection (its calls
	 * less those of a bad span, fewer columns to read: half the time a
	 * rank of ddp2_even), else the API tables themselves (the thread
	 * ahead reads before the table is made, on a connection without it) */
	if (ctx->has_api_calls && ctx->api_table_here) {
		sql = strdup("SELECT nameId, start, end FROM " DIAG_API_CALLS " WHERE start >= ?1 AND start < ?2");
	} else {
		calls = ctx->has_api_calls ? sum_api_calls(ctx->store, &rc, err) : NULL;
		if (!calls) {
			if (rc) {
				api_groups__free(g);
				return rc;
			}
			*out = g;
			return 0;
		}
		sql = prof_strfmt("SELECT nameId, start, end FROM (%s) WHERE start >= ?1 AND start < ?2 AND NOT "
				  SUM_BAD_SPAN(""), calls);
		free(calls);
	}
	rc = sql ? diag__open_window(ctx, sql, DIAG_HOST_SIDE, &c, err) : nomem(err);
	free(sql);
	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		enum prof_value_kind name = prof_cursor__kind(c, 0);
		struct id_group *at;

		rc = 0;
		if ((name != PROF_VALUE_NULL && name != PROF_VALUE_INT) || prof_cursor__kind(c, 1) != PROF_VALUE_INT ||
		    prof_cursor__kind(c, 2) != PROF_VALUE_INT) {
			g->odd = true;
			g->by_name.n = 0;
			break;
		}
		/* a call of no name joins none */
		if (name == PROF_VALUE_NULL)
			continue;
		at = id_groups__of(&g->by_name, prof_cursor__int64(c, 0));
		if (!at) {
			rc = nomem(err);
			break;
		}
		at->count++;
		at->sum = prof_add_saturated(at->sum, prof_span_saturated(prof_cursor__int64(c, 1), prof_cursor__int64(c, 2)));
	}
	prof_cursor__close(c);
	if (rc < 0) {
		api_groups__free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void api_groups__free(struct api_groups *g)
{
	if (!g)
		return;
	id_groups__exit(&g->by_name);
	free(g);
}

void api_groups__free_made(void *groups)
{
	api_groups__free(groups);
}

/* ctx's groups: kept, counted by the idle attribution's pass, made
 * ahead, or read now. */
static int groups_of(struct diag_context *ctx, const struct api_groups **out, struct prof_error *err)
{
	struct api_groups *g = ctx->api_groups;
	struct window_calls *seen;
	void *made;
	int rc;

	*out = NULL;
	if (g && g->from == ctx->w->start_ns && g->to == ctx->w->host_end_ns) {
		*out = g;
		return 0;
	}
	/* the idle attribution's pass counted them where it read the calls */
	seen = gpu_idle__calls_seen(ctx->idle, &ctx->scope);
	if (seen && seen->groups_known) {
		g = calloc(1, sizeof *g);
		if (!g)
			return nomem(err);
		*g = (struct api_groups){ seen->start_ns, seen->to, seen->by_name, false };
		/* the groups are the rules' now */
		seen->by_name = (struct id_groups){ 0 };
		seen->groups_known = false;
		api_groups__free(ctx->api_groups);
		ctx->api_groups = g;
		*out = g;
		return 0;
	}
	rc = diag_ahead__take_or_make(ctx, DIAG_AHEAD_API_GROUPS, api_groups__make, &made, err);
	if (rc)
		return rc;
	api_groups__free(ctx->api_groups);
	ctx->api_groups = made;
	*out = made;
	return 0;
}

int api_groups__idle_of(struct diag_context *ctx, const struct gpu_idle_result **out, struct prof_error *err)
{
	if (!ctx->idle && ctx->has_api_calls)
		diag_ahead__leave(ctx, DIAG_AHEAD_API_GROUPS);
	return gpu_idle__of(&ctx->scope, &ctx->idle, out, err);
}

/* The kind's sums, and its names' into t where there is one. */
struct kind_sum {
	struct diag_tally *t;
	int64_t count, time_ns;
};

static int add(struct kind_sum *sum, const char *name, int64_t count, int64_t time_ns, struct prof_error *err)
{
	if (sum->t) {
		struct diag_tally_entry *te = diag_tally__get(sum->t, name);

		if (!te)
			return nomem(err);
		te->count += count;
		te->time_ns = prof_add_saturated(te->time_ns, time_ns);
	}
	sum->count += count;
	sum->time_ns = prof_add_saturated(sum->time_ns, time_ns);
	return 0;
}

/* Each call of the kind, read by a statement of its own (the groups'
 * values are not all integers). */
static int add_each_call(struct diag_context *ctx, const char *where, struct kind_sum *sum,
			 struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *sql = prof_strfmt("SELECT s.value, r.start, r.end FROM " DIAG_API_CALLS " r"
				" JOIN " SUM_API_NAMES " s ON s.id = r.nameId"
				" WHERE r.start >= ?1 AND r.start < ?2 AND (%s)", where);
	int rc = sql ? diag__open_window(ctx, sql, DIAG_HOST_SIDE, &c, err) : nomem(err);

	free(sql);
	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1)
		rc = add(sum, prof_cursor__text(c, 0), 1,
			 prof_span_saturated(prof_cursor__int64(c, 1), prof_cursor__int64(c, 2)), err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The groups' name ids as a JSON array (sum_json_ids). */
static char *ids_json(const struct api_groups *g)
{
	int64_t *ids = malloc(sizeof *ids * (size_t)(g->by_name.n ? g->by_name.n : 1));
	char *json;

	if (!ids)
		return NULL;
	for (int i = 0; i < g->by_name.n; i++)
		ids[i] = g->by_name.v[i].id;
	json = sum_json_ids(ids, (size_t)g->by_name.n);
	free(ids);
	return json;
}

/* The groups of the kind's names, among the few the window's calls have:
 * one statement over their ids (bound as a JSON array), in the groups'
 * order, where a statement a group took 116 steps a rank of ddp2_even. */
static int add_groups(struct diag_context *ctx, const struct api_groups *g, const char *where,
		      struct kind_sum *sum, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *ids = ids_json(g);
	char *sql = prof_strfmt("SELECT j.key, s.value FROM json_each(?1) j JOIN " SUM_API_NAMES " s"
				" ON s.id = j.value WHERE (%s) ORDER BY j.key", where);
	int rc = sql && ids ? prof_cursor__open(ctx->store, sql, &c, err) : nomem(err);

	free(sql);
	if (rc == 0 && prof_cursor__bind_text(c, 1, ids))
		rc = nomem(err);
	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		/* the array's index: the group's */
		int64_t i = prof_cursor__int64(c, 0);

		rc = i >= 0 && i < g->by_name.n
			     ? add(sum, prof_cursor__text(c, 1), g->by_name.v[i].count, g->by_name.v[i].sum, err)
			     : 0;
	}
	prof_cursor__close(c);
	free(ids);
	return rc < 0 ? rc : 0;
}

int api_groups__tally(struct diag_context *ctx, const char *where, struct diag_tally *t, int64_t *count,
		      int64_t *time_ns, struct prof_error *err)
{
	struct kind_sum sum = { t, 0, 0 };
	const struct api_groups *g;
	int rc = 0;

	if (ctx->has_api_calls)
		rc = groups_of(ctx, &g, err);
	if (rc == 0 && ctx->has_api_calls)
		rc = g->odd ? add_each_call(ctx, where, &sum, err) : g->by_name.n ? add_groups(ctx, g, where, &sum, err) : 0;
	*count = sum.count;
	*time_ns = sum.time_ns;
	return rc;
}
