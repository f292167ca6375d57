/* rollout.cu - kernels of the rollout workload (seed 001): the naive FP32
 * per-stage kernels and the fused FP32/FP16/BF16 kernels. See rollout.h. */
#include "rollout.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

namespace {

constexpr int G = ROLLOUT_GPU_GRID;
constexpr int ROWPX = G + 2; /* one halo pixel each side */
constexpr int THREADS = 256;
constexpr double NORM_EPS = 1e-5; /* ROLLOUT_NORM_EPS of workloads/rollout_ref.h */

/* Mirror of rollout_noise_bits()/rollout_noise_normal() in
 * workloads/rollout_ref.c: the two must stay bit-identical. */
__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Normals 2k and 2k+1 share one hash (cos and sin of Box-Muller). FAST
 * takes the hardware approximations (a few ulp of float): right for 16-bit
 * storage, whose rounding is far coarser, where the exact library calls
 * would make the kernel arithmetic-bound instead of memory-bound. */
template <bool FAST = false>
__device__ __forceinline__ float2 noise_pair(uint64_t key, uint64_t pair)
{
	uint64_t bits = mix64(key + pair * 0x9e3779b97f4a7c15ull);
	float u1 = (float)((bits >> 40) + 1) * 5.9604644775390625e-08f; /* 2^-24 */
	float u2 = (float)(bits & 0xffffffu) * 5.9604644775390625e-08f;
	float rad = sqrtf(-2.0f * (FAST ? __logf(u1) : logf(u1))), s, c;

	if (FAST)
		__sincosf(6.283185307179586f * u2, &s, &c);
	else
		sincospif(2.0f * u2, &s, &c);
	return make_float2(rad * c, rad * s);
}

__device__ __forceinline__ float noise_one(uint64_t key, uint64_t index)
{
	float2 p = noise_pair(key, index >> 1);

	return (index & 1) ? p.y : p.x;
}

/* tanh.approx.f32: one MUFU instruction, relative error about 2^-11. */
__device__ __forceinline__ float tanh_approx(float x)
{
	float y;

	asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

template <bool FAST = false>
__device__ __forceinline__ float gelu(float x)
{
	const float k = 0.7978845608028654f;
	float u = k * (x + 0.044715f * x * x * x);

	return 0.5f * x * (1.0f + (FAST ? tanh_approx(u) : tanhf(u)));
}

/* Eight consecutive elements of type T as floats, moved as 16-byte vectors. */
template <typename T> struct vec8;

template <> struct vec8<float> {
	static __device__ __forceinline__ void load(const float *p, float v[8])
	{
		float4 a = *reinterpret_cast<const float4 *>(p);
		float4 b = *reinterpret_cast<const float4 *>(p + 4);

		v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
		v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
	}
	static __device__ __forceinline__ void store(float *p, const float v[8])
	{
		*reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
		*reinterpret_cast<float4 *>(p + 4) = make_float4(v[4], v[5], v[6], v[7]);
	}
};

template <> struct vec8<__half> {
	static __device__ __forceinline__ void load(const __half *p, float v[8])
	{
		int4 raw = *reinterpret_cast<const int4 *>(p);
		const __half2 *h = reinterpret_cast<const __half2 *>(&raw);

		for (int i = 0; i < 4; i++) {
			float2 f = __half22float2(h[i]);
			v[2 * i] = f.x;
			v[2 * i + 1] = f.y;
		}
	}
	static __device__ __forceinline__ void store(__half *p, const float v[8])
	{
		int4 raw;
		__half2 *h = reinterpret_cast<__half2 *>(&raw);

		for (int i = 0; i < 4; i++)
			h[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
		*reinterpret_cast<int4 *>(p) = raw;
	}
};

template <> struct vec8<__nv_bfloat16> {
	static __device__ __forceinline__ void load(const __nv_bfloat16 *p, float v[8])
	{
		int4 raw = *reinterpret_cast<const int4 *>(p);
		const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&raw);

		for (int i = 0; i < 4; i++) {
			float2 f = __bfloat1622float2(h[i]);
			v[2 * i] = f.x;
			v[2 * i + 1] = f.y;
		}
	}
	static __device__ __forceinline__ void store(__nv_bfloat16 *p, const float v[8])
	{
		int4 raw;
		__nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&raw);

		for (int i = 0; i < 4; i++)
			h[i] = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
		*reinterpret_cast<int4 *>(p) = raw;
	}
};

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

/* mean and 1/std from a realization's sum and sum of squares. */
__device__ __forceinline__ float2 finish_stats(double sum, double sumsq)
{
	const double n = (double)G * G;
	double mean = sum / n, var = sumsq / n - mean * mean;

	if (var < 0.0)
		var = 0.0;
	return make_float2((float)mean, (float)(1.0 / sqrt(var + NORM_EPS)));
}

/* ---------------- naive FP32 stages ---------------- */

__global__ void naive_conv(const float *x, const float *w, float *y, int R, int C)
{
	size_t n = (size_t)R * G * G * C;
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= n)
		return;
	int co = (int)(e % C);
	size_t pix = e / C;
	int ww = (int)(pix % G), h = (int)((pix / G) % G);
	const float *xr = x + (pix / (G * G)) * G * G * C;
	float acc = 0.0f;

