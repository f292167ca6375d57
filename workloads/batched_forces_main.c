/* batched_forces_main.c - the batched forces workload (seed 002): energies
 * and analytic forces of small structures (12 to 64 atoms), B structures per
 * step, forces back on the host after every step (what an MD integrator or
 * an inference loop consumes).
 *
 * naive:     one structure at a time, as the seed's baseline: pageable copy
 *            of its positions, four small kernels (distances, basis features,
 *            energy reduction, forces), blocking copies of energy and forces
 *            back; B launch sequences and B synchronisations per step.
 * optimized: the B structures batched: one pinned async copy in, one fused
 *            kernel (one block per structure), one copy out, one
 *            synchronisation per step.
 * --batch=1,4,8,16,32 runs both at each batch size: the throughput curve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "forces.h"
#include "forces_ref.h"
#include "wl_common.h"

#define PROG "batched_forces"
#define POOL_BATCHES 4          /* distinct batches cycled through */
#define WARMUP 5
#define TOL_GPU 1e-4            /* float GPU vs double CPU, relative L2 */
#define TOL_FD 1e-6             /* analytic vs finite-difference CPU forces */
#define FD_STEP 1e-5            /* Angstrom */
#define FD_STRUCTURES 4
#define MAX_BATCH 4096

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

static void *xmalloc(size_t bytes)
{
	void *p = malloc(bytes);

	if (!p) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	return p;
}

/* Everything one batch size needs: a pool of POOL_BATCHES * B structures,
 * host copies in float (pageable for naive, pinned for optimized), device
 * buffers. */
struct bench {
	int batch;
	struct fo_set set;
	struct fo_kparams kp;
	float *pos, *energy, *forces;                  /* pageable */
	float *pin_pos, *pin_energy, *pin_forces;      /* pinned */
	float *d_pos, *d_energy, *d_forces;            /* device */
	float *d_r, *d_feat, *d_dfeat;                 /* naive scratch */
	int *d_offset;   /* per batch k: B + 1 offsets relative to its first atom */
	cudaStream_t stream;
};

static void bench__init(struct bench *b, int batch, const struct fo_params *p, uint64_t seed)
{
	int n_struct = POOL_BATCHES * batch, max_atoms = 0;
	int *rel;

	memset(b, 0, sizeof(*b));
	b->batch = batch;
	if (fo_set__new(&b->set, n_struct, seed, 0)) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	for (int k = 0; k < FO_KERNEL_BASIS; k++) {
		b->kp.w[k] = (float)p->w[k];
		b->kp.mu[k] = (float)p->mu[k];
	}
	b->kp.gamma = (float)p->gamma;
	b->kp.cutoff = (float)p->cutoff;

	b->pos = xmalloc((size_t)b->set.atoms * 3 * sizeof(float));
	b->energy = xmalloc((size_t)n_struct * sizeof(float));
	b->forces = xmalloc((size_t)b->set.atoms * 3 * sizeof(float));
	for (int i = 0; i < 3 * b->set.atoms; i++)
		b->pos[i] = (float)b->set.pos[i];
	CK(cudaHostAlloc((void **)&b->pin_pos, (size_t)b->set.atoms * 3 * sizeof(float), 0));
	CK(cudaHostAlloc((void **)&b->pin_energy, (size_t)n_struct * sizeof(float), 0));
	CK(cudaHostAlloc((void **)&b->pin_forces, (size_t)b->set.atoms * 3 * sizeof(float), 0));
	memcpy(b->pin_pos, b->pos, (size_t)b->set.atoms * 3 * sizeof(float));

	for (int k = 0; k < POOL_BATCHES; k++) {
		int atoms = b->set.offset[(k + 1) * batch] - b->set.offset[k * batch];

		if (atoms > max_atoms)
			max_atoms = atoms;
	}
	CK(cudaMalloc((void **)&b->d_pos, (size_t)max_atoms * 3 * sizeof(float)));
	CK(cudaMalloc((void **)&b->d_forces, (size_t)max_atoms * 3 * sizeof(float)));
	CK(cudaMalloc((void **)&b->d_energy, (size_t)batch * sizeof(float)));
	CK(cudaMalloc((void **)&b->d_r, (size_t)FO_MAX_ATOMS * FO_MAX_ATOMS * sizeof(float)));
	CK(cudaMalloc((void **)&b->d_feat,
		      (size_t)FO_MAX_ATOMS * FO_MAX_ATOMS * FO_BASIS * sizeof(float)));
	CK(cudaMalloc((void **)&b->d_dfeat,
		      (size_t)FO_MAX_ATOMS * FO_MAX_ATOMS * FO_BASIS * sizeof(float)));

	/* The structures' sizes are fixed for the run (as a molecule's
	 * topology is), so their offsets go up once. */
	rel = xmalloc((size_t)POOL_BATCHES * (batch + 1) * sizeof(int));
	for (int k = 0; k < POOL_BATCHES; k++)
		for (int s = 0; s <= batch; s++)
			rel[k * (batch + 1) + s] =
				b->set.offset[k * batch + s] - b->set.offset[k * batch];
	CK(cudaMalloc((void **)&b->d_offset, (size_t)POOL_BATCHES * (batch + 1) * sizeof(int)));
	CK(cudaMemcpy(b->d_offset, rel, (size_t)POOL_BATCHES * (batch + 1) * sizeof(int),
		      cudaMemcpyHostToDevice));
	free(rel);
	CK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
}

