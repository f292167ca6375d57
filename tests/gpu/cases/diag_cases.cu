/* diag_cases.cu - small programs with one known performance problem each
 * (and clean ones), written apart from perfkit's workloads, so that the
 * diagnosis can be checked on programs it was not tuned for:
 *
 *   diag_cases CASE [--iters=N] [--slow=F]
 *
 *   strided      a gather whose threads read addresses 33 floats apart:
 *                every 4-byte load pulls its own 32-byte sector
 *   coalesced    the same amount of useful data read contiguously (the fix)
 *   smem         a kernel whose 40 KiB static shared buffer leaves room for
 *                few blocks per SM: low theoretical occupancy
 *   gemm_chain   an MLP: 8 same-shape SGEMMs, each consuming the last one's
 *                output, with a bias+ReLU kernel between them
 *   gemm_heads   16 independent same-shape SGEMMs (one per head) back to back
 *   gemm_streams the same 16 independent SGEMMs spread over 4 streams
 *   steady       three kernels a step; --slow=F makes the "allreduce_like"
 *                kernel do F times the work, to compare two captures
 *   clean        large, contiguous, asynchronous work: nothing to fix
 *   host_gaps    a kernel, then 2 ms of host work (a sleep) before the next:
 *                the GPU idles because the host does not submit
 *   cross_stream two streams that wait on each other through events each
 *                step (A: produce, B waits, consume; A waits for B): idle
 *                time on each stream is a cross-stream wait
 *
 * Every case runs a warm-up step and --iters steps inside NVTX "step" ranges
 * and synchronises once at the end. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                                    \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "diag_cases: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                       \
		}                                                                      \
	} while (0)
#define CHECK_BLAS(call)                                                               \
	do {                                                                           \
		if ((call) != CUBLAS_STATUS_SUCCESS) {                                 \
			fprintf(stderr, "diag_cases: %s failed\n", #call);             \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

static const int STRIDE = 33;

__global__ void gather_strided(const float *in, float *out, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i * STRIDE] * 2.0f;
}

__global__ void gather_contiguous(const float *in, float *out, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * 2.0f;
}

/* 40 KiB of static shared memory per 64-thread block: an SM's 228 KiB hold
 * five such blocks, 320 of its 2048 threads. */
#define SMEM_FLOATS (40 * 1024 / 4)
__global__ void smem_blur(const float *in, float *out, size_t n)
{
	__shared__ float tile[SMEM_FLOATS];
	size_t base = blockIdx.x * (size_t)SMEM_FLOATS;
	for (int k = threadIdx.x; k < SMEM_FLOATS; k += blockDim.x)
		tile[k] = base + k < n ? in[base + k] : 0.0f;
	__syncthreads();
	for (int k = threadIdx.x; k < SMEM_FLOATS; k += blockDim.x) {
		float v = tile[k];
		for (int r = 1; r <= 8; r++)
			v += tile[(k + r) % SMEM_FLOATS] + tile[(k + SMEM_FLOATS - r) % SMEM_FLOATS];
		if (base + k < n)
			out[base + k] = v / 17.0f;
	}
}

__global__ void bias_relu(float *x, const float *bias, int rows, int cols)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < rows * cols) {
		float v = x[i] + bias[i % rows];
		x[i] = v > 0.0f ? v : 0.0f;
	}
}

/* Busy arithmetic on a vector: `work` rounds per element. */
__device__ void busy_body(float *x, size_t n, int work)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		for (int r = 0; r < work; r++)
			v = v * 0.999f + 0.001f;
		x[i] = v;
	}
}

__global__ void busy(float *x, size_t n, int work) { busy_body(x, n, work); }

static unsigned blocks(size_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

static float *device_floats(size_t n, float value)
{
	float *d;
	CHECK(cudaMalloc(&d, n * sizeof *d));
	float *h = (float *)malloc(n * sizeof *h);
	for (size_t i = 0; i < n; i++)
		h[i] = value + (float)(i % 7) * 0.01f;
	CHECK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
	free(h);
	return d;
}

struct opts {
	int iters;
	double slow;
};

/* Runs body(step) for the warm-up and each step inside "step" ranges. */
template <typename F> static void steps(const struct opts *o, F body)
{
	for (int s = 0; s <= o->iters; s++) {
		nvtxRangePushA("step");
		body(s);
		nvtxRangePop();
	}
	CHECK(cudaDeviceSynchronize());
}

static void run_gather(const struct opts *o, bool strided)
{
	const size_t n = 4u << 20; /* 16 MiB of useful floats per launch */
	float *in = device_floats(strided ? n * STRIDE : n, 1.0f);
	float *out = device_floats(n, 0.0f);
	steps(o, [&](int) {
		for (int k = 0; k < 4; k++) {
			if (strided)
				gather_strided<<<blocks(n, 256), 256>>>(in, out, n);
			else
				gather_contiguous<<<blocks(n, 256), 256>>>(in, out, n);
		}
	});
	CHECK(cudaGetLastError());
}

static void run_smem(const struct opts *o)
{
	const size_t n = 8u << 20;
	float *in = device_floats(n, 1.0f), *out = device_floats(n, 0.0f);
	steps(o, [&](int) {
		for (int k = 0; k < 4; k++)
			smem_blur<<<blocks(n, SMEM_FLOATS), 64>>>(in, out, n);
	});
	CHECK(cudaGetLastError());
}

static void run_gemms(const struct opts *o, bool chain, int nstreams)
{
	const int dim = 512, count = chain ? 8 : 16;
	cublasHandle_t h;
	CHECK_BLAS(cublasCreate(&h));
	cudaStream_t streams[4];
	for (int k = 0; k < nstreams; k++)
		CHECK(cudaStreamCreateWithFlags(&streams[k], cudaStreamNonBlocking));
	float *w = device_floats((size_t)dim * dim * count, 0.01f);
	float *act = device_floats((size_t)dim * dim * (count + 1), 0.5f);
	float *bias = device_floats(dim, 0.1f);
	const float one = 1.0f, zero = 0.0f;
	steps(o, [&](int) {
		for (int l = 0; l < count; l++) {
			/* chain: layer l reads activation l, writes l + 1; heads:
			 * every head reads the same input and writes its own output */
			const float *x = act + (size_t)dim * dim * (chain ? l : 0);
			float *y = act + (size_t)dim * dim * (l + 1);
			if (nstreams > 1)
				CHECK_BLAS(cublasSetStream(h, streams[l % nstreams]));
			CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one,
					       w + (size_t)dim * dim * l, dim, x, dim, &zero, y, dim));
			if (chain)
				bias_relu<<<blocks((size_t)dim * dim, 256), 256>>>(y, bias, dim, dim);
		}
	});
	CHECK(cudaGetLastError());
	cublasDestroy(h);
	for (int k = 0; k < nstreams; k++)
		CHECK(cudaStreamDestroy(streams[k]));
}