	for (int tap = 0; tap < 9; tap++) {
		int hh = h + tap / 3 - 1, wx = ww + tap % 3 - 1;

		if (hh < 0 || hh >= G || wx < 0 || wx >= G)
			continue;
		const float *in = xr + ((size_t)hh * G + wx) * C;
		const float *wt = w + (size_t)tap * C * C + co;
		for (int ci = 0; ci < C; ci++)
			acc += in[ci] * wt[(size_t)ci * C];
	}
	y[e] = acc;
}

/* One block per (row, realization): per-channel sums of the row. */
__global__ void naive_stats_rows(const float *y, float2 *partial, int C)
{
	__shared__ float s[THREADS], ss[THREADS];
	int h = blockIdx.x, r = blockIdx.y, t = threadIdx.x;
	int lanes = THREADS / C, c = t % C, lane = t / C;
	float a = 0.0f, b = 0.0f;

	if (lane < lanes)
		for (int p = lane; p < G; p += lanes) {
			float v = y[(((size_t)r * G + h) * G + p) * C + c];
			a += v;
			b += v * v;
		}
	s[t] = a;
	ss[t] = b;
	__syncthreads();
	if (t < C) {
		a = 0.0f;
		b = 0.0f;
		for (int l = 0; l < lanes; l++) {
			a += s[l * C + t];
			b += ss[l * C + t];
		}
		partial[((size_t)r * G + h) * C + t] = make_float2(a, b);
	}
}

__global__ void naive_stats_final(const float2 *partial, float2 *stats, int C)
{
	int r = blockIdx.x, c = threadIdx.x;
	double a = 0.0, b = 0.0;

	for (int h = 0; h < G; h++) {
		float2 v = partial[((size_t)r * G + h) * C + c];
		a += v.x;
		b += v.y;
	}
	stats[(size_t)r * C + c] = finish_stats(a, b);
}

__global__ void naive_normalize(const float *y, const float2 *stats, float *z, int R, int C)
{
	size_t n = (size_t)R * G * G * C;
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= n)
		return;
	float2 st = stats[(e / ((size_t)G * G * C)) * C + e % C];
	z[e] = (y[e] - st.x) * st.y;
}

__global__ void naive_gelu(const float *z, float *g, size_t n)
{
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (e < n)
		g[e] = gelu(z[e]);
}

__global__ void naive_noise(const float *g, float *x, size_t n, uint64_t key, float sigma)
{
	size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (e < n)
		x[e] = g[e] + sigma * noise_one(key, e);
}

/* ---------------- fused stages ---------------- */

/* The common end of both conv kernels: out holds the block's row as floats
 * [pixel][channel]. Stores it as T, sums per channel, and lets the last
 * block of the realization turn the 128 row sums into (mean, 1/std), so the
 * statistics cost no extra kernel and no atomics on floats (deterministic). */