static void bench__exit(struct bench *b)
{
	fo_set__delete(&b->set);
	free(b->pos);
	free(b->energy);
	free(b->forces);
	cudaFreeHost(b->pin_pos);
	cudaFreeHost(b->pin_energy);
	cudaFreeHost(b->pin_forces);
	cudaFree(b->d_pos);
	cudaFree(b->d_energy);
	cudaFree(b->d_forces);
	cudaFree(b->d_r);
	cudaFree(b->d_feat);
	cudaFree(b->d_dfeat);
	cudaFree(b->d_offset);
	cudaStreamDestroy(b->stream);
}

/* Steps first .. first+n-1, one structure at a time on the legacy stream. */
static void run_naive(struct bench *b, int first, int n)
{
	for (int step = first; step < first + n; step++) {
		int k = step % POOL_BATCHES;

		nvtxRangePushA("step");
		for (int s = k * b->batch; s < (k + 1) * b->batch; s++) {
			int a0 = b->set.offset[s], atoms = b->set.offset[s + 1] - a0;

			nvtxRangePushA("load/transfer");
			CK(cudaMemcpy(b->d_pos, b->pos + 3 * a0, (size_t)atoms * 3 * sizeof(float),
				      cudaMemcpyHostToDevice));
			nvtxRangePop();
			nvtxRangePushA("energy");
			CK(fo_launch_distances(b->d_pos, atoms, b->d_r, 0));
			CK(fo_launch_rbf(b->d_r, atoms, b->kp, b->d_feat, b->d_dfeat, 0));
			CK(fo_launch_energy(b->d_feat, atoms, b->kp, b->d_energy, 0));
			nvtxRangePop();
			nvtxRangePushA("forces");
			CK(fo_launch_forces(b->d_pos, b->d_r, b->d_dfeat, atoms, b->kp, b->d_forces, 0));
			nvtxRangePop();
			nvtxRangePushA("load/transfer");
			CK(cudaMemcpy(&b->energy[s], b->d_energy, sizeof(float), cudaMemcpyDeviceToHost));
			CK(cudaMemcpy(b->forces + 3 * a0, b->d_forces, (size_t)atoms * 3 * sizeof(float),
				      cudaMemcpyDeviceToHost));
			nvtxRangePop();
		}
		nvtxRangePop();
	}
}

/* Steps first .. first+n-1, B structures per launch sequence. */
static void run_optimized(struct bench *b, int first, int n)
{
	for (int step = first; step < first + n; step++) {
		int k = step % POOL_BATCHES, s0 = k * b->batch;
		int a0 = b->set.offset[s0], atoms = b->set.offset[s0 + b->batch] - a0;

		nvtxRangePushA("step");
		nvtxRangePushA("load/transfer");
		CK(cudaMemcpyAsync(b->d_pos, b->pin_pos + 3 * a0, (size_t)atoms * 3 * sizeof(float),
				   cudaMemcpyHostToDevice, b->stream));
		nvtxRangePop();
		nvtxRangePushA("forces");
		CK(fo_launch_batched(b->d_pos, b->d_offset + k * (b->batch + 1), b->batch, b->kp,
				     b->d_energy, b->d_forces, b->stream));
		nvtxRangePop();
		nvtxRangePushA("load/transfer");
		CK(cudaMemcpyAsync(b->pin_energy + s0, b->d_energy, (size_t)b->batch * sizeof(float),
				   cudaMemcpyDeviceToHost, b->stream));
		CK(cudaMemcpyAsync(b->pin_forces + 3 * a0, b->d_forces,
				   (size_t)atoms * 3 * sizeof(float), cudaMemcpyDeviceToHost,
				   b->stream));
		CK(cudaStreamSynchronize(b->stream));
		nvtxRangePop();
		nvtxRangePop();
	}
}

