// peaks.cu - perfkit-peaks: measures this GPU's ceilings the way the
// Empirical Roofline Toolkit does, for `perfkit peaks`.
//
//   perfkit-peaks --identify   {"gpu_name":..., "gpu_uuid":...}
//   perfkit-peaks --measure    the same plus "peaks" and the bandwidth sweep
//   perfkit-peaks --record-cost FILE   the host's time per launch and per
//                              call into FILE (`perfkit peaks` runs it with
//                              and without the collector)
//
// Bandwidth: a read-modify-write stream (float4, L1 bypassed with .cg loads
// and stores) over working sets from 2 MiB to 2 GiB; the L2 ceiling is the
// best rate of the sets that fit in half the L2, the DRAM ceiling the best of
// the sets at least 8x the L2. FMA throughput: independent FMA chains in
// registers for FP64, FP32, half2 and bfloat162. Tensor cores: cuBLAS
// cublasGemmEx of 8192^3 with BF16 and FP16 inputs (FP32 accumulation), FP32
// inputs in TF32 and FP64 (the DMMA path).
// Peer-to-peer (several GPUs only): cudaMemcpyPeerAsync of 256 MiB from GPU
// 0 to each other GPU and back, with peer access enabled where the pair
// allows it (NVLink or PCIe peer-to-peer; staged through the host where
// not); the ceiling NCCL's bus bandwidth is compared with is the best one
// direction of a pair reached. Skipped with one GPU.
// Every figure is the best of several timed repeats after a warm-up.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                \
	do {                                                                                    \
		cudaError_t e_ = (x);                                                           \
		if (e_ != cudaSuccess) {                                                        \
			fprintf(stderr, "perfkit-peaks: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(2);                                                                \
		}                                                                               \
	} while (0)

// ---- bandwidth ----------------------------------------------------------------

__global__ void stream_rmw(float4 *a, size_t n4, int reps)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (int r = 0; r < reps; r++)
		for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
			float4 v = __ldcg(a + i);
			v.x = v.x * 0.999f + 0.001f;
			v.y = v.y * 0.999f + 0.001f;
			v.z = v.z * 0.999f + 0.001f;
			v.w = v.w * 0.999f + 0.001f;
			__stcg(a + i, v);
		}
}

// ---- FMA throughput -------------------------------------------------------------

#define CHAINS 8
#define FMA_ITERS 2048

template <typename T> __device__ T fma_op(T a, T b, T c);
template <> __device__ float fma_op(float a, float b, float c) { return fmaf(a, b, c); }
template <> __device__ double fma_op(double a, double b, double c) { return fma(a, b, c); }
template <> __device__ __half2 fma_op(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
template <> __device__ __nv_bfloat162 fma_op(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c)
{
	return __hfma2(a, b, c);
}

template <typename T> __device__ T from_float(float f);
template <> __device__ float from_float(float f) { return f; }
template <> __device__ double from_float(float f) { return f; }
template <> __device__ __half2 from_float(float f) { return __floats2half2_rn(f, f); }
template <> __device__ __nv_bfloat162 from_float(float f) { return __floats2bfloat162_rn(f, f); }

template <typename T> __device__ bool is_zero(T v);
template <> __device__ bool is_zero(float v) { return v == 0.0f; }
template <> __device__ bool is_zero(double v) { return v == 0.0; }
template <> __device__ bool is_zero(__half2 v) { return __low2float(v) == 0.0f; }
template <> __device__ bool is_zero(__nv_bfloat162 v) { return __low2float(v) == 0.0f; }

template <typename T> __global__ void fma_chains(T *out, float seed)
{
	T acc[CHAINS];
	T b = from_float<T>(0.9999f), c = from_float<T>(seed);
	for (int j = 0; j < CHAINS; j++)
		acc[j] = from_float<T>(seed + (float)j * 0.001f + (float)threadIdx.x * 1e-6f);
	for (int i = 0; i < FMA_ITERS; i++)
#pragma unroll
		for (int j = 0; j < CHAINS; j++)
			acc[j] = fma_op(acc[j], b, c);
	// a store the compiler cannot prove dead, taken almost never
	T sum = acc[0];
	for (int j = 1; j < CHAINS; j++)
		sum = fma_op(sum, b, acc[j]);
	if (is_zero(sum))
		out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

static float time_ms(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	return ms;
}

struct sweep_point {
	size_t bytes;
	double bytes_per_s;
};

static double bandwidth(size_t bytes, int sms, cudaEvent_t e0, cudaEvent_t e1)
{
	float4 *a;
	size_t n4 = bytes / sizeof(float4);
	// about 4 GiB of traffic per timed launch: more reps for small sets
	int reps = (int)(((size_t)2 << 30) / bytes);
	double best = 0;

	if (reps < 1)
		reps = 1;
	CHECK(cudaMalloc(&a, bytes));
	CHECK(cudaMemset(a, 0, bytes));
	stream_rmw<<<sms * 8, 512>>>(a, n4, 1);
	for (int t = 0; t < 5; t++) {
		CHECK(cudaEventRecord(e0));
		stream_rmw<<<sms * 8, 512>>>(a, n4, reps);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		double s = time_ms(e0, e1) * 1e-3;
		double rate = 2.0 * (double)bytes * reps / s; // read + write
		if (rate > best)
			best = rate;
	}
	CHECK(cudaFree(a));
	return best;
}

template <typename T> static double fma_rate(int sms, double flops_per_fma, cudaEvent_t e0, cudaEvent_t e1)
{
	const int blocks = sms * 16, threads = 256;
	T *out;
	double best = 0;

	CHECK(cudaMalloc(&out, sizeof(T) * blocks * threads));
	fma_chains<T><<<blocks, threads>>>(out, 0.5f);
	for (int t = 0; t < 5; t++) {
		CHECK(cudaEventRecord(e0));
		fma_chains<T><<<blocks, threads>>>(out, 0.5f);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		double s = time_ms(e0, e1) * 1e-3;
		double fmas = (double)blocks * threads * CHAINS * (FMA_ITERS + 1);
		double rate = fmas * flops_per_fma / s;
		if (rate > best)
			best = rate;
	}
	CHECK(cudaFree(out));
	return best;
}

// One tensor-core GEMM of 8192^3 in the given types (the accumulator's
// type for C too), best of five timed calls after the one that picks the
// kernel; 0 when cuBLAS refuses it.
static double tensor_gemm(cudaDataType_t in, cudaDataType_t out, size_t in_bytes, size_t out_bytes,
			  cublasComputeType_t compute, cudaEvent_t e0, cudaEvent_t e1)
{
	const int n = 8192;
	void *a, *b, *c;
	cublasHandle_t h;
	double alpha64 = 1.0, beta64 = 0.0;
	float alpha32 = 1.0f, beta32 = 0.0f;
	bool f64 = compute == CUBLAS_COMPUTE_64F;
	double best = 0;

	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
		return 0;
	CHECK(cudaMalloc(&a, in_bytes * n * n));
	CHECK(cudaMalloc(&b, in_bytes * n * n));
	CHECK(cudaMalloc(&c, out_bytes * n * n));
	CHECK(cudaMemset(a, 0, in_bytes * n * n));
	CHECK(cudaMemset(b, 0, in_bytes * n * n));
	for (int t = 0; t < 6; t++) {
		CHECK(cudaEventRecord(e0));
		cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
						 f64 ? (const void *)&alpha64 : (const void *)&alpha32, a, in, n,
						 b, in, n, f64 ? (const void *)&beta64 : (const void *)&beta32, c,
						 out, n, compute, CUBLAS_GEMM_DEFAULT);
		CHECK(cudaEventRecord(e1));
		CHECK(cudaEventSynchronize(e1));
		if (st != CUBLAS_STATUS_SUCCESS)
			break;
		double rate = 2.0 * n * (double)n * n / (time_ms(e0, e1) * 1e-3);
		if (t > 0 && rate > best) // the first call picks and loads the kernel
			best = rate;
	}
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	cublasDestroy(h);
	return best;
}

// ---- the host's cost of a call ---------------------------------------------------

__global__ void empty_kernel() {}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

// The host's time per kernel launch, per cudaEventRecord (an
// asynchronous call of the default trace that does no GPU work of its
// own), per cudaMalloc or cudaFree of 1 MiB (the trace records each
// allocation as well as the call) and per cudaMemcpyAsync of 4 KiB from
// pinned memory (the trace records the copy), the median of batches; only the calls are timed, the wait for the
// GPU between batches is not, and a batch is short enough that the launch
// queue never fills. `perfkit peaks` runs this with and without the
// collector: the difference is what recording costs the host per call.
static int record_cost(const char *path)
{
	enum { BATCHES = 41, PER_BATCH = 200, ALLOCS = 20, COPY_BYTES = 4096 };
	double launch[BATCHES], call[BATCHES], alloc[BATCHES], copy[BATCHES];
	cudaStream_t st;
	cudaEvent_t ev;
	void *buf[ALLOCS], *dst, *src;
	FILE *f;

	CHECK(cudaStreamCreate(&st));
	CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CHECK(cudaMalloc(&dst, COPY_BYTES));
	CHECK(cudaMallocHost(&src, COPY_BYTES));
	for (int warm = 0; warm < PER_BATCH; warm++)
		empty_kernel<<<1, 32, 0, st>>>();
	CHECK(cudaStreamSynchronize(st));
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (int i = 0; i < PER_BATCH; i++)
			empty_kernel<<<1, 32, 0, st>>>();
		launch[b] = (now_ns() - t0) / PER_BATCH;
		CHECK(cudaStreamSynchronize(st));
		t0 = now_ns();
		for (int i = 0; i < PER_BATCH; i++)
			cudaEventRecord(ev, st);
		call[b] = (now_ns() - t0) / PER_BATCH;
		CHECK(cudaStreamSynchronize(st));
		t0 = now_ns();
		for (int i = 0; i < PER_BATCH; i++)
			cudaMemcpyAsync(dst, src, COPY_BYTES, cudaMemcpyHostToDevice, st);
		copy[b] = (now_ns() - t0) / PER_BATCH;
		CHECK(cudaStreamSynchronize(st));
		t0 = now_ns();
		for (int i = 0; i < ALLOCS; i++)
			CHECK(cudaMalloc(&buf[i], 1 << 20));
		for (int i = 0; i < ALLOCS; i++)
			CHECK(cudaFree(buf[i]));
		alloc[b] = (now_ns() - t0) / (2 * ALLOCS);
	}
	CHECK(cudaGetLastError());
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "perfkit-peaks: cannot write %s\n", path);
		return 2;
	}
	fprintf(f, "{\"launch_ns\":%.1f,\"api_call_ns\":%.1f,\"alloc_call_ns\":%.1f,\"copy_call_ns\":%.1f}\n",
		median(launch, BATCHES), median(call, BATCHES), median(alloc, BATCHES), median(copy, BATCHES));
	return fclose(f) ? 2 : 0;
}