template <typename T, int C>
__device__ __forceinline__ void conv_epilogue(const float *out, T *y, float2 *partial,
					      float2 *stats, unsigned *counters, int r, int h)
{
	constexpr int GROUPS = C / 8;
	constexpr int LANES = THREADS / GROUPS;
	__shared__ float2 red[THREADS / 32][C];
	__shared__ bool last;
	int t = threadIdx.x, cg = t % GROUPS, lane = t & 31, warp = t >> 5;
	float s[8], ss[8];

	for (int j = 0; j < 8; j++)
		s[j] = ss[j] = 0.0f;
	for (int p = t / GROUPS; p < G; p += LANES) {
		float v[8];

		vec8<float>::load(out + p * C + cg * 8, v);
		vec8<T>::store(y + (((size_t)r * G + h) * G + p) * C + cg * 8, v);
		for (int j = 0; j < 8; j++) {
			s[j] += v[j];
			ss[j] += v[j] * v[j];
		}
	}
	for (int off = 16; off >= GROUPS; off >>= 1)
		for (int j = 0; j < 8; j++) {
			s[j] += __shfl_xor_sync(0xffffffffu, s[j], off);
			ss[j] += __shfl_xor_sync(0xffffffffu, ss[j], off);
		}
	if (lane < GROUPS)
		for (int j = 0; j < 8; j++)
			red[warp][lane * 8 + j] = make_float2(s[j], ss[j]);
	__syncthreads();
	if (t < C) {
		float a = 0.0f, b = 0.0f;

		for (int wi = 0; wi < THREADS / 32; wi++) {
			a += red[wi][t].x;
			b += red[wi][t].y;
		}
		partial[((size_t)r * G + h) * C + t] = make_float2(a, b);
		__threadfence();
	}
	__syncthreads();
	if (t == 0)
		last = atomicAdd(&counters[r], 1u) == G - 1;
	__syncthreads();
	if (!last)
		return;
	if (t < C) {
		double a = 0.0, b = 0.0;

		for (int hh = 0; hh < G; hh++) {
			/* __ldcg: the other blocks' sums are in L2, not in this SM's L1. */
			float2 v = __ldcg(&partial[((size_t)r * G + hh) * C + t]);
			a += v.x;
			b += v.y;
		}
		stats[(size_t)r * C + t] = finish_stats(a, b);
	}
	if (t == 0)
		counters[r] = 0;
}

/* 16-bit conv on the tensor cores: one block per (row, realization); the
 * three input rows with halo and all weights sit in shared memory; each warp
 * computes 16 pixels x C channels as an implicit GEMM over K = 9 taps x C
 * input channels, accumulating in FP32. Channels innermost makes every A
 * tile a plain row-major 16x16 matrix with ldm = C. */
template <typename T, int C>
__global__ void __launch_bounds__(THREADS) fused_conv_mma(const T *x, const T *w, T *y,
							  float2 *partial, float2 *stats,
							  unsigned *counters)
{
	using namespace nvcuda;
	extern __shared__ __align__(128) unsigned char smem[];
	T *xs = reinterpret_cast<T *>(smem);
	T *ws = xs + 3 * ROWPX * C;
	float *out = reinterpret_cast<float *>(smem); /* reuses xs after the MMAs */
	int h = blockIdx.x, r = blockIdx.y, t = threadIdx.x, warp = t >> 5;
	constexpr int VROW = G * C * (int)sizeof(T) / 16; /* 16-byte vectors per row */

	for (int v = t; v < 3 * VROW; v += THREADS) {
		int row = v / VROW, vi = v % VROW, hh = h + row - 1;
		int4 val = make_int4(0, 0, 0, 0);

		if (hh >= 0 && hh < G)
			val = reinterpret_cast<const int4 *>(x + ((size_t)r * G + hh) * G * C)[vi];
		reinterpret_cast<int4 *>(xs + (row * ROWPX + 1) * C)[vi] = val;
	}
	for (int i = t; i < 3 * 2 * C; i += THREADS) {
		int row = i / (2 * C), side = (i / C) % 2, c = i % C;
		xs[(row * ROWPX + side * (ROWPX - 1)) * C + c] = from_f<T>(0.0f);
	}
	for (int v = t; v < 9 * C * C * (int)sizeof(T) / 16; v += THREADS)
		reinterpret_cast<int4 *>(ws)[v] = reinterpret_cast<const int4 *>(w)[v];
	__syncthreads();

	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C / 16];
	for (int nt = 0; nt < C / 16; nt++)
		wmma::fill_fragment(acc[nt], 0.0f);
	for (int tap = 0; tap < 9; tap++) {
		int dy = tap / 3, dx = tap % 3;

		for (int kc = 0; kc < C / 16; kc++) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;

			wmma::load_matrix_sync(a, xs + (dy * ROWPX + warp * 16 + dx) * C + kc * 16, C);
			for (int nt = 0; nt < C / 16; nt++) {
				wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;

				wmma::load_matrix_sync(b, ws + (tap * C + kc * 16) * C + nt * 16, C);
				wmma::mma_sync(acc[nt], a, b, acc[nt]);
			}
		}
	}
	__syncthreads();
	for (int nt = 0; nt < C / 16; nt++)
		wmma::store_matrix_sync(out + warp * 16 * C + nt * 16, acc[nt], C, wmma::mem_row_major);
	__syncthreads();
	conv_epilogue<T, C>(out, y, partial, stats, counters, r, h);
}