/* Largest relative L2 error of the GPU energies and forces of batch 0 (host
 * outputs and device outputs poisoned with NaN first). */
static double check_variant(struct bench *b, const struct fo_params *p, bool optimized)
{
	int atoms = b->set.offset[b->batch];
	float *ge = optimized ? b->pin_energy : b->energy;
	float *gf = optimized ? b->pin_forces : b->forces;
	double *e_ref = xmalloc((size_t)b->batch * sizeof(double));
	double *f_ref = xmalloc((size_t)atoms * 3 * sizeof(double));
	double *e_gpu = xmalloc((size_t)b->batch * sizeof(double));
	double *f_gpu = xmalloc((size_t)atoms * 3 * sizeof(double));
	double ee, ef;

	for (int s = 0; s < b->batch; s++)
		ge[s] = NAN;
	for (int i = 0; i < 3 * atoms; i++)
		gf[i] = NAN;
	CK(cudaMemset(b->d_forces, 0xff, (size_t)atoms * 3 * sizeof(float)));
	CK(cudaMemset(b->d_energy, 0xff, (size_t)b->batch * sizeof(float)));
	if (optimized)
		run_optimized(b, 0, 1);
	else
		run_naive(b, 0, 1);
	for (int s = 0; s < b->batch; s++) {
		int a0 = b->set.offset[s], n = b->set.offset[s + 1] - a0;

		e_ref[s] = fo_energy_forces(p, b->set.pos + 3 * a0, n, f_ref + 3 * a0);
		e_gpu[s] = ge[s];
	}
	for (int i = 0; i < 3 * atoms; i++)
		f_gpu[i] = gf[i];
	ee = wl_rel_l2(e_gpu, e_ref, (size_t)b->batch);
	ef = wl_rel_l2(f_gpu, f_ref, (size_t)atoms * 3);
	free(e_ref);
	free(f_ref);
	free(e_gpu);
	free(f_gpu);
	return isnan(ee) || ee > ef ? ee : ef;
}

/* The CPU reference itself: analytic forces against central differences of
 * the double energy, over the first structures. */
static double check_fd(const struct fo_params *p, uint64_t seed)
{
	struct fo_set set;
	double worst = 0.0;

	if (fo_set__new(&set, FD_STRUCTURES, seed, 0)) {
		fprintf(stderr, "perfkit: " PROG ": out of memory\n");
		exit(2);
	}
	for (int s = 0; s < FD_STRUCTURES; s++) {
		int a0 = set.offset[s], n = set.offset[s + 1] - a0;
		double *fa = xmalloc((size_t)n * 3 * sizeof(double));
		double *fd = xmalloc((size_t)n * 3 * sizeof(double));
		double e;

		fo_energy_forces(p, set.pos + 3 * a0, n, fa);
		fo_fd_forces(p, set.pos + 3 * a0, n, FD_STEP, fd);
		e = wl_rel_l2(fa, fd, (size_t)n * 3);
		if (isnan(e) || e > worst)
			worst = e;
		free(fa);
		free(fd);
	}
	fo_set__delete(&set);
	return worst;
}

static struct wl_result run_variant(struct bench *b, const struct fo_params *p,
				    const struct wl_common *c, bool optimized, char *size)
{
	struct wl_result r = { .workload = PROG, .variant = optimized ? "optimized" : "naive",
			       .size = size, .unit = "structures/s" };
	double t0, ms;

	if (optimized)
		run_optimized(b, 0, WARMUP);
	else
		run_naive(b, 0, WARMUP);
	CK(cudaDeviceSynchronize());
	t0 = wl_now_ms();
	if (optimized)
		run_optimized(b, 0, c->iters);
	else
		run_naive(b, 0, c->iters);
	CK(cudaDeviceSynchronize());
	ms = (wl_now_ms() - t0) / c->iters;
	r.step_ms = ms;
	r.throughput = b->batch / (ms * 1e-3);
	if (c->check) {
		r.checked = true;
		r.check_error = check_variant(b, p, optimized);
		r.check_ok = r.check_error <= TOL_GPU;
	}
	return r;
}

