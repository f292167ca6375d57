/* rollout_main.c - the stochastic operator rollout of seed 001 on the GPU.
 *
 * Naive: FP32, one kernel per stage (conv, statistics, normalise, GELU,
 * noise), each writing its intermediate to device memory, and the
 * temporaries allocated and freed in every timestep. Optimized: FP16 (or
 * BF16/FP32, --precision) storage with two fused kernels per timestep
 * (conv + norm statistics on the tensor cores, then normalise + GELU +
 * noise) and buffers allocated once. Reports time per timestep, the speedup
 * over the naive FP32 run, and the error of each precision against the FP32
 * result, as the seed did. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "copy_bandwidth.h"
#include "rollout.h"
#include "rollout_ref.h"
#include "wl_common.h"

#define NPREC 3
#define CHECK_REALIZATIONS 2
#define CHECK_TIMESTEPS 4

static const char *const prec_names[NPREC] = { "fp32", "fp16", "bf16" };
/* Relative L2 tolerance of the --check run against the double reference
 * (CHECK_TIMESTEPS steps): FP32 arithmetic, then one rounding of 2^-11
 * (FP16) or 2^-8 (BF16) per stored value and step, with margin. */
static const double check_tol[NPREC] = { 1e-4, 1e-2, 6e-2 };

struct rollout_opts {
	struct wl_common common;
	int timesteps, realizations, channels;
	const char *precision;
};

/* Device buffers of one problem size, allocated once (the naive pipeline's
 * per-step temporaries are not here: it allocates them in every step). */
struct rollout_gpu {
	int R, C;
	size_t n;
	cudaStream_t s;
	float *x0, *w32, *x, *tmp;
	void *xs, *ys, *ws;
	float *partial, *stats;
	unsigned *counters;
};

static int cuda_ok(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "perfkit: rollout: %s: %s\n", what, cudaGetErrorString(e));
	return -1;
}

static void gpu__exit(struct rollout_gpu *g)
{
	cudaFree(g->x0);
	cudaFree(g->w32);
	cudaFree(g->x);
	cudaFree(g->tmp);
	cudaFree(g->xs);
	cudaFree(g->ys);
	cudaFree(g->ws);
	cudaFree(g->partial);
	cudaFree(g->stats);
	cudaFree(g->counters);
	if (g->s)
		cudaStreamDestroy(g->s);
	memset(g, 0, sizeof(*g));
}

static int gpu__init(struct rollout_gpu *g, const struct rollout_config *cfg, const float *x0,
		     const float *w)
{
	size_t nw = rollout_weight_count(cfg);
	int err = -1;

	memset(g, 0, sizeof(*g));
	g->R = cfg->realizations;
	g->C = cfg->channels;
	g->n = rollout_state_count(cfg);
	nvtxRangePushA("load/transfer");
	if (cuda_ok(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking), "stream") ||
	    cuda_ok(cudaMalloc((void **)&g->x0, g->n * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->w32, nw * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->x, g->n * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->tmp, g->n * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc(&g->xs, g->n * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc(&g->ys, g->n * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc(&g->ws, nw * sizeof(float)), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->partial,
			       (size_t)g->R * ROLLOUT_GPU_GRID * g->C * 2 * sizeof(float)),
		    "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->stats, (size_t)g->R * g->C * 2 * sizeof(float)),
		    "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&g->counters, (size_t)g->R * sizeof(unsigned)),
		    "cudaMalloc") ||
	    cuda_ok(cudaMemset(g->counters, 0, (size_t)g->R * sizeof(unsigned)), "cudaMemset") ||
	    cuda_ok(cudaMemcpy(g->x0, x0, g->n * sizeof(float), cudaMemcpyHostToDevice),
		    "upload") ||
	    cuda_ok(cudaMemcpy(g->w32, w, nw * sizeof(float), cudaMemcpyHostToDevice), "upload"))
		goto out;
	err = 0;
out:
	nvtxRangePop();
	if (err)
		gpu__exit(g);
	return err;
}

/* One naive timestep: five kernels, five intermediates, fresh temporaries. */
static int naive_step(struct rollout_gpu *g, int step, uint64_t seed)
{
	size_t bytes = g->n * sizeof(float);
	float *y = NULL, *z = NULL, *gl = NULL, *partial = NULL, *stats = NULL;
	int err = -1;

	nvtxRangePushA("step");
	if (cuda_ok(cudaMalloc((void **)&y, bytes), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&z, bytes), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&gl, bytes), "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&partial,
			       (size_t)g->R * ROLLOUT_GPU_GRID * g->C * 2 * sizeof(float)),
		    "cudaMalloc") ||
	    cuda_ok(cudaMalloc((void **)&stats, (size_t)g->R * g->C * 2 * sizeof(float)),
		    "cudaMalloc"))
		goto out;
	nvtxRangePushA("conv");
	err = cuda_ok(rollout_naive_conv(g->x, g->w32, y, g->R, g->C, g->s), "conv");
	nvtxRangePop();
	if (err)
		goto out;
	nvtxRangePushA("norm");
	err = cuda_ok(rollout_naive_stats(y, partial, stats, g->R, g->C, g->s), "stats") ||
	      cuda_ok(rollout_naive_normalize(y, stats, z, g->R, g->C, g->s), "normalize");
	nvtxRangePop();
	if (err)
		goto out;
	nvtxRangePushA("gelu");
	err = cuda_ok(rollout_naive_gelu(z, gl, g->n, g->s), "gelu");
	nvtxRangePop();
	if (err)
		goto out;
	nvtxRangePushA("noise");
	err = cuda_ok(rollout_naive_noise(gl, g->x, g->n, rollout_noise_key(seed, step),
					  (float)ROLLOUT_NOISE_SIGMA, g->s),
		      "noise");
	nvtxRangePop();