/* FP32 conv on the CUDA cores, same tiling: each thread computes C/2
 * channels of one pixel. The input tile's pixel stride is padded to C+1
 * floats so that a warp's 32 pixels fall in 32 different banks; weights are
 * read as float4 broadcasts. */
template <int C>
__global__ void __launch_bounds__(THREADS) fused_conv_f32(const float *x, const float *w,
							  float *y, float2 *partial,
							  float2 *stats, unsigned *counters)
{
	constexpr int CP = C + 1;
	constexpr int HALF = C / 2;
	extern __shared__ __align__(128) unsigned char smem[];
	float *ws = reinterpret_cast<float *>(smem);
	float *xs = ws + 9 * C * C;
	float *out = xs; /* reuses xs after the products */
	int h = blockIdx.x, r = blockIdx.y, t = threadIdx.x;
	constexpr int VROW = G * C / 4;

	for (int v = t; v < 3 * VROW; v += THREADS) {
		int row = v / VROW, e = (v % VROW) * 4, px = e / C, c = e % C, hh = h + row - 1;
		float4 val = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		float *d = xs + (row * ROWPX + px + 1) * CP + c;

		if (hh >= 0 && hh < G)
			val = reinterpret_cast<const float4 *>(x + ((size_t)r * G + hh) * G * C)[v % VROW];
		d[0] = val.x; d[1] = val.y; d[2] = val.z; d[3] = val.w;
	}
	for (int i = t; i < 3 * 2 * C; i += THREADS) {
		int row = i / (2 * C), side = (i / C) % 2, c = i % C;
		xs[(row * ROWPX + side * (ROWPX - 1)) * CP + c] = 0.0f;
	}
	for (int v = t; v < 9 * C * C / 4; v += THREADS)
		reinterpret_cast<float4 *>(ws)[v] = reinterpret_cast<const float4 *>(w)[v];
	__syncthreads();

	int p = t % G, co0 = (t / G) * HALF;
	float acc[HALF];
	for (int j = 0; j < HALF; j++)
		acc[j] = 0.0f;
	for (int tap = 0; tap < 9; tap++) {
		const float *in = xs + ((tap / 3) * ROWPX + p + tap % 3) * CP;
		const float4 *wt = reinterpret_cast<const float4 *>(ws + tap * C * C + co0);

		for (int ci = 0; ci < C; ci++) {
			float a = in[ci];

			for (int j = 0; j < HALF / 4; j++) {
				float4 wv = wt[ci * C / 4 + j];
				acc[4 * j] += a * wv.x;
				acc[4 * j + 1] += a * wv.y;
				acc[4 * j + 2] += a * wv.z;
				acc[4 * j + 3] += a * wv.w;
			}
		}
	}
	__syncthreads();
	for (int j = 0; j < HALF; j++)
		out[p * C + co0 + j] = acc[j];
	__syncthreads();
	conv_epilogue<float, C>(out, y, partial, stats, counters, r, h);
}

/* Normalise + GELU + noise, 8 elements per 16-byte access, four accesses in
 * flight per thread; all of a block's elements belong to one realization. */
constexpr int NORM_VPT = 4;