/* The seed's projected speedups over its one-structure baseline. */
static const char *seed_speedup(int batch)
{
	switch (batch) {
	case 1: return "1.00x";
	case 4: return "2.98x";
	case 8: return "4.79x";
	case 16: return "6.7x";
	default: return "-";
	}
}

int main(int argc, char **argv)
{
	struct wl_common c = { .variant = WL_BOTH, .iters = 200, .seed = 1 };
	struct wl_int_list batches = { .n = 5, .v = { 1, 4, 8, 16, 32 } };
	struct wl_option extra[] = {
		{ "batch", "structures per step: B[,B...] (default 1,4,8,16,32)", wl_parse_int_list,
		  &batches },
	};
	struct wl_result res[2 * 16];
	char sizes[16][24];
	struct cudaDeviceProp prop;
	struct fo_params p;
	double fd_err = 0.0;
	int n = 0, rc, status = 0;

	rc = wl_parse_args(PROG, argc, argv, &c, extra, 1);
	if (rc)
		return rc > 0 ? 0 : 2;
	for (int i = 0; i < batches.n; i++)
		if (batches.v[i] > MAX_BATCH) {
			fprintf(stderr, "perfkit: " PROG ": batch %d is over %d\n", batches.v[i],
				MAX_BATCH);
			return 2;
		}
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("%s on %s: %d to %d atoms per structure, %d basis functions, cutoff %.1f A, "
	       "%d steps per batch size\n",
	       PROG, prop.name, FO_MIN_ATOMS, FO_MAX_ATOMS, FO_BASIS, FO_CUTOFF, c.iters);
	fo_params__init(&p, c.seed ^ 0xf0a3u);
	if (c.check) {
		fd_err = check_fd(&p, c.seed);
		printf("check: CPU analytic forces vs central differences (h=%.0e): relative L2 %.2e "
		       "(tolerance %.0e)\n",
		       FD_STEP, fd_err, TOL_FD);
		if (!(fd_err <= TOL_FD)) {
			fprintf(stderr, "perfkit: " PROG ": analytic forces disagree with finite differences\n");
			status = 1;
		}
	}

	for (int i = 0; i < batches.n; i++) {
		struct bench b;

		snprintf(sizes[i], sizeof(sizes[i]), "batch=%d", batches.v[i]);
		bench__init(&b, batches.v[i], &p, c.seed);
		if (c.variant & WL_NAIVE)
			res[n++] = run_variant(&b, &p, &c, false, sizes[i]);
		if (c.variant & WL_OPTIMIZED)
			res[n++] = run_variant(&b, &p, &c, true, sizes[i]);
		bench__exit(&b);
	}

	if (c.variant == WL_BOTH) {
		printf("\nthroughput curve (structures/s; speedup of optimized over naive at the same "
		       "batch; the seed's projection beside it)\n");
		printf("%-6s %14s %14s %9s %9s\n", "batch", "naive", "optimized", "speedup", "seed");
		for (int i = 0; i + 1 < n; i += 2)
			printf("%-6d %14.0f %14.0f %8.2fx %9s\n", batches.v[i / 2], res[i].throughput,
			       res[i + 1].throughput, res[i + 1].throughput / res[i].throughput,
			       seed_speedup(batches.v[i / 2]));
	}
	for (int i = 0; i < n; i++) {
		if (res[i].checked && !res[i].check_ok) {
			fprintf(stderr, "perfkit: " PROG ": %s %s check failed: error %.3g > %.0e\n",
				res[i].variant, res[i].size, res[i].check_error, TOL_GPU);
			status = 1;
		}
		if (c.json)
			wl_print_json(stdout, &res[i]);
	}
	if (c.check)
		printf("check: GPU energies and forces vs double CPU analytic, relative L2, tolerance "
		       "%.0e\n",
		       TOL_GPU);
	printf("\n");
	wl_print_table(stdout, res, n);
	return status;
}
