/* phases_no_nvtx.cu - a program in three phases and without NVTX, as many
 * simulation codes are:
 *
 *   warm-up   allocations, a 64 MiB pageable upload of the initial state,
 *             init_field on three fields (3 launches) and normalize once
 *   loop      200 identical steps: a 256-byte pageable cudaMemcpy of this
 *             step's coefficients, then stencil, relax and accumulate on
 *             16M-float fields (memory-bound kernels, about 0.2 ms a step)
 *   teardown  reduce_sum on three fields (3 launches), their partial sums
 *             and one whole field copied back, the CPU's check, the frees
 *
 * init_field and reduce_sum are each launched 3 times, fewer than any
 * kernel of the loop: the loop is found only from its repeating launches.
 * Everything runs on the legacy default stream.
 *
 * Prints steps, kernels_per_step, step_ms, sum. */
#include <cmath>

#include "corpus.h"

static const size_t N = (size_t)16 << 20; /* floats a field: 64 MiB */
static const int COEFS = 64;
static const int STEPS = 200;
static const int PARTIALS = 1024; /* blocks of reduce_sum */

static unsigned grid(size_t n) { return (unsigned)((n + 255) / 256); }

__global__ void init_field(float *f, size_t n, float seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		f[i] = 0.5f + 0.25f * __sinf((float)(i % 4096) * 1e-3f * seed);
}

__global__ void normalize(float *f, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		f[i] = fminf(fmaxf(f[i], 0.0f), 1.0f);
}

__global__ void stencil(const float *a, float *b, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n) {
		float left = a[i > 0 ? i - 1 : i], right = a[i + 1 < n ? i + 1 : i];
		b[i] = (left + a[i] + right) * (1.0f / 3.0f);
	}
}

__global__ void relax(const float *b, float *c, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = 0.5f * (b[i] + c[i]);
}

__global__ void accumulate(const float *c, float *a, float *d, const float *coef, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n) {
		d[i] += c[i] * coef[i % COEFS] * 1e-3f;
		a[i] = 0.9f * a[i] + 0.1f * c[i];
	}
}

__global__ void reduce_sum(const float *f, size_t n, float *partial)
{
	__shared__ float sum[256];
	float v = 0.0f;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		v += f[i];
	sum[threadIdx.x] = v;
	__syncthreads();
	for (int half = blockDim.x / 2; half > 0; half /= 2) {
		if (threadIdx.x < half)
			sum[threadIdx.x] += sum[threadIdx.x + half];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sum[0];
}

static double device_sum(const float *f, float *partial)
{
	std::vector<float> host(PARTIALS);
	reduce_sum<<<PARTIALS, 256>>>(f, N, partial);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(host.data(), partial, PARTIALS * sizeof(float), cudaMemcpyDeviceToHost));
	double s = 0;
	for (float p : host)
		s += p;
	return s;
}

int main()
{
	/* warm-up */
	float *a, *b, *c, *d, *coef, *partial;
	CHECK(cudaMalloc(&a, N * sizeof(float)));
	CHECK(cudaMalloc(&b, N * sizeof(float)));
	CHECK(cudaMalloc(&c, N * sizeof(float)));
	CHECK(cudaMalloc(&d, N * sizeof(float)));
	CHECK(cudaMalloc(&coef, COEFS * sizeof(float)));
	CHECK(cudaMalloc(&partial, PARTIALS * sizeof(float)));
	std::vector<float> host(N);
	for (size_t i = 0; i < N; i++)
		host[i] = (float)(i % 1000) * 1e-3f;
	CHECK(cudaMemcpy(a, host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
	init_field<<<grid(N), 256>>>(b, N, 1.0f);
	CHECK(cudaGetLastError());
	init_field<<<grid(N), 256>>>(c, N, 2.0f);
	CHECK(cudaGetLastError());
	init_field<<<grid(N), 256>>>(d, N, 0.0f);
	CHECK(cudaGetLastError());
	normalize<<<grid(N), 256>>>(a, N);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	/* the loop */
	float h_coef[COEFS];
	auto step = [&](int s) {
		for (int k = 0; k < COEFS; k++)
			h_coef[k] = 0.5f + 0.25f * sinf(0.1f * (float)s + (float)k);
		CHECK(cudaMemcpy(coef, h_coef, sizeof h_coef, cudaMemcpyHostToDevice));
		stencil<<<grid(N), 256>>>(a, b, N);
		CHECK(cudaGetLastError());
		relax<<<grid(N), 256>>>(b, c, N);
		CHECK(cudaGetLastError());
		accumulate<<<grid(N), 256>>>(c, a, d, coef, N);
		CHECK(cudaGetLastError());
	};
	double step_ms = time_steps(0, STEPS, 10, step, [] { CHECK(cudaDeviceSynchronize()); });

	/* teardown */
	double sum_b = device_sum(b, partial), sum_c = device_sum(c, partial);
	double sum_d = device_sum(d, partial);
	CHECK(cudaMemcpy(host.data(), d, N * sizeof(float), cudaMemcpyDeviceToHost));
	double want_d = 0;
	bool finite = std::isfinite(sum_b) && std::isfinite(sum_c);
	for (size_t i = 0; i < N; i++) {
		finite = finite && std::isfinite(host[i]);
		want_d += host[i];
	}
	if (!finite || !close_to(sum_d, want_d, 1e-4)) {
		fprintf(stderr, "phases_no_nvtx: the device's sum %.6g differs from the CPU's %.6g\n",
			sum_d, want_d);
		return 1;
	}
	for (float *p : {a, b, c, d, coef, partial})
		CHECK(cudaFree(p));
	printf("steps %d\nkernels_per_step 3\nstep_ms %.4f\nsum %.6g\n", STEPS, step_ms,
	       sum_b + sum_c + sum_d);
	return 0;
}
