/* forces.cu - energies and analytic forces of the radial-basis pair
 * potential (see workloads/forces_ref.h): the four-kernel per-structure
 * sequence of the naive variant and the one-launch batched kernel. */
#include "forces.h"

#define K FO_KERNEL_BASIS
#define PI_F 3.14159265358979f

__global__ void distances(const float *__restrict__ pos, int n, float *__restrict__ r)
{
	int ij = blockIdx.x * blockDim.x + threadIdx.x;

	if (ij < n * n) {
		int i = ij / n, j = ij % n;
		float dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1],
		      dz = pos[3 * i + 2] - pos[3 * j + 2];

		r[ij] = sqrtf(dx * dx + dy * dy + dz * dz);
	}
}

extern "C" cudaError_t fo_launch_distances(const float *pos, int n, float *r, cudaStream_t stream)
{
	distances<<<(n * n + 127) / 128, 128, 0, stream>>>(pos, n, r);
	return cudaGetLastError();
}

__global__ void rbf(const float *__restrict__ r, int n, struct fo_kparams p,
		    float *__restrict__ feat, float *__restrict__ dfeat)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;

	if (idx < n * n * K) {
		int ij = idx / K, k = idx % K;
		float x = r[ij], f = 0.0f, df = 0.0f;

		/* The diagonal (i == j) and pairs beyond the cutoff add nothing. */
		if (ij / n != ij % n && x < p.cutoff) {
			float s, c, d = x - p.mu[k], e = __expf(-p.gamma * d * d);

			__sincosf(PI_F * x / p.cutoff, &s, &c);
			f = e * 0.5f * (c + 1.0f);
			df = e * (-0.5f * PI_F / p.cutoff * s) +
			     (-2.0f * p.gamma * d * e) * 0.5f * (c + 1.0f);
		}
		feat[idx] = f;
		dfeat[idx] = df;
	}
}

extern "C" cudaError_t fo_launch_rbf(const float *r, int n, struct fo_kparams p, float *feat,
				     float *dfeat, cudaStream_t stream)
{
	rbf<<<(n * n * K + 255) / 256, 256, 0, stream>>>(r, n, p, feat, dfeat);
	return cudaGetLastError();
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

/* One block: E = 1/2 sum over ordered pairs and basis of w_k feat. */
__global__ void energy_reduce(const float *__restrict__ feat, int n, struct fo_kparams p,
			      float *energy)
{
	__shared__ float part[32];
	float acc = 0.0f;

	for (int idx = threadIdx.x; idx < n * n * K; idx += blockDim.x)
		acc += p.w[idx % K] * feat[idx];
	acc = warp_sum(acc);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x < 32) {
		acc = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
		acc = warp_sum(acc);
		if (threadIdx.x == 0)
			*energy = 0.5f * acc;
	}
}

extern "C" cudaError_t fo_launch_energy(const float *feat, int n, struct fo_kparams p,
					float *energy, cudaStream_t stream)
{
	energy_reduce<<<1, 256, 0, stream>>>(feat, n, p, energy);
	return cudaGetLastError();
}

__global__ void forces_from_features(const float *__restrict__ pos, const float *__restrict__ r,
				     const float *__restrict__ dfeat, int n, struct fo_kparams p,
				     float *__restrict__ forces)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		float fx = 0.0f, fy = 0.0f, fz = 0.0f;

		for (int j = 0; j < n; j++) {
			float dphi = 0.0f, x = r[i * n + j];

			if (j == i || x == 0.0f)
				continue;
			for (int k = 0; k < K; k++)
				dphi += p.w[k] * dfeat[(i * n + j) * K + k];
			dphi /= x;
			fx -= dphi * (pos[3 * i] - pos[3 * j]);
			fy -= dphi * (pos[3 * i + 1] - pos[3 * j + 1]);
			fz -= dphi * (pos[3 * i + 2] - pos[3 * j + 2]);
		}
		forces[3 * i] = fx;
		forces[3 * i + 1] = fy;
		forces[3 * i + 2] = fz;
	}
}

extern "C" cudaError_t fo_launch_forces(const float *pos, const float *r, const float *dfeat,
					int n, struct fo_kparams p, float *forces,
					cudaStream_t stream)
{
	forces_from_features<<<(n + 63) / 64, 64, 0, stream>>>(pos, r, dfeat, n, p, forces);
	return cudaGetLastError();
}

/* One block of 64 threads per structure, thread i owns atom i: positions
 * staged in shared memory, every pair term and its derivative computed in
 * registers, so no scratch traffic and one launch for all structures. Each
 * unordered pair is evaluated twice (once per atom), which costs arithmetic
 * but no atomics. */
__global__ void __launch_bounds__(FO_KERNEL_MAX_ATOMS)
batched(const float *__restrict__ pos, const int *__restrict__ offset, struct fo_kparams p,
	float *__restrict__ energy, float *__restrict__ forces)
{
	__shared__ float x[FO_KERNEL_MAX_ATOMS][3];
	__shared__ float part[FO_KERNEL_MAX_ATOMS / 32];
	int s = blockIdx.x, i = threadIdx.x;
	int a0 = offset[s], n = offset[s + 1] - a0;
	float e = 0.0f, fx = 0.0f, fy = 0.0f, fz = 0.0f;

	for (int c = i; c < 3 * n; c += blockDim.x)
		x[c / 3][c % 3] = pos[3 * a0 + c];
	__syncthreads();
	if (i < n) {
		for (int j = 0; j < n; j++) {
			float dx = x[i][0] - x[j][0], dy = x[i][1] - x[j][1], dz = x[i][2] - x[j][2];
			float r = sqrtf(dx * dx + dy * dy + dz * dz);
			float sum = 0.0f, dsum = 0.0f, sn, cs, fc, dfc, dphi;

			if (j == i || r >= p.cutoff)
				continue;
#pragma unroll
			for (int k = 0; k < K; k++) {
				float d = r - p.mu[k], t = p.w[k] * __expf(-p.gamma * d * d);

				sum += t;
				dsum += -2.0f * p.gamma * d * t;
			}
			__sincosf(PI_F * r / p.cutoff, &sn, &cs);
			fc = 0.5f * (cs + 1.0f);
			dfc = -0.5f * PI_F / p.cutoff * sn;
			e += 0.5f * fc * sum;
			dphi = (dfc * sum + fc * dsum) / r;
			fx -= dphi * dx;
			fy -= dphi * dy;
			fz -= dphi * dz;
		}
		forces[3 * (a0 + i)] = fx;
		forces[3 * (a0 + i) + 1] = fy;
		forces[3 * (a0 + i) + 2] = fz;
	}
	e = warp_sum(e);
	if (i % 32 == 0)
		part[i / 32] = e;
	__syncthreads();
	if (i == 0) {
		float t = 0.0f;

		for (int w = 0; w < FO_KERNEL_MAX_ATOMS / 32; w++)
			t += part[w];
		energy[s] = t;
	}
}

extern "C" cudaError_t fo_launch_batched(const float *pos, const int *offset, int structures,
					 struct fo_kparams p, float *energy, float *forces,
					 cudaStream_t stream)
{
	if (structures > 0)
		batched<<<structures, FO_KERNEL_MAX_ATOMS, 0, stream>>>(pos, offset, p, energy,
									forces);
	return cudaGetLastError();
}
