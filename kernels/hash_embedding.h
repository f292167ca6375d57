/* hash_embedding.h - device code of the hash embedding workload, as C
 * launchers: feature hashing in four variants and the embedding lookups (one
 * launch per table, or one fused launch for all tables).
 *
 * Layout constants match workloads/hash_embedding_ref.h (the GPU check
 * compares the two). Every launcher enqueues on `stream` and returns the
 * launch's error. */
#ifndef KERNELS_HASH_EMBEDDING_H
#define KERNELS_HASH_EMBEDDING_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum he_kernel {
	HE_KERNEL_BASIC,   /* one thread per row, global atomics */
	HE_KERNEL_SHARED,  /* per-block plot histogram staged in shared memory */
	HE_KERNEL_CHUNKED, /* runs of consecutive rows merged in registers */
};

/* hashed[plots][64] += weight of each row in its plot's bucket. The caller
 * zeroes `hashed` first. plot[] must be nondecreasing for the shared kernel
 * to stage anything (it stays correct otherwise, only slower). */
cudaError_t he_launch_hash(enum he_kernel kernel, const uint32_t *keys, const float *weights,
			   const uint32_t *plot, int rows, float *hashed, cudaStream_t stream);

/* out[p][t*32 .. t*32+31] = tables[row0(t) + ids[t][p]] for one table t. */
cudaError_t he_launch_lookup_one(int t, const uint32_t *ids_t, const float *tables, int plots,
				 float *out, cudaStream_t stream);

/* All 8 tables in one launch, 16-byte loads and stores. ids is [8][plots]. */
cudaError_t he_launch_lookup_fused(const uint32_t *ids, const float *tables, int plots,
				   float *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
