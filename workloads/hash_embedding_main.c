/* hash_embedding_main.c - the hash embedding workload (seed 000): per batch,
 * move the rows to the GPU, hash them into per-plot buckets and look up 8
 * embedding tables.
 *
 * naive:     the data loader's separate pageable arrays, copied one by one
 *            with blocking cudaMemcpy (11 copies), one lookup launch per table.
 * optimized: the batch collated into one pinned buffer, one async copy on a
 *            second stream that prefetches batch i+1 while batch i computes
 *            (two device buffers, events between the streams), one fused
 *            lookup launch for all tables.
 * Batches are produced before timing in both layouts, so the data loader's
 * own cost is outside both measurements alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "copy_bandwidth.h"
#include "hash_embedding.h"
#include "hash_embedding_ref.h"
#include "wl_common.h"

#define PROG "hash_embedding"
#define RING 3                 /* distinct batches cycled through */
#define TOLERANCE 1e-5         /* relative L2 error, float vs double */
#define WARMUP 3
#define TIMING_REPS 20

/* A CUDA failure leaves nothing to measure: report it and stop. */
#define CK(call)                                                                     \
	do {                                                                         \
		cudaError_t e_ = (call);                                             \
		if (e_ != cudaSuccess) {                                             \
			fprintf(stderr, "perfkit: " PROG ": %s failed: %s\n", #call, \
				cudaGetErrorString(e_));                             \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

struct ring_batch {
	struct he_batch b;         /* pageable, one array per field */
	struct he_layout lay;
	void *pinned;              /* the same batch collated, pinned */
};

struct pipeline {
	enum he_kernel kernel;
	struct ring_batch ring[RING];
	void *in[2];               /* device input buffers, collated layout */
	float *tables, *hashed, *out;
	cudaStream_t copy_s, comp_s;
	cudaEvent_t copied[2], consumed[2];
};

static int parse_kernel(const char *name, int rows, enum he_kernel *k)
{
	if (strcmp(name, "auto") == 0)
		name = he_auto_kernel(rows);
	if (strcmp(name, "basic") == 0)
		*k = HE_KERNEL_BASIC;
	else if (strcmp(name, "shared") == 0)
		*k = HE_KERNEL_SHARED;
	else if (strcmp(name, "chunked") == 0)
		*k = HE_KERNEL_CHUNKED;
	else
		return -1;
	return 0;
}

static const char *kernel_name(enum he_kernel k)
{
	return k == HE_KERNEL_SHARED ? "shared" : k == HE_KERNEL_CHUNKED ? "chunked" : "basic";
}

static void dev_fields(const struct he_layout *lay, void *in, const uint32_t **keys,
		       const float **weights, const uint32_t **plot, const uint32_t **ids)
{
	char *base = in;

	*keys = (const uint32_t *)(base + lay->keys);
	*weights = (const float *)(base + lay->weights);
	*plot = (const uint32_t *)(base + lay->plot);
	*ids = (const uint32_t *)(base + lay->ids);
}

static void pipeline__init(struct pipeline *pl, int rows, enum he_kernel kernel, uint64_t seed)
{
	size_t in_bytes = 0, tables_bytes;
	int max_plots = 0;
	float *tables;

	memset(pl, 0, sizeof(*pl));
	pl->kernel = kernel;
	for (int r = 0; r < RING; r++) {
		struct ring_batch *rb = &pl->ring[r];

		if (he_batch__new(&rb->b, rows, seed * 1000003u + (uint64_t)r)) {
			fprintf(stderr, "perfkit: " PROG ": out of memory for %d rows\n", rows);
			exit(2);
		}
		he_layout__init(&rb->lay, rb->b.rows, rb->b.plots);
		CK(cudaHostAlloc(&rb->pinned, rb->lay.total_bytes, cudaHostAllocDefault));
		he_batch__collate(&rb->b, &rb->lay, rb->pinned);
		if (rb->lay.total_bytes > in_bytes)
			in_bytes = rb->lay.total_bytes;
		if (rb->b.plots > max_plots)
			max_plots = rb->b.plots;
	}
	for (int s = 0; s < 2; s++)
		CK(cudaMalloc(&pl->in[s], in_bytes));
	tables_bytes = (size_t)he_total_vocab() * HE_EMB_DIM * sizeof(float);
	tables = malloc(tables_bytes);
	if (!tables) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	he_tables_init(tables, seed ^ 0x7ab1e5u);
	CK(cudaMalloc((void **)&pl->tables, tables_bytes));
	CK(cudaMemcpy(pl->tables, tables, tables_bytes, cudaMemcpyHostToDevice));
	free(tables);
	CK(cudaMalloc((void **)&pl->hashed, (size_t)max_plots * HE_HASH_DIM * sizeof(float)));
	CK(cudaMalloc((void **)&pl->out,
		      (size_t)max_plots * HE_TABLES * HE_EMB_DIM * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&pl->copy_s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&pl->comp_s, cudaStreamNonBlocking));
	for (int s = 0; s < 2; s++) {
		CK(cudaEventCreateWithFlags(&pl->copied[s], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&pl->consumed[s], cudaEventDisableTiming));
	}
}

static void pipeline__exit(struct pipeline *pl)
{
	for (int r = 0; r < RING; r++) {
		cudaFreeHost(pl->ring[r].pinned);
		he_batch__delete(&pl->ring[r].b);
	}
	for (int s = 0; s < 2; s++) {
		cudaFree(pl->in[s]);
		cudaEventDestroy(pl->copied[s]);
		cudaEventDestroy(pl->consumed[s]);
	}
	cudaFree(pl->tables);
	cudaFree(pl->hashed);
	cudaFree(pl->out);
	cudaStreamDestroy(pl->copy_s);
	cudaStreamDestroy(pl->comp_s);
}

/* Batches first .. first+n-1 the naive way. Everything runs on the legacy
 * default stream, and each pageable cudaMemcpy blocks the host until the copy
 * (and all work before it) is done. */
static void run_naive(struct pipeline *pl, int first, int n)
{
	for (int i = first; i < first + n; i++) {
		const struct ring_batch *rb = &pl->ring[i % RING];
		const struct he_batch *b = &rb->b;
		char *in = pl->in[0];
		const uint32_t *keys, *plot, *ids;
		const float *weights;

		dev_fields(&rb->lay, in, &keys, &weights, &plot, &ids);
		nvtxRangePushA("step");
		nvtxRangePushA("load/transfer");
		CK(cudaMemcpy(in + rb->lay.keys, b->keys, (size_t)b->rows * 4, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(in + rb->lay.weights, b->weights, (size_t)b->rows * 4,
			      cudaMemcpyHostToDevice));
		CK(cudaMemcpy(in + rb->lay.plot, b->plot, (size_t)b->rows * 4, cudaMemcpyHostToDevice));
		for (int t = 0; t < HE_TABLES; t++)
			CK(cudaMemcpy(in + rb->lay.ids + (size_t)t * b->plots * 4,
				      b->ids + (size_t)t * b->plots, (size_t)b->plots * 4,
				      cudaMemcpyHostToDevice));
		nvtxRangePop();
		nvtxRangePushA("hash");
		CK(cudaMemset(pl->hashed, 0, (size_t)b->plots * HE_HASH_DIM * sizeof(float)));
		CK(he_launch_hash(pl->kernel, keys, weights, plot, b->rows, pl->hashed, 0));
		nvtxRangePop();
		nvtxRangePushA("lookup");
		for (int t = 0; t < HE_TABLES; t++)
			CK(he_launch_lookup_one(t, ids + (size_t)t * b->plots, pl->tables, b->plots,
						pl->out, 0));
		nvtxRangePop();
		CK(cudaDeviceSynchronize());
		nvtxRangePop();
	}
}

static void enqueue_copy(struct pipeline *pl, int i)
{
	const struct ring_batch *rb = &pl->ring[i % RING];
	int slot = i & 1;

	/* The buffer is free once the compute of batch i-2 has read it. */
	CK(cudaStreamWaitEvent(pl->copy_s, pl->consumed[slot], 0));
	CK(cudaMemcpyAsync(pl->in[slot], rb->pinned, rb->lay.total_bytes, cudaMemcpyHostToDevice,
			   pl->copy_s));
	CK(cudaEventRecord(pl->copied[slot], pl->copy_s));
}

/* Batches first .. first+n-1 the optimized way: the copy of batch i+1 is in
 * flight on copy_s while batch i computes on comp_s. */
static void run_optimized(struct pipeline *pl, int first, int n)
{
	enqueue_copy(pl, first);
	for (int i = first; i < first + n; i++) {
		const struct ring_batch *rb = &pl->ring[i % RING];
		int slot = i & 1;
		const uint32_t *keys, *plot, *ids;
		const float *weights;

		dev_fields(&rb->lay, pl->in[slot], &keys, &weights, &plot, &ids);
		nvtxRangePushA("step");
		nvtxRangePushA("load/transfer");
		if (i + 1 < first + n)
			enqueue_copy(pl, i + 1);
		CK(cudaStreamWaitEvent(pl->comp_s, pl->copied[slot], 0));
		nvtxRangePop();
		nvtxRangePushA("hash");
		CK(cudaMemsetAsync(pl->hashed, 0, (size_t)rb->b.plots * HE_HASH_DIM * sizeof(float),
				   pl->comp_s));
		CK(he_launch_hash(pl->kernel, keys, weights, plot, rb->b.rows, pl->hashed,
				  pl->comp_s));
		nvtxRangePop();
		nvtxRangePushA("lookup");
		CK(he_launch_lookup_fused(ids, pl->tables, rb->b.plots, pl->out, pl->comp_s));
		nvtxRangePop();
		CK(cudaEventRecord(pl->consumed[slot], pl->comp_s));
		nvtxRangePop();
	}
	CK(cudaStreamSynchronize(pl->comp_s));
}

static double rel_l2_float(const float *gpu, const double *ref, size_t n)
{
	double *g = malloc(n * sizeof(*g));
	double err;

	if (!g) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		g[i] = gpu[i];
	err = wl_rel_l2(g, ref, n);
	free(g);
	return err;
}

/* Compare device hashed/out of batch `rb` with the double reference; returns
 * the larger relative error (NaN when anything was left unwritten). */
static double compare(const struct pipeline *pl, const struct ring_batch *rb, bool lookups)
{
	const struct he_batch *b = &rb->b;
	size_t nh = (size_t)b->plots * HE_HASH_DIM, no = (size_t)b->plots * HE_TABLES * HE_EMB_DIM;
	float *gh = malloc(nh * sizeof(float)), *go = NULL, *tables = NULL;
	double *rh = malloc(nh * sizeof(double)), *ro = NULL;
	double err, e2;

	if (lookups) {
		go = malloc(no * sizeof(float));
		ro = malloc(no * sizeof(double));
		tables = malloc((size_t)he_total_vocab() * HE_EMB_DIM * sizeof(float));
	}
	if (!gh || !rh || (lookups && (!go || !ro || !tables))) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	CK(cudaMemcpy(gh, pl->hashed, nh * sizeof(float), cudaMemcpyDeviceToHost));
	he_hash_ref(b, rh);
	err = rel_l2_float(gh, rh, nh);
	if (lookups) {
		CK(cudaMemcpy(go, pl->out, no * sizeof(float), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(tables, pl->tables, (size_t)he_total_vocab() * HE_EMB_DIM * sizeof(float),
			      cudaMemcpyDeviceToHost));
		he_lookup_ref(b, tables, ro);
		e2 = rel_l2_float(go, ro, no);
		err = isnan(e2) || e2 > err ? e2 : err;
	}
	free(gh);
	free(go);
	free(rh);
	free(ro);
	free(tables);
	return err;
}

/* Check one variant on batch 1, outputs poisoned with NaN first, and each
 * hash kernel on the same device data. */
static double check_variant(struct pipeline *pl, bool optimized)
{
	const struct ring_batch *rb = &pl->ring[1];
	size_t no = (size_t)rb->b.plots * HE_TABLES * HE_EMB_DIM * sizeof(float);
	const uint32_t *keys, *plot, *ids;
	const float *weights;
	double err, e;

	CK(cudaDeviceSynchronize());
	CK(cudaMemset(pl->out, 0xff, no));
	CK(cudaMemset(pl->hashed, 0xff, (size_t)rb->b.plots * HE_HASH_DIM * sizeof(float)));
	if (optimized)
		run_optimized(pl, 1, 1);
	else
		run_naive(pl, 1, 1);
	err = compare(pl, rb, true);
	/* run_naive leaves batch 1 in in[0]; run_optimized starting at 1 in in[1]. */
	dev_fields(&rb->lay, pl->in[optimized ? 1 : 0], &keys, &weights, &plot, &ids);
	for (int k = HE_KERNEL_BASIC; k <= HE_KERNEL_CHUNKED; k++) {
		CK(cudaMemset(pl->hashed, 0, (size_t)rb->b.plots * HE_HASH_DIM * sizeof(float)));
		CK(he_launch_hash((enum he_kernel)k, keys, weights, plot, rb->b.rows, pl->hashed, 0));
		CK(cudaDeviceSynchronize());
		e = compare(pl, rb, false);
		if (isnan(e) || e > err)
			err = e;
	}
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median device time of one kernel launch sequence (ms), by events. */
static double time_hash_ms(const struct pipeline *pl, const struct ring_batch *rb, void *in,
			   enum he_kernel k)
{
	const uint32_t *keys, *plot, *ids;
	const float *weights;
	cudaEvent_t e0, e1;
	double t[TIMING_REPS];

	dev_fields(&rb->lay, in, &keys, &weights, &plot, &ids);
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int r = -WARMUP; r < TIMING_REPS; r++) {
		float ms;

		CK(cudaEventRecord(e0, 0));
		CK(cudaMemsetAsync(pl->hashed, 0, (size_t)rb->b.plots * HE_HASH_DIM * sizeof(float), 0));
		CK(he_launch_hash(k, keys, weights, plot, rb->b.rows, pl->hashed, 0));
		CK(cudaEventRecord(e1, 0));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			t[r] = ms;
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	return median(t, TIMING_REPS);
}

static double time_lookup_ms(const struct pipeline *pl, const struct ring_batch *rb, void *in)
{
	const uint32_t *keys, *plot, *ids;
	const float *weights;
	cudaEvent_t e0, e1;
	double t[TIMING_REPS];

	dev_fields(&rb->lay, in, &keys, &weights, &plot, &ids);
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int r = -WARMUP; r < TIMING_REPS; r++) {
		float ms;

		CK(cudaEventRecord(e0, 0));
		CK(he_launch_lookup_fused(ids, pl->tables, rb->b.plots, pl->out, 0));
		CK(cudaEventRecord(e1, 0));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			t[r] = ms;
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	return median(t, TIMING_REPS);
}

/* The seed's table: CPU hashing against each GPU hash kernel (zeroing the
 * output included) at 10K, 100K and 1M rows. */
static int cpu_table(const struct wl_common *c)
{
	static const int sizes[] = { 10000, 100000, 1000000 };
	int failed = 0;

	printf("\nCPU vs GPU feature hashing (GPU: memset + kernel, median of %d; CPU: one thread)\n",
	       TIMING_REPS);
	printf("%-10s %10s %10s %10s %10s %8s %10s %9s\n", "rows", "cpu ms", "basic ms", "shared ms",
	       "chunked ms", "auto", "auto ms", "speedup");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct pipeline pl;
		const struct ring_batch *rb;
		double cpu[5], g[3], cpu_ms;
		enum he_kernel autok;
		float *h;

		parse_kernel("auto", sizes[s], &autok);
		pipeline__init(&pl, sizes[s], autok, c->seed);
		rb = &pl.ring[0];
		CK(cudaMemcpy(pl.in[0], rb->pinned, rb->lay.total_bytes, cudaMemcpyHostToDevice));
		h = malloc((size_t)rb->b.plots * HE_HASH_DIM * sizeof(float));
		if (!h) {
			fprintf(stderr, "perfkit: " PROG ": out of memory\n");
			exit(2);
		}
		for (int r = 0; r < 5; r++) {
			double t0 = wl_now_ms();

			he_hash_cpu(&rb->b, h);
			cpu[r] = wl_now_ms() - t0;
		}
		cpu_ms = median(cpu, 5);
		free(h);
		for (int k = HE_KERNEL_BASIC; k <= HE_KERNEL_CHUNKED; k++) {
			g[k] = time_hash_ms(&pl, rb, pl.in[0], (enum he_kernel)k);
			if (c->check) {
				double e = compare(&pl, rb, false);

				if (!(e <= TOLERANCE)) {
					fprintf(stderr, "perfkit: " PROG ": %s kernel at %d rows: error %.3g > %.0e\n",
						kernel_name((enum he_kernel)k), sizes[s], e, TOLERANCE);
					failed = 1;
				}
			}
		}
		printf("%-10d %10.4f %10.4f %10.4f %10.4f %8s %10.4f %8.0fx\n", sizes[s], cpu_ms, g[0],
		       g[1], g[2], kernel_name(autok), g[autok], cpu_ms / g[autok]);
		pipeline__exit(&pl);
	}
	return failed;
}

static struct wl_result run_variant(struct pipeline *pl, const struct wl_common *c, bool optimized,
				    const char *size)
{
	struct wl_result r = { .workload = PROG, .variant = optimized ? "optimized" : "naive",
			       .size = size, .unit = "rows/s" };
	double t0, ms;

	if (optimized)
		run_optimized(pl, 0, WARMUP);
	else
		run_naive(pl, 0, WARMUP);
	CK(cudaDeviceSynchronize());
	t0 = wl_now_ms();
	if (optimized)
		run_optimized(pl, 0, c->iters);
	else
		run_naive(pl, 0, c->iters);
	CK(cudaDeviceSynchronize());
	ms = (wl_now_ms() - t0) / c->iters;
	r.step_ms = ms;
	r.throughput = pl->ring[0].b.rows / (ms * 1e-3);
	if (c->check) {
		r.checked = true;
		r.check_error = check_variant(pl, optimized);
		r.check_ok = r.check_error <= TOLERANCE;
	}
	return r;
}

int main(int argc, char **argv)
{
	struct wl_common c = { .variant = WL_BOTH, .iters = 50, .seed = 1 };
	int rows = 1000000;
	const char *kernel_opt = "auto";
	bool want_cpu_table = false;
	struct wl_option extra[] = {
		{ "rows", "rows per batch: N, or with K/M (default 1M)", wl_parse_count, &rows },
		{ "kernel", "hash kernel: basic|shared|chunked|auto (default auto)", wl_parse_string,
		  &kernel_opt },
		{ "cpu-table", "print CPU vs GPU hashing at 10K, 100K, 1M rows", wl_parse_flag,
		  &want_cpu_table },
	};
	struct wl_result res[2];
	struct cudaDeviceProp prop;
	struct pipeline pl;
	enum he_kernel kernel;
	char size[32];
	int n = 0, rc, status = 0;
	double dtod, lookup_ms, lookup_bytes;

	rc = wl_parse_args(PROG, argc, argv, &c, extra, 3);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (parse_kernel(kernel_opt, rows, &kernel)) {
		fprintf(stderr, "perfkit: " PROG ": unknown kernel (basic, shared, chunked, auto)\n");
		return 2;
	}
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("%s on %s: rows=%d, hash kernel %s%s, %d iterations\n", PROG, prop.name, rows,
	       kernel_name(kernel), strcmp(kernel_opt, "auto") == 0 ? " (auto)" : "", c.iters);
	CK(copy_bandwidth_gbs(0, &dtod));

	pipeline__init(&pl, rows, kernel, c.seed);
	snprintf(size, sizeof(size), "rows=%d", rows);
	if (c.variant & WL_NAIVE)
		res[n++] = run_variant(&pl, &c, false, size);
	if (c.variant & WL_OPTIMIZED)
		res[n++] = run_variant(&pl, &c, true, size);

	/* The fused lookup moves the bulk of the bytes: ids read, output
	 * written, tables read once (they stay in L2 after that). */
	CK(cudaMemcpy(pl.in[0], pl.ring[0].pinned, pl.ring[0].lay.total_bytes,
		      cudaMemcpyHostToDevice));
	lookup_ms = time_lookup_ms(&pl, &pl.ring[0], pl.in[0]);
	lookup_bytes = (double)pl.ring[0].b.plots * HE_TABLES * 4.0 +
		       (double)pl.ring[0].b.plots * HE_TABLES * HE_EMB_DIM * 4.0 +
		       (double)he_total_vocab() * HE_EMB_DIM * 4.0;
	printf("device-to-device copy: %.0f GB/s (read + write)\n", dtod);
	printf("lookup_fused: %.4f ms, %.0f GB/s = %.0f%% of the device-to-device copy\n", lookup_ms,
	       lookup_bytes / (lookup_ms * 1e-3) / 1e9,
	       100.0 * lookup_bytes / (lookup_ms * 1e-3) / 1e9 / dtod);
	pipeline__exit(&pl);

	if (want_cpu_table && cpu_table(&c))
		status = 1;
	for (int i = 0; i < n; i++) {
		if (res[i].checked && !res[i].check_ok) {
			fprintf(stderr, "perfkit: " PROG ": %s check failed: error %.3g > %.0e\n",
				res[i].variant, res[i].check_error, TOLERANCE);
			status = 1;
		}
		if (c.json)
			wl_print_json(stdout, &res[i]);
	}
	if (c.check)
		printf("check: relative L2 error vs double CPU reference, tolerance %.0e\n", TOLERANCE);
	printf("\n");
	wl_print_table(stdout, res, n);
	return status;
}
