/* summary.c - the summary reports by name, for `perfkit report --report=`
 * and for other commands that reuse a report's rows. */
#include "summary.h"

#include <string.h>

struct summary_entry {
	const char *name;
	const char *title;
	int (*fn)(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
};

static const struct summary_entry entries[] = {
	{ "cuda_api_sum", "CUDA API Summary", summary__cuda_api_sum },
	{ "cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", summary__cuda_gpu_kern_sum },
	{ "cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)",
	  summary__cuda_gpu_mem_time_sum },
	{ "cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)",
	  summary__cuda_gpu_mem_size_sum },
	{ "cuda_gpu_trace", "CUDA GPU Trace", summary__cuda_gpu_trace },
	{ "nvtx_sum", "NVTX Range Summary", summary__nvtx_sum },
	{ "nvtx_kern_sum", "NVTX Range Kernel Summary", summary__nvtx_kern_sum },
	{ "gpu_idle_sum", "GPU Idle Time by Cause", summary__gpu_idle_sum },
	{ "critical_path", "Critical Path of the Median Step", summary__critical_path },
	{ "rank_sum", "Ranks: Steps and Time", summary__rank_sum },
	{ "nccl_sum", "NCCL Collectives by Kind and Message Size", summary__nccl_sum },
	{ "gpu_metrics_sum", "Sampled GPU Metrics by Kernel and NVTX Range", summary__gpu_metrics_sum },
	{ "overview", "Overview", summary__overview },
};

#define NENTRIES (sizeof entries / sizeof entries[0])

static const char *const names[NENTRIES] = {
	"cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
	"cuda_gpu_trace", "nvtx_sum", "nvtx_kern_sum", "gpu_idle_sum", "critical_path", "rank_sum",
	"nccl_sum", "gpu_metrics_sum", "overview",
};

static const struct summary_entry *find(const char *name)
{
	for (size_t i = 0; name && i < NENTRIES; i++)
		if (strcmp(entries[i].name, name) == 0)
			return &entries[i];
	return NULL;
}

int summary__run(const char *name, struct prof_store *s, struct rpt_sink *sink,
		 struct prof_error *err)
{
	const struct summary_entry *e = find(name);

	if (!e)
		return prof_error__set(err, PROF_E_USAGE, "unknown report '%s'", name ? name : "");
	return e->fn(s, sink, err);
}

const char *const *summary__names(size_t *n)
{
	*n = NENTRIES;
	return names;
}

const char *summary__title(const char *name)
{
	const struct summary_entry *e = find(name);

	return e ? e->title : NULL;
}
