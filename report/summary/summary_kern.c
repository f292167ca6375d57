/* summary_kern.c - cuda_gpu_kern_sum: GPU time per kernel name, sorted by
 * total time; Time (%) is a share of summed kernel time. */
#include "summary_impl.h"

#include "prof/tables.h"

int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	int rc;

	if (!prof_store__has_table(s, PROF_T_KERNEL))
		return 0;
	/* Grouped by string id: names are interned, so equal names share an id. */
	rc = sum_groups__collect(gs, s,
				 "SELECT NULL AS l1, NULL AS l2, "
				 "coalesce(demangledName, shortName) AS k, end - start AS v, "
				 SUM_BAD_SPAN("") " AS bad FROM " PROF_T_KERNEL, err);
	if (rc >= 0)
		rc = sum_groups__label_from_strings(gs, s, err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	return rc;
}

int summary__cuda_gpu_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_groups gs = { 0 };
	int rc;

	rc = sum_kernel_groups(s, &gs, err);
	if (rc >= 0)
		rc = sum_groups__emit_time(&gs, sink, "cuda_gpu_kern_sum",
					   "CUDA GPU Kernel Summary", "Instances", NULL, "Name",
					   RPT_SYMBOL, 0, err);
	sum_groups__exit(&gs);
	return rc;
}
