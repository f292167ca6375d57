/* summary_kern.c - cuda_gpu_kern_sum: GPU time per kernel name, sorted by
 * total time; Time (%) is a share of summed kernel time. */
#include "summary_impl.h"

int summary__cuda_gpu_kern_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_groups gs = { 0 };
	int rc;

	rc = sum_kernel_groups(s, &gs, err);
	if (rc >= 0)
		rc = sum_kernel_groups__emit(&gs, sink, err);
	sum_groups__exit(&gs);
	return rc;
}
