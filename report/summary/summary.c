/* summary.c - the summary reports this folder defines, as the tables the
 * registry (registry/registry.c) lists by name. */
#include "summary.h"

#include <string.h>

#include "model/call_census.h"

static const struct rpt_report reports[] = {
	{ "cuda_api_sum", "CUDA API Summary", summary__cuda_api_sum },
	{ "cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", summary__cuda_gpu_kern_sum },
	{ "cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)",
	  summary__cuda_gpu_mem_time_sum },
	{ "cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)",
	  summary__cuda_gpu_mem_size_sum },
	{ "cuda_gpu_trace", "CUDA GPU Trace", summary__cuda_gpu_trace },
	{ "nvtx_sum", "NVTX Range Summary", summary__nvtx_sum },
	{ "nvtx_kern_sum", "NVTX Range Kernel Summary", summary__nvtx_kern_sum },
	{ "module_sum", "nn.Module Summary", summary__module_sum },
	{ "python_sum", "Python Line Summary", summary__python_sum },
};

/* Listed after every folder's reports. */
static const struct rpt_report overview[] = {
	{ "overview", "Overview", summary__overview },
};

const struct rpt_report *summary__reports(size_t *n)
{
	*n = sizeof reports / sizeof reports[0];
	return reports;
}

const struct rpt_report *summary__overview_reports(size_t *n)
{
	*n = sizeof overview / sizeof overview[0];
	return overview;
}

void summary__expect(struct prof_store *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], "cuda_api_sum"))
			sum_call_census__want(s, CALL_CENSUS_RUNS);
}
