/* kernel_groups.c - the groups of cuda_gpu_kern_sum: GPU time per kernel
 * name, sorted by total time, whole or as runs (groups.h). */
#include "model/groups.h"
#include "model/rows.h"
#include "model/sql.h"

#include <stdlib.h>

#include "prof/tables.h"

/* Grouped by string id: names are interned, so equal names share an id. */
#define KERNELS "SELECT NULL AS l1, NULL AS l2, " PROF_SQL_KERNEL_NAME_ID("") " AS k, " \
		"end - start AS v, " SUM_BAD_SPAN("") " AS bad FROM " PROF_T_KERNEL

int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	int rc;

	rc = sum_groups__collect(gs, s, KERNELS, err);
	if (rc >= 0)
		rc = sum_groups__label_from_strings(gs, s, err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	return rc;
}

/* The runs of each kernel id, passed on under the kernel's name. */
struct named_runs {
	struct sum_runs_walk *w;
	struct prof_store *s;
	struct prof_error *err;
	int64_t key;      /* the id whose name is held */
	bool have;
	char *name;
};

static int name_run(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
		    struct sum_run run)
{
	struct named_runs *n = ctx;
	int rc;

	(void)l1;
	(void)l2;
	if (!key_is_null && (!n->have || key != n->key)) {
		free(n->name);
		rc = sum_string(n->s, key, &n->name, n->err);
		if (rc < 0)
			return rc;
		n->key = key;
		n->have = true;
	}
	return n->w->run(n->w->ctx, key_is_null ? NULL : n->name, NULL, key_is_null, 0, run);
}

int sum_kernel_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err)
{
	struct named_runs n = { .w = w, .s = s, .err = err };
	struct sum_runs_walk inner = { .run = name_run, .ctx = &n };
	int rc;

	rc = sum_groups__runs(s, KERNELS, &inner, err);
	w->rows_left_out += inner.rows_left_out;
	free(n.name);
	return rc;
}

int sum_kernel_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink,
			    struct prof_error *err)
{
	return sum_groups__emit_time(gs, sink, "cuda_gpu_kern_sum", "CUDA GPU Kernel Summary",
				     "Instances", NULL, "Name", RPT_SYMBOL, 0, err);
}