template <typename T, int C>
__global__ void __launch_bounds__(THREADS) fused_norm(const T *y, const float2 *stats, T *x,
						      uint64_t key, float sigma)
{
	__shared__ float2 st[C];
	int r = blockIdx.y, t = threadIdx.x;
	size_t base = (size_t)r * G * G * C;

	if (t < C)
		st[t] = stats[(size_t)r * C + t];
	__syncthreads();

	float v[NORM_VPT][8];
	size_t e0[NORM_VPT];
#pragma unroll
	for (int i = 0; i < NORM_VPT; i++) {
		e0[i] = ((size_t)blockIdx.x * NORM_VPT * THREADS + (size_t)i * THREADS + t) * 8;
		vec8<T>::load(y + base + e0[i], v[i]);
	}
#pragma unroll
	for (int i = 0; i < NORM_VPT; i++) {
		int c0 = (int)(e0[i] % C);

#pragma unroll
		for (int j = 0; j < 8; j += 2) {
			constexpr bool fast = sizeof(T) == 2;
			float2 n = noise_pair<fast>(key, (base + e0[i] + j) >> 1);
			float2 s0 = st[c0 + j], s1 = st[c0 + j + 1];

			v[i][j] = gelu<fast>((v[i][j] - s0.x) * s0.y) + sigma * n.x;
			v[i][j + 1] = gelu<fast>((v[i][j + 1] - s1.x) * s1.y) + sigma * n.y;
		}
		vec8<T>::store(x + base + e0[i], v[i]);
	}
}

template <typename T>
__global__ void from_float_k(const float *src, T *dst, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = from_f<T>(src[i]);
}

template <typename T>
__global__ void to_float_k(const T *src, float *dst, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = to_f(src[i]);
}

unsigned blocks_for(size_t n)
{
	return (unsigned)((n + THREADS - 1) / THREADS);
}

template <typename T, int C>
cudaError_t launch_conv(const void *x, const void *w, void *y, float *partial, float *stats,
			unsigned *counters, int R, cudaStream_t s)
{
	dim3 grid(G, R);

	if constexpr (sizeof(T) == 2) {
		size_t bytes = (3 * ROWPX * C + 9 * C * C) * sizeof(T);
		fused_conv_mma<T, C><<<grid, THREADS, bytes, s>>>(
			(const T *)x, (const T *)w, (T *)y, (float2 *)partial, (float2 *)stats,
			counters);
	} else {
		size_t bytes = (9 * C * C + 3 * ROWPX * (C + 1)) * sizeof(float);
		static bool raised;
		/* Above 48 KB of shared memory a kernel must opt in once. */
		if (!raised) {
			cudaError_t e = cudaFuncSetAttribute(fused_conv_f32<C>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
			if (e != cudaSuccess)
				return e;
			raised = true;
		}
		fused_conv_f32<C><<<grid, THREADS, bytes, s>>>(
			(const float *)x, (const float *)w, (float *)y, (float2 *)partial,
			(float2 *)stats, counters);
	}
	return cudaGetLastError();
}

template <typename T, int C>
cudaError_t launch_norm(const void *y, const float *stats, void *x, int R, uint64_t key,
			float sigma, cudaStream_t s)
{
	dim3 grid((unsigned)((size_t)G * G * C / 8 / (NORM_VPT * THREADS)), R);

	fused_norm<T, C><<<grid, THREADS, 0, s>>>((const T *)y, (const float2 *)stats, (T *)x, key,
						   sigma);
	return cudaGetLastError();
}

} /* namespace */

extern "C" size_t rollout_precision_bytes(enum rollout_precision p)
{
	return p == ROLLOUT_FP32 ? 4 : 2;
}

extern "C" int rollout_fused_supports(int channels)
{
	return channels == 16 || channels == 32;
}

