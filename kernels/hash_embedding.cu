/* hash_embedding.cu - feature hashing and embedding lookups of the hash
 * embedding workload. The constants and the hash are those of
 * workloads/hash_embedding_ref.{h,c}; the GPU check compares the two. */
#include "hash_embedding.h"

#define HASH_DIM 64
#define TABLES 8
#define TOP_K 4
#define EMB_DIM 32
#define GENUS_VOCAB 2048
#define FAMILY_VOCAB 512

#define THREADS 256
/* Shared kernel: 1024 rows per block span about 64 plots (16 rows per plot
 * on average); room for 128 plots keeps nearly every row in shared memory
 * at 32 KB, under the 48 KB a block gets without opting in. */
#define SHARED_ROWS 1024
#define SHARED_PLOTS 128
#define CHUNK 8

__device__ __forceinline__ uint32_t bucket_of(uint32_t key)
{
	uint32_t h = key ^ 0x9747b28cu;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h & (HASH_DIM - 1);
}

__device__ __forceinline__ int table_row0(int t)
{
	return t < TOP_K ? t * GENUS_VOCAB : TOP_K * GENUS_VOCAB + (t - TOP_K) * FAMILY_VOCAB;
}

__global__ void hash_basic(const uint32_t *__restrict__ keys, const float *__restrict__ weights,
			   const uint32_t *__restrict__ plot, int rows, float *hashed)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
		atomicAdd(&hashed[(size_t)plot[i] * HASH_DIM + bucket_of(keys[i])], weights[i]);
}

__global__ void hash_shared(const uint32_t *__restrict__ keys, const float *__restrict__ weights,
			    const uint32_t *__restrict__ plot, int rows, float *hashed)
{
	__shared__ float hist[SHARED_PLOTS * HASH_DIM];
	int first = blockIdx.x * SHARED_ROWS;
	int last = min(first + SHARED_ROWS, rows);
	uint32_t p0 = plot[first];

	for (int i = threadIdx.x; i < SHARED_PLOTS * HASH_DIM; i += blockDim.x)
		hist[i] = 0.0f;
	__syncthreads();
	for (int i = first + threadIdx.x; i < last; i += blockDim.x) {
		uint32_t p = plot[i], b = bucket_of(keys[i]);

		/* Rows outside the staged plot window (unsorted input, or a
		 * window of unusually small plots) go straight to global. */
		if (p >= p0 && p - p0 < SHARED_PLOTS)
			atomicAdd(&hist[(p - p0) * HASH_DIM + b], weights[i]);
		else
			atomicAdd(&hashed[(size_t)p * HASH_DIM + b], weights[i]);
	}
	__syncthreads();
	/* Neighbouring blocks can share a boundary plot: flush with atomics. */
	for (int i = threadIdx.x; i < SHARED_PLOTS * HASH_DIM; i += blockDim.x)
		if (hist[i] != 0.0f)
			atomicAdd(&hashed[(size_t)p0 * HASH_DIM + i], hist[i]);
}

__global__ void hash_chunked(const uint32_t *__restrict__ keys, const float *__restrict__ weights,
			     const uint32_t *__restrict__ plot, int rows, float *hashed)
{
	int first = (blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
	int last = min(first + CHUNK, rows);
	size_t target = 0;
	float acc = 0.0f;

	for (int i = first; i < last; i++) {
		size_t t = (size_t)plot[i] * HASH_DIM + bucket_of(keys[i]);

		if (i > first && t != target) {
			atomicAdd(&hashed[target], acc);
			acc = 0.0f;
		}
		target = t;
		acc += weights[i];
	}
	if (first < last)
		atomicAdd(&hashed[target], acc);
}

extern "C" cudaError_t he_launch_hash(enum he_kernel kernel, const uint32_t *keys,
				      const float *weights, const uint32_t *plot, int rows,
				      float *hashed, cudaStream_t stream)
{
	if (rows <= 0)
		return cudaSuccess;
	switch (kernel) {
	case HE_KERNEL_BASIC:
		hash_basic<<<(rows + THREADS - 1) / THREADS, THREADS, 0, stream>>>(keys, weights,
										   plot, rows, hashed);
		break;
	case HE_KERNEL_SHARED:
		hash_shared<<<(rows + SHARED_ROWS - 1) / SHARED_ROWS, THREADS, 0, stream>>>(
			keys, weights, plot, rows, hashed);
		break;
	case HE_KERNEL_CHUNKED: {
		int threads = (rows + CHUNK - 1) / CHUNK;

		hash_chunked<<<(threads + THREADS - 1) / THREADS, THREADS, 0, stream>>>(
			keys, weights, plot, rows, hashed);
		break;
	}
	default:
		return cudaErrorInvalidValue;
	}
	return cudaGetLastError();
}

__global__ void lookup_one(int t, const uint32_t *__restrict__ ids_t,
			   const float *__restrict__ tables, int plots, float *__restrict__ out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < plots * EMB_DIM) {
		int p = i / EMB_DIM, e = i % EMB_DIM;

		out[((size_t)p * TABLES + t) * EMB_DIM + e] =
			tables[((size_t)table_row0(t) + ids_t[p]) * EMB_DIM + e];
	}
}

extern "C" cudaError_t he_launch_lookup_one(int t, const uint32_t *ids_t, const float *tables,
					    int plots, float *out, cudaStream_t stream)
{
	int n = plots * EMB_DIM;

	if (t < 0 || t >= TABLES)
		return cudaErrorInvalidValue;
	if (n > 0)
		lookup_one<<<(n + THREADS - 1) / THREADS, THREADS, 0, stream>>>(t, ids_t, tables,
										plots, out);
	return cudaGetLastError();
}

/* One thread per 16-byte piece of the output, so consecutive threads store
 * consecutive 16 bytes: the output (the bulk of the bytes) streams out fully
 * coalesced; the 8 threads of one embedding row read its id once each, a
 * broadcast within the warp. */
__global__ void lookup_fused(const uint32_t *__restrict__ ids, const float4 *__restrict__ tables,
			     int plots, float4 *__restrict__ out)
{
	const int per_row = EMB_DIM / 4;
	size_t n = (size_t)plots * TABLES * per_row;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		int e4 = (int)(i % per_row);
		int t = (int)((i / per_row) % TABLES);
		size_t p = i / (per_row * TABLES);
		uint32_t id = ids[(size_t)t * plots + p];

		out[i] = tables[((size_t)table_row0(t) + id) * per_row + e4];
	}
}

extern "C" cudaError_t he_launch_lookup_fused(const uint32_t *ids, const float *tables,
					      int plots, float *out, cudaStream_t stream)
{
	size_t n = (size_t)plots * TABLES * (EMB_DIM / 4);
	size_t blocks = (n + THREADS - 1) / THREADS;

	if (n > 0)
		lookup_fused<<<(unsigned)(blocks < 65535u * 16 ? blocks : 65535u * 16), THREADS, 0,
			       stream>>>(ids, (const float4 *)tables, plots, (float4 *)out);
	return cudaGetLastError();
}
