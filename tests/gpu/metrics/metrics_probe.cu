// metrics_probe.cu - kernels with known work for checking `perfkit run
// --metrics=roofline` against ncu: FP32/FP64/FP16 axpy over 16M elements,
// an FP32 kernel with 64 FMAs per element, a cuBLAS SGEMM and a BF16 tensor
// GEMM. Each runs twice. Prints the expected FMA counts and DRAM bytes.
//
// Before each of them l2_clean reads a buffer four times the L2 size, so that
// no dirty line of earlier work is written back during the measured kernel:
// both perfkit and ncu then measure each kernel from the same clean cache,
// and their DRAM bytes can be compared (roofline_check.py skips l2_clean).
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define N (16 << 20)

__global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void daxpy(double a, const double *x, double *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void haxpy2(__half2 a, const __half2 *x, __half2 *y, int n2)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n2)
		y[i] = __hfma2(a, x[i], y[i]);
}

__global__ void fma64(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
#pragma unroll
		for (int k = 0; k < 64; k++)
			v = fmaf(v, 0.999f, 0.001f);
		y[i] = v;
	}
}

// Reads every element; writes only if the sum is NaN, which it never is, so
// the loads are kept and nothing is dirtied.
__global__ void l2_clean(const float4 *buf, size_t n, float *sink)
{
	float s = 0.0f;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 v = buf[i];
		s += v.x + v.y + v.z + v.w;
	}
	if (s != s)
		*sink = s;
}

static float4 *clean_buf;
static size_t clean_n;
static float *clean_sink;

static void clean_l2(void)
{
	l2_clean<<<1024, 256>>>(clean_buf, clean_n, clean_sink);
	cudaDeviceSynchronize();
}

int main()
{
	float *x, *y;
	double *dx, *dy;
	__half2 *hx, *hy;
	cublasHandle_t h;
	const int m = 1024;
	float one = 1.0f, zero = 0.0f;
	float *A, *B, *C;
	__nv_bfloat16 *bA, *bB, *bC;

	cudaMalloc(&x, sizeof(float) * N);
	cudaMalloc(&y, sizeof(float) * N);
	cudaMalloc(&dx, sizeof(double) * N);
	cudaMalloc(&dy, sizeof(double) * N);
	cudaMalloc(&hx, sizeof(__half2) * N / 2);
	cudaMalloc(&hy, sizeof(__half2) * N / 2);
	cudaMemset(x, 0, sizeof(float) * N);
	cudaMemset(y, 0, sizeof(float) * N);
	cudaMemset(dx, 0, sizeof(double) * N);
	cudaMemset(dy, 0, sizeof(double) * N);
	cudaMemset(hx, 0, sizeof(__half2) * N / 2);
	cudaMemset(hy, 0, sizeof(__half2) * N / 2);
	cudaMalloc(&A, sizeof(float) * m * m);
	cudaMalloc(&B, sizeof(float) * m * m);
	cudaMalloc(&C, sizeof(float) * m * m);
	cudaMalloc(&bA, sizeof(*bA) * m * m);
	cudaMalloc(&bB, sizeof(*bB) * m * m);
	cudaMalloc(&bC, sizeof(*bC) * m * m);
	cudaMemset(A, 0, sizeof(float) * m * m);
	cudaMemset(B, 0, sizeof(float) * m * m);
	cudaMemset(bA, 0, sizeof(*bA) * m * m);
	cudaMemset(bB, 0, sizeof(*bB) * m * m);
	{
		int l2 = 0;

		cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
		clean_n = (size_t)4 * (size_t)l2 / sizeof(float4);
		cudaMalloc(&clean_buf, clean_n * sizeof(float4));
		cudaMemset(clean_buf, 0, clean_n * sizeof(float4));
		cudaMalloc(&clean_sink, sizeof(float));
	}
	cublasCreate(&h);
	// cuBLAS picks its kernels and workspace on the first call: outside any range
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, A, m, B, m, &zero, C, m);
	cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, bA, CUDA_R_16BF, m, bB, CUDA_R_16BF, m,
		     &zero, bC, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	for (int r = 0; r < 2; r++) {
		clean_l2();
		saxpy<<<N / 256, 256>>>(2.0f, x, y, N);
		clean_l2();
		daxpy<<<N / 256, 256>>>(2.0, dx, dy, N);
		clean_l2();
		haxpy2<<<N / 2 / 256, 256>>>(__floats2half2_rn(2.0f, 2.0f), hx, hy, N / 2);
		clean_l2();
		fma64<<<N / 256, 256>>>(x, y, N);
		clean_l2();
		cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, A, m, B, m, &zero, C, m);
		clean_l2();
		cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, bA, CUDA_R_16BF, m, bB, CUDA_R_16BF, m,
			     &zero, bC, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	}
	cudaDeviceSynchronize();
	printf("expected: saxpy %d FFMA, %zu B read, %zu B written; fma64 %lld FFMA; sgemm %lld FLOP\n", N,
	       sizeof(float) * 2 * (size_t)N, sizeof(float) * (size_t)N, 64LL * N, 2LL * m * m * m);
	cublasDestroy(h);
	return 0;
}
