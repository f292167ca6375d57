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

#include "analysis/core/kernel_name_sql.h"
#include "analysis/diagnose/context.h"
#include "analysis/ranks/nccl.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/tables.h"

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

/* The statements the groups stand in for, over the window [?1, ?2): the
 * rows of struct kernel_group, and of struct kernel_shape in its order. */
#define KERNEL_GROUPS_NAMES_SQL                                                                  \
	"SELECT " DIAG_KERNEL_NAME_SQL ", count(*), " SUM_TOTAL_SATURATED("k.end - k.start")       \
	" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.") \
	" GROUP BY " PROF_SQL_KERNEL_NAME_ID("k.") " ORDER BY 3 DESC"
#define KERNEL_GROUPS_SHAPES_SQL                                                                 \
	"SELECT " DIAG_KERNEL_NAME_SQL ", k.blockX * k.blockY * k.blockZ, k.registersPerThread,"   \
	" k.staticSharedMemory + k.dynamicSharedMemory, max(k.sharedMemoryExecuted),"             \
	" count(*), " SUM_TOTAL_SATURATED("k.end - k.start")                                      \
	" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.") \
	" AND (" NCCL_KERNEL_SQL("k") ") IS NOT 1"                                                \
	" GROUP BY " PROF_SQL_KERNEL_NAME_ID("k.") ", 2, 3, 4 ORDER BY 7 DESC"

/* The groups of ctx's window, longest first (ties as the GROUP BY
 * statements leave them), read at the first ask and kept in
 * ctx->kernel_groups. */
int kernel_groups__of(struct diag_context *ctx, const struct kernel_groups **out, struct prof_error *err);
void kernel_groups__free(struct kernel_groups *g);
/* The groups of ctx's window read now, as a piece made ahead
 * (diagnose/ahead.h) is: *out a struct kernel_groups, freed by
 * kernel_groups__free_made. */
int kernel_groups__make(struct diag_context *ctx, void **out, struct prof_error *err);
void kernel_groups__free_made(void *groups);

#endif
