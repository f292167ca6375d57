/* rules_context.h - a diagnosis's context over a fixture for the tests of
 * what its rules read (diag_context__init_scope: the window, the busy
 * union and the table of calls, no findings), and its close, which frees
 * what the rules kept in it (the idle attribution, the calls by name). */
#ifndef PERFKIT_TEST_RULES_CONTEXT_H
#define PERFKIT_TEST_RULES_CONTEXT_H

#include <check.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/api_groups.h"
#include "analysis/timeline/gpu_idle.h"
#include "prof/store.h"

/* path's context; its calls must be there. */
static inline void rules_context__open(const char *path, struct prof_store **s, struct diag_settings *settings,
				       struct diag_context *ctx)
{
	struct prof_error err = { 0 };

	memset(ctx, 0, sizeof *ctx);
	ck_assert_msg(prof_store__open(path, s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(settings), 0);
	ck_assert_msg(diag_context__init_scope(ctx, *s, settings, &err) == 0, "%s: %s", path, err.msg);
	ck_assert_msg(ctx->has_api_calls, "%s has no calls", path);
}

static inline void rules_context__close(struct prof_store *s, struct diag_settings *settings,
					struct diag_context *ctx)
{
	gpu_idle_result__delete(ctx->idle);
	ctx->idle = NULL;
	api_groups__free(ctx->api_groups);
	ctx->api_groups = NULL;
	diag_context__exit(ctx);
	diag_settings__exit(settings);
	prof_store__close(s);
}

#endif
