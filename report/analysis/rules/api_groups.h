/* api_groups.h - the window's CUDA calls counted by name once for the
 * rules that weigh the calls of a kind (sync_memset, sync_api,
 * alloc_churn, launch_bound's API time). Each read every call of the
 * window again, joined to its name, 0.17 to 0.24 s a pass at 2.2M calls
 * on the diagnosis's own thread; one pass counts each name id's calls
 * (api_groups.c), as a piece made ahead (diagnose/ahead.h), and a rule
 * then asks which of the few names are of its kind. The run owns what
 * it keeps (rules/rules.c). */
#ifndef REPORT_DIAG_API_GROUPS_H
#define REPORT_DIAG_API_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/id_groups.h"
#include "analysis/diagnose/context.h"
#include "analysis/timeline/gpu_idle.h"

struct api_groups {
	int64_t from, to; /* the window read: its start and the host's end */
	/* by name id: each name's calls, sum their spans (saturated) */
	struct id_groups by_name;
	/* a value of the calls that is no integer (a foreign file): the
	 * groups are empty and each kind is read by its own statement */
	bool odd;
};

struct diag_tally;

/* The calls of ctx's window whose name, as SUM_API_NAMES shows it (s.value),
 * matches where (an SQL condition over s.value, a constant of the
 * caller's): *count of them taking *time_ns (a saturated sum), and by
 * name into t (count and time_ns added; NULL: none). The groups are read
 * at the first ask and kept in ctx->api_groups (made ahead where a thread
 * made them). */
int api_groups__tally(struct diag_context *ctx, const char *where, struct diag_tally *t, int64_t *count,
		      int64_t *time_ns, struct prof_error *err);
void api_groups__free(struct api_groups *g);
/* ctx's idle attribution (gpu_idle__of), whose pass counts the window's
 * calls by name as it reads them (window_calls.h): the thread ahead
 * leaves the groups, which would read every call of the window again. */
int api_groups__idle_of(struct diag_context *ctx, const struct gpu_idle_result **out, struct prof_error *err);
/* The groups of ctx's window read now, as a piece made ahead is: *out a
 * struct api_groups, freed by api_groups__free_made. */
int api_groups__make(struct diag_context *ctx, void **out, struct prof_error *err);
void api_groups__free_made(void *groups);

#endif