out:
	/* cudaFree waits for the device: the naive pipeline's serialisation. */
	cudaFree(y);
	cudaFree(z);
	cudaFree(gl);
	cudaFree(partial);
	cudaFree(stats);
	nvtxRangePop();
	return err;
}

/* One fused timestep: two kernels over buffers allocated once. */
static int fused_step(struct rollout_gpu *g, enum rollout_precision p, int step, uint64_t seed)
{
	int err;

	nvtxRangePushA("step");
	nvtxRangePushA("conv");
	err = cuda_ok(rollout_fused_conv_stats(p, g->xs, g->ws, g->ys, g->partial, g->stats,
					       g->counters, g->R, g->C, g->s),
		      "fused conv");
	nvtxRangePop();
	if (!err) {
		nvtxRangePushA("norm");
		err = cuda_ok(rollout_fused_norm_gelu_noise(p, g->ys, g->stats, g->xs, g->R, g->C,
							    rollout_noise_key(seed, step),
							    (float)ROLLOUT_NOISE_SIGMA, g->s),
			      "fused norm");
		nvtxRangePop();
	}
	nvtxRangePop();
	return err;
}

/* naive: p < 0. Resets the state to x0, and for the fused path puts the
 * weights into precision p. */
static int reset(struct rollout_gpu *g, int p)
{
	if (p < 0)
		return cuda_ok(cudaMemcpyAsync(g->x, g->x0, g->n * sizeof(float),
					       cudaMemcpyDeviceToDevice, g->s),
			       "reset");
	return cuda_ok(rollout_from_float(p, g->x0, g->xs, g->n, g->s), "reset") ||
	       cuda_ok(rollout_from_float(p, g->w32, g->ws, (size_t)9 * g->C * g->C, g->s),
		       "weights");
}

static int run(struct rollout_gpu *g, int p, int timesteps, uint64_t seed)
{
	for (int t = 0; t < timesteps; t++)
		if (p < 0 ? naive_step(g, t, seed) : fused_step(g, p, t, seed))
			return -1;
	return 0;
}

