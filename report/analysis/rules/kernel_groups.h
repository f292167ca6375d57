/* kernel_groups.h - the window's kernels grouped, the longest first, read
 * once for the run: by name, what the rules that judge kernels by their
 * names read (fp32_memory_bound's heuristic, tensor_cores_idle), and by
 * name and launch shape less NCCL's, what low_occupancy reads. Both come
 * of one unsorted pass over the window's kernels (kernel_groups.c): two
 * GROUP BY statements sorted every kernel (0.36 and 0.85 s a million
 * kernels). The run owns what it keeps (rules/rules.c). */
#ifndef REPORT_DIAG_KERNEL_GROUPS_H
#define REPORT_DIAG_KERNEL_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/diagnose/context.h"

struct kernel_group {
	char *name;       /* NULL: a name the query could not give */
	int64_t count;
	int64_t time_ns;  /* saturated total */
};

/* NCCL's kernels left out, as NCCL chooses their launch; each column as
 * SQL reads it (a NULL reads 0) */
struct kernel_shape {
	char *name;          /* "?" where StringIds has none */
	int64_t threads_per_block, registers_per_thread;
	int64_t shared_bytes;        /* static + dynamic */
	int64_t shared_config_bytes; /* the largest sharedMemoryExecuted */
	int64_t count, time_ns;
};

struct kernel_groups {
	int64_t from, to; /* the window read */
	struct kernel_group *v;
	int n;
	struct kernel_shape *shapes;
	int nshapes;
};

/* The groups of ctx's window, longest first (ties as the GROUP BY
 * statements leave them), read at the first ask and kept in
 * ctx->kernel_groups. */
int kernel_groups__of(struct diag_context *ctx, const struct kernel_groups **out, struct prof_error *err);
void kernel_groups__free(struct kernel_groups *g);

#endif