// ---- peer-to-peer -------------------------------------------------------------

struct p2p_pair {
	int src, dst;
	bool peer_access;
	double bytes_per_s;
};

// Best rate of copying bytes from device src to dst, timed on src's stream.
static double p2p_rate(int src, int dst, size_t bytes, bool *peer_access)
{
	void *a, *b;
	cudaEvent_t e0, e1;
	cudaStream_t st;
	int can = 0;
	double best = 0;

	CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
	*peer_access = can != 0;
	CHECK(cudaSetDevice(dst));
	CHECK(cudaMalloc(&b, bytes));
	CHECK(cudaSetDevice(src));
	if (can) {
		cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
		if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
			CHECK(e);
		cudaGetLastError(); // clear "already enabled"
	}
	CHECK(cudaMalloc(&a, bytes));
	CHECK(cudaMemset(a, 1, bytes));
	CHECK(cudaStreamCreate(&st));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaMemcpyPeerAsync(b, dst, a, src, bytes, st)); // warm-up
	CHECK(cudaStreamSynchronize(st));
	for (int t = 0; t < 5; t++) {
		CHECK(cudaEventRecord(e0, st));
		CHECK(cudaMemcpyPeerAsync(b, dst, a, src, bytes, st));
		CHECK(cudaEventRecord(e1, st));
		CHECK(cudaEventSynchronize(e1));
		double rate = (double)bytes / (time_ms(e0, e1) * 1e-3);
		if (rate > best)
			best = rate;
	}
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	CHECK(cudaStreamDestroy(st));
	CHECK(cudaFree(a));
	if (can)
		cudaDeviceDisablePeerAccess(dst);
	CHECK(cudaSetDevice(dst));
	CHECK(cudaFree(b));
	CHECK(cudaSetDevice(0));
	return best;
}