static int download(struct rollout_gpu *g, int p, float *host)
{
	int err;

	nvtxRangePushA("load/transfer");
	err = (p >= 0 && cuda_ok(rollout_to_float(p, g->xs, g->tmp, g->n, g->s), "convert")) ||
	      cuda_ok(cudaMemcpyAsync(host, p < 0 ? g->x : g->tmp, g->n * sizeof(float),
				      cudaMemcpyDeviceToHost, g->s),
		      "download") ||
	      cuda_ok(cudaStreamSynchronize(g->s), "sync");
	nvtxRangePop();
	return err ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median wall time of `iters` full rollouts, after one short warm-up. */
static int time_rollout(struct rollout_gpu *g, int p, int timesteps, uint64_t seed, int iters,
			double *ms)
{
	double *t = calloc((size_t)iters, sizeof(double));
	int err = -1;

	if (!t)
		goto out;
	if (reset(g, p) || run(g, p, timesteps < 3 ? timesteps : 3, seed) ||
	    cuda_ok(cudaStreamSynchronize(g->s), "sync"))
		goto out;
	for (int i = 0; i < iters; i++) {
		double t0;

		if (reset(g, p) || cuda_ok(cudaStreamSynchronize(g->s), "sync"))
			goto out;
		t0 = wl_now_ms();
		if (run(g, p, timesteps, seed) || cuda_ok(cudaStreamSynchronize(g->s), "sync"))
			goto out;
		t[i] = wl_now_ms() - t0;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp_double);
	*ms = t[iters / 2];
	err = 0;
out:
	free(t);
	return err;
}

/* Per-kernel time of the two fused kernels (50 launches each, events) and
 * the bandwidth their least traffic implies: each reads one state-sized
 * array and writes one. */
static int fused_kernel_report(struct rollout_gpu *g, int p, double copy_gbs)
{
	const int reps = 50;
	cudaEvent_t e[3] = { NULL, NULL, NULL };
	float ms[2];
	double bytes = 2.0 * (double)g->n * (double)rollout_precision_bytes(p);
	int err = -1;

	for (int i = 0; i < 3; i++)
		if (cuda_ok(cudaEventCreate(&e[i]), "event"))
			goto out;
	/* One launch of each kernel as warm-up (and to fill ys and stats), not a
	 * whole step: this is a measurement, and profiles should not count it
	 * among the rollout's NVTX "step"s. */
	if (reset(g, p))
		goto out;
	rollout_fused_conv_stats(p, g->xs, g->ws, g->ys, g->partial, g->stats, g->counters, g->R, g->C,
				 g->s);
	rollout_fused_norm_gelu_noise(p, g->ys, g->stats, g->tmp, g->R, g->C, 7,
				      (float)ROLLOUT_NOISE_SIGMA, g->s);
	cudaEventRecord(e[0], g->s);
	for (int i = 0; i < reps; i++)
		rollout_fused_conv_stats(p, g->xs, g->ws, g->ys, g->partial, g->stats, g->counters,
					 g->R, g->C, g->s);
	cudaEventRecord(e[1], g->s);
	for (int i = 0; i < reps; i++)
		rollout_fused_norm_gelu_noise(p, g->ys, g->stats, g->tmp, g->R, g->C, 7,
					      (float)ROLLOUT_NOISE_SIGMA, g->s);
	cudaEventRecord(e[2], g->s);
	if (cuda_ok(cudaEventSynchronize(e[2]), "kernels") ||
	    cuda_ok(cudaEventElapsedTime(&ms[0], e[0], e[1]), "event") ||
	    cuda_ok(cudaEventElapsedTime(&ms[1], e[1], e[2]), "event"))
		goto out;
	for (int k = 0; k < 2; k++) {
		double us = ms[k] * 1e3 / reps, gbs = bytes / (us * 1e-6) / 1e9;

		printf("  %-4s %-16s %8.1f us  %7.0f GB/s  %5.1f%% of copy bandwidth\n",
		       prec_names[p], k ? "norm+gelu+noise" : "conv+stats", us, gbs,
		       100.0 * gbs / copy_gbs);
	}
	err = 0;
out:
	for (int i = 0; i < 3; i++)
		if (e[i])
			cudaEventDestroy(e[i]);
	return err;
}

static void to_float(const double *src, float *dst, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = (float)src[i];
}

static void to_double(const float *src, double *dst, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* --check: each pipeline on a small problem with its own inputs (poisoned
 * intermediate), against rollout_ref_run in double. */
struct checker {
	struct rollout_config cfg;
	struct rollout_gpu g;
	double *ref;
	float *out;
	double *outd;
};

static int checker__init(struct checker *c, const struct rollout_opts *o)
{
	size_t n, nw;
	double *x0 = NULL, *w = NULL, *tmp = NULL;
	float *x0f = NULL, *wf = NULL;
	int err = -1;

	memset(c, 0, sizeof(*c));
	c->cfg = (struct rollout_config){
		.realizations = o->realizations < CHECK_REALIZATIONS ? o->realizations
								      : CHECK_REALIZATIONS,
		.channels = o->channels,
		.height = ROLLOUT_GPU_GRID,
		.width = ROLLOUT_GPU_GRID,
		.timesteps = o->timesteps < CHECK_TIMESTEPS ? o->timesteps : CHECK_TIMESTEPS,
		.seed = o->common.seed + 1,
	};
	n = rollout_state_count(&c->cfg);
	nw = rollout_weight_count(&c->cfg);
	x0 = malloc(n * sizeof(double));
	w = malloc(nw * sizeof(double));
	tmp = malloc(n * sizeof(double));
	x0f = malloc(n * sizeof(float));
	wf = malloc(nw * sizeof(float));
	c->ref = malloc(n * sizeof(double));
	c->out = malloc(n * sizeof(float));
	c->outd = malloc(n * sizeof(double));
	if (!x0 || !w || !tmp || !x0f || !wf || !c->ref || !c->out || !c->outd) {
		fprintf(stderr, "perfkit: rollout: out of memory\n");
		goto out;
	}
	rollout_init(&c->cfg, x0, w);
	to_float(x0, x0f, n);
	to_float(w, wf, nw);
	/* The reference starts from the values the GPU receives. */
	to_double(x0f, c->ref, n);
	to_double(wf, w, nw);
	rollout_ref_run(&c->cfg, w, c->ref, tmp);
	err = gpu__init(&c->g, &c->cfg, x0f, wf);
out:
	free(x0);
	free(w);
	free(tmp);
	free(x0f);
	free(wf);
	return err;
}

static void checker__exit(struct checker *c)
{
	gpu__exit(&c->g);
	free(c->ref);
	free(c->out);
	free(c->outd);
}

static int checker__run(struct checker *c, int p, struct wl_result *r)
{
	struct rollout_error e;
	int tol_index = p < 0 ? 0 : p;

	/* All-ones bytes are NaN in FP32, FP16 and BF16: an element a kernel
	 * forgets to write cannot pass. */
	if (cuda_ok(cudaMemsetAsync(c->g.ys, 0xff, c->g.n * sizeof(float), c->g.s), "poison") ||
	    cuda_ok(cudaMemsetAsync(c->g.xs, 0xff, c->g.n * sizeof(float), c->g.s), "poison") ||
	    reset(&c->g, p) || run(&c->g, p, c->cfg.timesteps, c->cfg.seed) ||
	    download(&c->g, p, c->out))
		return -1;
	to_double(c->out, c->outd, c->g.n);
	rollout_compare(c->outd, c->ref, c->g.n, &e);
	r->checked = true;
	r->check_error = e.rel_l2;
	r->check_ok = e.rel_l2 <= check_tol[tol_index];
	printf("check %-9s %s: %d realizations x %d steps vs double: rel L2 %.3e (tolerance %.0e), "
	       "max abs %.3e -> %s\n",
	       p < 0 ? "naive" : "optimized", prec_names[tol_index], c->cfg.realizations,
	       c->cfg.timesteps, e.rel_l2, check_tol[tol_index], e.max_abs,
	       r->check_ok ? "ok" : "FAIL");
	return 0;
}

static int parse_precisions(const char *s, int *list, int *n)
{
	*n = 0;
	if (strcmp(s, "all") == 0) {
		for (int p = 0; p < NPREC; p++)
			list[(*n)++] = p;
		return 0;
	}
	for (int p = 0; p < NPREC; p++)
		if (strcmp(s, prec_names[p]) == 0) {
			list[(*n)++] = p;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	struct rollout_opts o = {
		.common = { .variant = WL_BOTH, .iters = 3, .seed = 1 },
		.timesteps = 100,
		.realizations = 16,
		.channels = 32,
		.precision = "fp16",
	};
	const struct wl_option extra[] = {
		{ "timesteps", "=N  timesteps per rollout (default 100)", wl_parse_int, &o.timesteps },
		{ "realizations", "=N  independent realizations, the size (default 16)",
		  wl_parse_int, &o.realizations },
		{ "channels", "=16|32  channels of the state (default 32)", wl_parse_int,
		  &o.channels },
		{ "precision", "=fp32|fp16|bf16|all  optimized storage/arithmetic (default fp16)",
		  wl_parse_string, &o.precision },
	};
	struct rollout_config cfg;
	struct rollout_gpu g = { 0 };
	struct wl_result res[1 + NPREC];
	char sizes[1 + NPREC][48];
	int precs[NPREC], nprec = 0, nres = 0, rc = 2, pr;
	size_t n, nw;
	double *x0d = NULL, *wd = NULL, *fp32d = NULL, *od = NULL;
	float *x0f = NULL, *wf = NULL, *out = NULL;
	bool have_fp32 = false, check_failed = false;

	pr = wl_parse_args("rollout", argc, argv, &o.common, extra,
			   (int)(sizeof(extra) / sizeof(extra[0])));
	if (pr)
		return pr > 0 ? 0 : 2;
	if (parse_precisions(o.precision, precs, &nprec)) {
		fprintf(stderr, "perfkit: rollout: --precision must be fp32, fp16, bf16 or all\n");
		return 2;
	}
	if (!rollout_fused_supports(o.channels)) {
		fprintf(stderr, "perfkit: rollout: --channels must be 16 or 32\n");
		return 2;
	}
	cfg = (struct rollout_config){ .realizations = o.realizations, .channels = o.channels,
				       .height = ROLLOUT_GPU_GRID, .width = ROLLOUT_GPU_GRID,
				       .timesteps = o.timesteps, .seed = o.common.seed };
	n = rollout_state_count(&cfg);
	nw = rollout_weight_count(&cfg);
	x0d = malloc(n * sizeof(double));
	wd = malloc(nw * sizeof(double));
	fp32d = malloc(n * sizeof(double));
	od = malloc(n * sizeof(double));
	x0f = malloc(n * sizeof(float));
	wf = malloc(nw * sizeof(float));
	/* Pinned: the readback is a real asynchronous copy, not one the driver
	 * stages through a bounce buffer while the host waits. */
	if (cudaMallocHost((void **)&out, n * sizeof(float)) != cudaSuccess)
		out = NULL;
	if (!x0d || !wd || !fp32d || !od || !x0f || !wf || !out) {
		fprintf(stderr, "perfkit: rollout: out of memory for %d realizations\n",
			o.realizations);
		goto out;
	}
	rollout_init(&cfg, x0d, wd);
	to_float(x0d, x0f, n);
	to_float(wd, wf, nw);
	if (gpu__init(&g, &cfg, x0f, wf))
		goto out;
	printf("rollout: %d realizations x %d channels x %dx%d grid, %d timesteps, %d timed "
	       "rollouts per variant\n",
	       o.realizations, o.channels, ROLLOUT_GPU_GRID, ROLLOUT_GPU_GRID, o.timesteps,
	       o.common.iters);

	for (int k = -1; k < nprec; k++) {
		int p = k < 0 ? -1 : precs[k];
		struct wl_result *r = &res[nres];
		double ms;

		if (k < 0 && !(o.common.variant & WL_NAIVE))
			continue;
		if (k >= 0 && !(o.common.variant & WL_OPTIMIZED))
			break;
		if (time_rollout(&g, p, o.timesteps, o.common.seed, o.common.iters, &ms) ||
		    download(&g, p, out))
			goto out;
		snprintf(sizes[nres], sizeof(sizes[nres]), "R%d C%d %s", o.realizations,
			 o.channels, prec_names[p < 0 ? 0 : p]);
		*r = (struct wl_result){ .workload = "rollout",
					 .variant = p < 0 ? "naive" : "optimized",
					 .size = sizes[nres],
					 .step_ms = ms / o.timesteps,
					 .throughput = 1e3 * o.timesteps / ms,
					 .unit = "timesteps/s" };
		nres++;
		to_double(out, od, n);
		if (p < 0 || (p == ROLLOUT_FP32 && !have_fp32)) {
			if (!have_fp32)
				memcpy(fp32d, od, n * sizeof(double));
			have_fp32 = true;
		}
		if (p > ROLLOUT_FP32 && have_fp32) {
			struct rollout_error e;

			rollout_compare(od, fp32d, n, &e);
			printf("%s vs fp32 after %d timesteps: max abs %.3e, mean abs %.3e, "
			       "rel L2 %.3e\n",
			       prec_names[p], o.timesteps, e.max_abs, e.mean_abs, e.rel_l2);
		}
	}

	if (o.common.variant & WL_OPTIMIZED) {
		double copy_gbs = 0.0;

		if (cuda_ok(copy_bandwidth_gbs(g.s, &copy_gbs), "copy bandwidth"))
			goto out;
		printf("device-to-device copy: %.0f GB/s (read + write)\n", copy_gbs);
		for (int k = 0; k < nprec; k++)
			if (fused_kernel_report(&g, precs[k], copy_gbs))
				goto out;
	}

	if (o.common.check) {
		struct checker c;
		int i = 0, err = checker__init(&c, &o);

		for (int k = -1; !err && k < nprec; k++) {
			if ((k < 0 && !(o.common.variant & WL_NAIVE)) ||
			    (k >= 0 && !(o.common.variant & WL_OPTIMIZED)))
				continue;
			err = checker__run(&c, k < 0 ? -1 : precs[k], &res[i]);
			check_failed |= !err && !res[i].check_ok;
			i++;
		}
		checker__exit(&c);
		if (err)
			goto out;
	}

	wl_print_table(stdout, res, nres);
	if (o.common.json)
		for (int i = 0; i < nres; i++)
			wl_print_json(stdout, &res[i]);
	rc = check_failed ? 1 : 0;
out:
	gpu__exit(&g);
	free(x0d);
	free(wd);
	free(fp32d);
	free(od);
	free(x0f);
	free(wf);
	cudaFreeHost(out);
	return rc;
}
