// pm_kernels.cu - long kernels whose hardware use is known, for checking
// sampled GPU metrics (`perfkit run --gpu-metrics`) against ncu
// (tests/gpu/pm_sampling.sh).
//
//   pm_kernels stream [LAUNCHES]  a grid-stride triad a[i] = b[i] + s*c[i]
//                                 over 3 x 1 GiB, 8 passes per launch: DRAM
//                                 bound, tens of ms per launch
//   pm_kernels sgemm [LAUNCHES]   a tiled FP32 SIMT matrix product (FFMA,
//                                 no tensor cores), 4096^3
//   pm_kernels small [LAUNCHES]   a kernel of 4 blocks spinning ~20 ms: few
//                                 SMs busy
//   pm_kernels h2d [COPIES]       256 MiB copies from pinned host memory to
//                                 the GPU, back to back: the PCIe link busy
//   pm_kernels peer [COPIES]      256 MiB copies from GPU 0 to GPU 1 with
//                                 peer access, back to back, while GPU 1
//                                 runs triads: two GPUs sampled by one
//                                 process, the link between them busy
//                                 (GPU 0 sending, GPU 1 receiving)
// Each mode sleeps 50 ms before and after its kernels, so idle samples
// frame the busy ones.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <cuda_runtime.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));         \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

__global__ void triad(float *a, const float *b, const float *c, float s, size_t n, int passes)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (int p = 0; p < passes; p++)
		for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
			a[i] = b[i] + s * c[i];
}

#define TILE 32
__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0;

	for (int t = 0; t < n; t += TILE) {
		As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
		Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
		__syncthreads();
	}
	C[row * n + col] = acc;
}

__global__ void spin(unsigned long long cycles, int *out)
{
	unsigned long long start = clock64();

	while (clock64() - start < cycles)
		;
	if (threadIdx.x == 0)
		out[blockIdx.x] = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "stream";
	int launches = argc > 2 ? atoi(argv[2]) : 0;

	CHECK(cudaFree(0));
	usleep(50000);
	if (!strcmp(mode, "stream")) {
		size_t n = (size_t)1 << 28; // 1 GiB of floats per array
		float *a, *b, *c;

		CHECK(cudaMalloc(&a, n * 4));
		CHECK(cudaMalloc(&b, n * 4));
		CHECK(cudaMalloc(&c, n * 4));
		// not zeros: a GPU may keep zero pages compressed
		CHECK(cudaMemset(b, 0x3f, n * 4));
		CHECK(cudaMemset(c, 0x3e, n * 4));
		CHECK(cudaDeviceSynchronize());
		for (int i = 0; i < (launches ? launches : 10); i++)
			triad<<<132 * 8, 512>>>(a, b, c, 2.0f, n, 8);
	} else if (!strcmp(mode, "sgemm")) {
		int n = 4096;
		float *A, *B, *C;

		CHECK(cudaMalloc(&A, (size_t)n * n * 4));
		CHECK(cudaMalloc(&B, (size_t)n * n * 4));
		CHECK(cudaMalloc(&C, (size_t)n * n * 4));
		CHECK(cudaMemset(A, 0, (size_t)n * n * 4));
		CHECK(cudaMemset(B, 0, (size_t)n * n * 4));
		CHECK(cudaDeviceSynchronize());
		for (int i = 0; i < (launches ? launches : 10); i++)
			sgemm<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(A, B, C, n);
	} else if (!strcmp(mode, "small")) {
		int *out;
		int rate_khz = 0;

		CHECK(cudaMalloc(&out, 64 * sizeof(int)));
		CHECK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
		for (int i = 0; i < (launches ? launches : 10); i++)
			spin<<<4, 128>>>((unsigned long long)rate_khz * 20, out); // ~20 ms
	} else if (!strcmp(mode, "h2d")) {
		size_t bytes = (size_t)256 << 20;
		void *host, *dev;

		CHECK(cudaMallocHost(&host, bytes));
		CHECK(cudaMalloc(&dev, bytes));
		memset(host, 1, bytes);
		for (int i = 0; i < (launches ? launches : 20); i++)
			CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, 0));
	} else if (!strcmp(mode, "peer")) {
		size_t bytes = (size_t)256 << 20, n = (size_t)1 << 26;
		int count = 0;
		float *src, *dst, *a, *b, *c;
		cudaStream_t s1;

		CHECK(cudaGetDeviceCount(&count));
		if (count < 2) {
			fprintf(stderr, "pm_kernels peer: needs two GPUs, found %d\n", count);
			return 2;
		}
		CHECK(cudaSetDevice(1));
		CHECK(cudaMalloc(&dst, bytes));
		CHECK(cudaMalloc(&a, n * 4));
		CHECK(cudaMalloc(&b, n * 4));
		CHECK(cudaMalloc(&c, n * 4));
		CHECK(cudaMemset(b, 0x3f, n * 4));
		CHECK(cudaMemset(c, 0x3e, n * 4));
		CHECK(cudaStreamCreate(&s1));
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaSetDevice(0));
		CHECK(cudaDeviceEnablePeerAccess(1, 0));
		CHECK(cudaMalloc(&src, bytes));
		CHECK(cudaMemset(src, 0x3f, bytes));
		CHECK(cudaDeviceSynchronize());
		for (int i = 0; i < (launches ? launches : 100); i++) {
			CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, 0));
			if (i % 8 == 0) {
				CHECK(cudaSetDevice(1));
				triad<<<132 * 8, 512, 0, s1>>>(a, b, c, 2.0f, n, 8);
				CHECK(cudaSetDevice(0));
			}
		}
		CHECK(cudaSetDevice(1));
		CHECK(cudaDeviceSynchronize());
		CHECK(cudaSetDevice(0));
	} else {
		fprintf(stderr, "usage: pm_kernels stream|sgemm|small|h2d|peer [LAUNCHES]\n");
		return 2;
	}
	CHECK(cudaDeviceSynchronize());
	usleep(50000);
	printf("done %s\n", mode);
	return 0;
}
