// metrics_probe.cu - kernels with known work for checking `perfkit run
// --metrics=roofline` against ncu: FP32/FP64/FP16 axpy over 16M elements,
// an FP32 kernel with 64 FMAs per element, a cuBLAS SGEMM and a BF16 tensor
// GEMM. Each runs twice. Prints the expected FMA counts and DRAM bytes.
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
	cublasCreate(&h);
	for (int r = 0; r < 2; r++) {
		saxpy<<<N / 256, 256>>>(2.0f, x, y, N);
		daxpy<<<N / 256, 256>>>(2.0, dx, dy, N);
		haxpy2<<<N / 2 / 256, 256>>>(__floats2half2_rn(2.0f, 2.0f), hx, hy, N / 2);
		fma64<<<N / 256, 256>>>(x, y, N);
		cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, A, m, B, m, &zero, C, m);
		cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, bA, CUDA_R_16BF, m, bB, CUDA_R_16BF, m,
			     &zero, bC, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	}
	cudaDeviceSynchronize();
	printf("expected: saxpy %d FFMA, %zu B read, %zu B written; fma64 %lld FFMA; sgemm %lld FLOP\n", N,
	       sizeof(float) * 2 * (size_t)N, sizeof(float) * (size_t)N, 64LL * N, 2LL * m * m * m);
	cublasDestroy(h);
	return 0;
}