extern "C" cudaError_t rollout_naive_conv(const float *x, const float *w, float *y, int R, int C,
					  cudaStream_t s)
{
	naive_conv<<<blocks_for((size_t)R * G * G * C), THREADS, 0, s>>>(x, w, y, R, C);
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_naive_stats(const float *y, float *partial, float *stats, int R,
					   int C, cudaStream_t s)
{
	if (C > THREADS)
		return cudaErrorInvalidValue;
	naive_stats_rows<<<dim3(G, R), THREADS, 0, s>>>(y, (float2 *)partial, C);
	naive_stats_final<<<R, C, 0, s>>>((const float2 *)partial, (float2 *)stats, C);
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_naive_normalize(const float *y, const float *stats, float *z,
					       int R, int C, cudaStream_t s)
{
	naive_normalize<<<blocks_for((size_t)R * G * G * C), THREADS, 0, s>>>(
		y, (const float2 *)stats, z, R, C);
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_naive_gelu(const float *z, float *g, size_t n, cudaStream_t s)
{
	naive_gelu<<<blocks_for(n), THREADS, 0, s>>>(z, g, n);
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_naive_noise(const float *g, float *x, size_t n, uint64_t key,
					   float sigma, cudaStream_t s)
{
	naive_noise<<<blocks_for(n), THREADS, 0, s>>>(g, x, n, key, sigma);
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_fused_conv_stats(enum rollout_precision p, const void *x,
						const void *w, void *y, float *partial,
						float *stats, unsigned *counters, int R, int C,
						cudaStream_t s)
{
	if (!rollout_fused_supports(C))
		return cudaErrorInvalidValue;
	switch (p) {
	case ROLLOUT_FP32:
		return C == 16 ? launch_conv<float, 16>(x, w, y, partial, stats, counters, R, s)
			       : launch_conv<float, 32>(x, w, y, partial, stats, counters, R, s);
	case ROLLOUT_FP16:
		return C == 16 ? launch_conv<__half, 16>(x, w, y, partial, stats, counters, R, s)
			       : launch_conv<__half, 32>(x, w, y, partial, stats, counters, R, s);
	case ROLLOUT_BF16:
		return C == 16
			? launch_conv<__nv_bfloat16, 16>(x, w, y, partial, stats, counters, R, s)
			: launch_conv<__nv_bfloat16, 32>(x, w, y, partial, stats, counters, R, s);
	}
	return cudaErrorInvalidValue;
}

extern "C" cudaError_t rollout_fused_norm_gelu_noise(enum rollout_precision p, const void *y,
						     const float *stats, void *x, int R, int C,
						     uint64_t key, float sigma, cudaStream_t s)
{
	if (!rollout_fused_supports(C))
		return cudaErrorInvalidValue;
	switch (p) {
	case ROLLOUT_FP32:
		return C == 16 ? launch_norm<float, 16>(y, stats, x, R, key, sigma, s)
			       : launch_norm<float, 32>(y, stats, x, R, key, sigma, s);
	case ROLLOUT_FP16:
		return C == 16 ? launch_norm<__half, 16>(y, stats, x, R, key, sigma, s)
			       : launch_norm<__half, 32>(y, stats, x, R, key, sigma, s);
	case ROLLOUT_BF16:
		return C == 16 ? launch_norm<__nv_bfloat16, 16>(y, stats, x, R, key, sigma, s)
			       : launch_norm<__nv_bfloat16, 32>(y, stats, x, R, key, sigma, s);
	}
	return cudaErrorInvalidValue;
}

extern "C" cudaError_t rollout_from_float(enum rollout_precision p, const float *src, void *dst,
					  size_t n, cudaStream_t s)
{
	switch (p) {
	case ROLLOUT_FP32:
		return cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, s);
	case ROLLOUT_FP16:
		from_float_k<__half><<<blocks_for(n), THREADS, 0, s>>>(src, (__half *)dst, n);
		break;
	case ROLLOUT_BF16:
		from_float_k<__nv_bfloat16><<<blocks_for(n), THREADS, 0, s>>>(
			src, (__nv_bfloat16 *)dst, n);
		break;
	}
	return cudaGetLastError();
}

extern "C" cudaError_t rollout_to_float(enum rollout_precision p, const void *src, float *dst,
					size_t n, cudaStream_t s)
{
	switch (p) {
	case ROLLOUT_FP32:
		return cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, s);
	case ROLLOUT_FP16:
		to_float_k<__half><<<blocks_for(n), THREADS, 0, s>>>((const __half *)src, dst, n);
		break;
	case ROLLOUT_BF16:
		to_float_k<__nv_bfloat16><<<blocks_for(n), THREADS, 0, s>>>(
			(const __nv_bfloat16 *)src, dst, n);
		break;
	}
	return cudaGetLastError();
}