/* Three kernels of a training step, by name; only the names differ. */
__global__ void allreduce_like(float *x, size_t n, int work) { busy_body(x, n, work); }
__global__ void forward_like(float *x, size_t n, int work) { busy_body(x, n, work); }
__global__ void update_like(float *x, size_t n, int work) { busy_body(x, n, work); }

static void run_steady(const struct opts *o)
{
	const size_t n = 1u << 20;
	float *x = device_floats(n, 1.0f);
	const int comm_work = (int)(200 * o->slow);
	steps(o, [&](int) {
		forward_like<<<blocks(n, 256), 256>>>(x, n, 400);
		allreduce_like<<<blocks(n, 256), 256>>>(x, n, comm_work);
		update_like<<<blocks(n, 256), 256>>>(x, n, 100);
	});
	CHECK(cudaGetLastError());
}

static void run_host_gaps(const struct opts *o)
{
	const size_t n = 4u << 20;
	float *x = device_floats(n, 1.0f);
	steps(o, [&](int) {
		busy<<<blocks(n, 256), 256>>>(x, n, 64);
		CHECK(cudaStreamSynchronize(0));
		usleep(2000); /* the host's own work: nothing queued meanwhile */
	});
	CHECK(cudaGetLastError());
}

static void run_cross_stream(const struct opts *o)
{
	const size_t n = 4u << 20;
	float *x = device_floats(n, 1.0f), *y = device_floats(n, 2.0f);
	cudaStream_t a, b;
	cudaEvent_t produced, consumed;
	CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
	CHECK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
	steps(o, [&](int) {
		forward_like<<<blocks(n, 256), 256, 0, a>>>(x, n, 300);
		CHECK(cudaEventRecord(produced, a));
		CHECK(cudaStreamWaitEvent(b, produced, 0));
		update_like<<<blocks(n, 256), 256, 0, b>>>(x, n, 300);
		busy<<<blocks(n, 256), 256, 0, b>>>(y, n, 100);
		CHECK(cudaEventRecord(consumed, b));
		CHECK(cudaStreamWaitEvent(a, consumed, 0));
	});
	CHECK(cudaStreamSynchronize(a));
	CHECK(cudaGetLastError());
}

static void run_clean(const struct opts *o)
{
	const size_t n = 16u << 20;
	float *x = device_floats(n, 1.0f);
	steps(o, [&](int) {
		for (int k = 0; k < 2; k++)
			busy<<<blocks(n, 256), 256>>>(x, n, 256);
	});
	CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
	struct opts o = { 20, 1.0 };
	if (argc < 2) {
		fprintf(stderr, "usage: diag_cases strided|coalesced|smem|gemm_chain|gemm_heads|gemm_streams|"
				"steady|clean|host_gaps|cross_stream [--iters=N] [--slow=F]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "--iters=", 8))
			o.iters = atoi(argv[i] + 8);
		else if (!strncmp(argv[i], "--slow=", 7))
			o.slow = atof(argv[i] + 7);
		else {
			fprintf(stderr, "diag_cases: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	const char *c = argv[1];
	if (!strcmp(c, "strided") || !strcmp(c, "coalesced"))
		run_gather(&o, !strcmp(c, "strided"));
	else if (!strcmp(c, "smem"))
		run_smem(&o);
	else if (!strcmp(c, "gemm_chain") || !strcmp(c, "gemm_heads"))
		run_gemms(&o, !strcmp(c, "gemm_chain"), 1);
	else if (!strcmp(c, "gemm_streams"))
		run_gemms(&o, false, 4);
	else if (!strcmp(c, "steady"))
		run_steady(&o);
	else if (!strcmp(c, "clean"))
		run_clean(&o);
	else if (!strcmp(c, "host_gaps"))
		run_host_gaps(&o);
	else if (!strcmp(c, "cross_stream"))
		run_cross_stream(&o);
	else {
		fprintf(stderr, "diag_cases: unknown case %s\n", c);
		return 2;
	}
	printf("diag_cases %s: %d steps\n", c, o.iters);
	return 0;
}
