/* kernel_groups.h - the window's kernels grouped by name, the longest
 * first: what the rules that judge kernels by their names read
 * (fp32_memory_bound's heuristic, tensor_cores_idle), read once for the
 * run. Each reading groups every kernel of the window (0.36 s a million
 * kernels); the run owns what it keeps (rules/rules.c). */
#ifndef REPORT_DIAG_KERNEL_GROUPS_H
#define REPORT_DIAG_KERNEL_GROUPS_H

#include <stdint.h>

#include "analysis/diagnose/context.h"

struct kernel_group {
	char *name;       /* NULL: a name the query could not give */
	int64_t count;
	int64_t time_ns;  /* saturated total */
};

struct kernel_groups {
	int64_t from, to; /* the window read */
	struct kernel_group *v;
	int n;
};

/* The groups of ctx's window, longest first (ties as SQLite's sort leaves
 * them), read at the first ask and kept in ctx->kernel_groups. */
int kernel_groups__of(struct diag_context *ctx, const struct kernel_groups **out, struct prof_error *err);
void kernel_groups__free(struct kernel_groups *g);

#endif
