/* forces.h - device code of the batched forces workload, as C launchers.
 *
 * The potential is the one of workloads/forces_ref.h (pairwise radial basis
 * with a cosine cutoff), in single precision. Positions and forces are
 * float[3 * atoms]. Every launcher enqueues on `stream` and returns the
 * launch's error. */
#ifndef KERNELS_FORCES_H
#define KERNELS_FORCES_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FO_KERNEL_BASIS 16
#define FO_KERNEL_MAX_ATOMS 64

/* Passed by value to every kernel. */
struct fo_kparams {
	float w[FO_KERNEL_BASIS];
	float mu[FO_KERNEL_BASIS];
	float gamma, cutoff;
};

/* One structure of n atoms as four small kernels, the way an unfused
 * framework computes it: pair distances r[n*n]; basis features feat and
 * d feat/dr [n*n][16] (cutoff applied); the energy reduced into *energy;
 * forces from the features. Scratch sizes: r n*n, feat and dfeat n*n*16. */
cudaError_t fo_launch_distances(const float *pos, int n, float *r, cudaStream_t stream);
cudaError_t fo_launch_rbf(const float *r, int n, struct fo_kparams p, float *feat, float *dfeat,
			  cudaStream_t stream);
cudaError_t fo_launch_energy(const float *feat, int n, struct fo_kparams p, float *energy,
			     cudaStream_t stream);
cudaError_t fo_launch_forces(const float *pos, const float *r, const float *dfeat, int n,
			     struct fo_kparams p, float *forces, cudaStream_t stream);

/* Energies and forces of `structures` structures in one launch: one block
 * per structure, atoms of structure s at offset[s] .. offset[s+1]-1 (at
 * most 64), pair terms computed in registers without scratch memory. */
cudaError_t fo_launch_batched(const float *pos, const int *offset, int structures,
			      struct fo_kparams p, float *energy, float *forces,
			      cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