// GPU 0 to every other GPU and back; the pairs into pairs (at most max).
static int measure_p2p(struct p2p_pair *pairs, int max)
{
	const size_t bytes = (size_t)256 << 20;
	int n = 0, devices = 0;

	CHECK(cudaGetDeviceCount(&devices));
	for (int d = 1; d < devices && n + 2 <= max; d++) {
		pairs[n].src = 0;
		pairs[n].dst = d;
		pairs[n].bytes_per_s = p2p_rate(0, d, bytes, &pairs[n].peer_access);
		fprintf(stderr, "perfkit-peaks: GPU 0 -> GPU %d  %8.1f GB/s%s\n", d,
			pairs[n].bytes_per_s / 1e9, pairs[n].peer_access ? "" : " (no peer access)");
		n++;
		pairs[n].src = d;
		pairs[n].dst = 0;
		pairs[n].bytes_per_s = p2p_rate(d, 0, bytes, &pairs[n].peer_access);
		n++;
	}
	return n;
}

static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	bool measure = argc > 1 && !strcmp(argv[1], "--measure");
	cudaDeviceProp p;
	char uuid[64];
	const unsigned char *u;

	if (argc == 3 && !strcmp(argv[1], "--record-cost"))
		return record_cost(argv[2]);
	if (argc != 2 || (!measure && strcmp(argv[1], "--identify"))) {
		fprintf(stderr, "usage: perfkit-peaks --identify | --measure | --record-cost FILE\n");
		return 2;
	}
	CHECK(cudaGetDeviceProperties(&p, 0));
	u = (const unsigned char *)p.uuid.bytes;
	snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	printf("{\"gpu_name\":");
	put_json_string(p.name);
	printf(",\"gpu_uuid\":");
	put_json_string(uuid);
	if (!measure) {
		printf("}\n");
		return 0;
	}

	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	int sms = p.multiProcessorCount;
	size_t l2 = (size_t)p.l2CacheSize;
	size_t free_b = 0, total_b = 0;
	CHECK(cudaMemGetInfo(&free_b, &total_b));

	struct sweep_point sweep[16];
	int nsweep = 0;
	double l2_bw = 0, dram_bw = 0;
	for (size_t bytes = (size_t)2 << 20; bytes <= ((size_t)2 << 30) && bytes < free_b / 2 && nsweep < 16;
	     bytes *= 2) {
		double bw = bandwidth(bytes, sms, e0, e1);
		sweep[nsweep].bytes = bytes;
		sweep[nsweep].bytes_per_s = bw;
		nsweep++;
		fprintf(stderr, "perfkit-peaks: %8zu KiB  %8.1f GB/s\n", bytes >> 10, bw / 1e9);
		if (bytes <= l2 / 2 && bw > l2_bw)
			l2_bw = bw;
		if (bytes >= 8 * l2 && bw > dram_bw)
			dram_bw = bw;
	}
	double f64 = fma_rate<double>(sms, 2, e0, e1);
	double f32 = fma_rate<float>(sms, 2, e0, e1);
	double f16 = fma_rate<__half2>(sms, 4, e0, e1);
	double bf16 = fma_rate<__nv_bfloat162>(sms, 4, e0, e1);
	// the tensor cores per source precision, as the roofline judges a
	// kernel by the precision of most of its tensor FLOPs
	static const struct {
		const char *key;
		cudaDataType_t in, out;
		size_t in_bytes, out_bytes;
		cublasComputeType_t compute;
	} tensor_cases[] = {
		{ "tensor_bf16_flops_per_s", CUDA_R_16BF, CUDA_R_16BF, 2, 2, CUBLAS_COMPUTE_32F },
		{ "tensor_fp16_flops_per_s", CUDA_R_16F, CUDA_R_16F, 2, 2, CUBLAS_COMPUTE_32F },
		{ "tensor_tf32_flops_per_s", CUDA_R_32F, CUDA_R_32F, 4, 4, CUBLAS_COMPUTE_32F_FAST_TF32 },
		{ "tensor_fp64_flops_per_s", CUDA_R_64F, CUDA_R_64F, 8, 8, CUBLAS_COMPUTE_64F },
	};
	enum { NTENSOR = 4 };
	static_assert(sizeof(tensor_cases) / sizeof(tensor_cases[0]) == NTENSOR, "one rate per case");
	const int ntensor = NTENSOR;
	double tensor[NTENSOR];
	for (int i = 0; i < ntensor; i++) {
		tensor[i] = tensor_gemm(tensor_cases[i].in, tensor_cases[i].out, tensor_cases[i].in_bytes,
					tensor_cases[i].out_bytes, tensor_cases[i].compute, e0, e1);
		fprintf(stderr, "perfkit-peaks: %s %8.1f TFLOP/s\n", tensor_cases[i].key, tensor[i] / 1e12);
	}
	struct p2p_pair pairs[32];
	int npairs = measure_p2p(pairs, 32);
	double p2p = 0;
	for (int i = 0; i < npairs; i++)
		if (pairs[i].bytes_per_s > p2p)
			p2p = pairs[i].bytes_per_s;

	printf(",\"peaks\":{\"dram_bytes_per_s\":%.6g,\"l2_bytes_per_s\":%.6g,\"fp64_flops_per_s\":%.6g,"
	       "\"fp32_flops_per_s\":%.6g,\"fp16_flops_per_s\":%.6g,\"bf16_flops_per_s\":%.6g",
	       dram_bw, l2_bw, f64, f32, f16, bf16);
	for (int i = 0; i < ntensor; i++)
		if (tensor[i] > 0)
			printf(",\"%s\":%.6g", tensor_cases[i].key, tensor[i]);
	if (p2p > 0)
		printf(",\"p2p_bytes_per_s\":%.6g", p2p);
	printf("},\"p2p\":[");
	for (int i = 0; i < npairs; i++)
		printf("%s{\"src\":%d,\"dst\":%d,\"peer_access\":%s,\"bytes_per_s\":%.6g}", i ? "," : "",
		       pairs[i].src, pairs[i].dst, pairs[i].peer_access ? "true" : "false", pairs[i].bytes_per_s);
	printf("],\"sweep\":[");
	for (int i = 0; i < nsweep; i++)
		printf("%s{\"working_set_bytes\":%zu,\"bytes_per_s\":%.6g}", i ? "," : "", sweep[i].bytes,
		       sweep[i].bytes_per_s);
	printf("]}\n");
	return 0;
}
