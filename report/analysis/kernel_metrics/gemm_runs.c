/* gemm_runs.c - classifying runs of the same GEMM (see gemm_runs.h). */
#include "gemm_runs.h"

#include <stdlib.h>

enum gemm_run_kind gemm_run__classify(const struct gemm_run *r)
{
	if (r->streams >= 2)
		return GEMM_RUN_INDEPENDENT;
	/* mostly GEMM, other kernels, GEMM: the layers of a stack */
	if (r->interleaved > r->adjacent)
		return GEMM_RUN_CHAIN;
	return GEMM_RUN_UNKNOWN;
}

static int cmp_int64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int by_gemm_then_start(const void *pa, const void *pb)
{
	const struct gemm_run *a = pa, *b = pb;
	int c;

	if ((c = cmp_int64(a->device, b->device)) || (c = cmp_int64(a->name_id, b->name_id)) ||
	    (c = cmp_int64(a->grid, b->grid)) || (c = cmp_int64(a->block, b->block)))
		return c;
	return cmp_int64(a->start_ns, b->start_ns);
}

static bool same_gemm(const struct gemm_run *a, const struct gemm_run *b)
{
	return a->device == b->device && a->name_id == b->name_id && a->grid == b->grid && a->block == b->block;
}

int gemm_runs__group(struct gemm_run *runs, int n)
{
	int out = 0;

	if (n > 1)
		qsort(runs, (size_t)n, sizeof *runs, by_gemm_then_start);
	for (int i = 0; i < n;) {
		struct gemm_run g = runs[i];
		int j = i + 1;

		g.streams = 1;
		for (; j < n && same_gemm(&runs[j], &g) && runs[j].start_ns < g.end_ns; j++) {
			bool seen = false;

			for (int k = i; k < j && !seen; k++)
				seen = runs[k].stream == runs[j].stream;
			g.streams += !seen;
			g.launches += runs[j].launches;
			g.kernel_ns += runs[j].kernel_ns;
			g.adjacent += runs[j].adjacent;
			g.interleaved += runs[j].interleaved;
			g.others += runs[j].others;
			if (runs[j].end_ns > g.end_ns)
				g.end_ns = runs[j].end_ns;
		}
		runs[out++] = g;
		i = j;
	}
	return out;
}
