/* transformer.cu - kernels of the transformer workload (seeds 003/004): the
 * GPU embedding lookup, layer norm, head permutes, causal softmax, GELU,
 * cross-entropy and SGD. See transformer.h. */
#include "transformer.h"

namespace {

constexpr int THREADS = 256;
constexpr float LN_EPS = 1e-5f; /* TF_LN_EPS of workloads/transformer_ref.h */

unsigned blocks_for(size_t n)
{
	return (unsigned)((n + THREADS - 1) / THREADS);
}

/* Rows handled one warp each. */
unsigned warp_blocks(int rows)
{
	return (unsigned)((rows + THREADS / 32 - 1) / (THREADS / 32));
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int off = 16; off; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int off = 16; off; off >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
	return v;
}

__global__ void embed_fwd(const int *tokens, const float *tok, const float *pos, float *x,
			  int rows, int seq, int D)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (size_t)rows * D)
		return;
	int n = (int)(i / D), d = (int)(i % D);
	x[i] = tok[(size_t)tokens[n] * D + d] + pos[(size_t)(n % seq) * D + d];
}

__global__ void embed_bwd(const int *tokens, const float *dx, float *dtok, float *dpos, int rows,
			  int seq, int D)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (size_t)rows * D)
		return;
	int n = (int)(i / D), d = (int)(i % D);
	atomicAdd(&dtok[(size_t)tokens[n] * D + d], dx[i]);
	atomicAdd(&dpos[(size_t)(n % seq) * D + d], dx[i]);
}

__global__ void layernorm_fwd(const float *x, float *y, float *rstd, int rows, int D)
{
	int row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;

	if (row >= rows)
		return;
	const float *xr = x + (size_t)row * D;
	float mean = 0.0f, var = 0.0f, r;

	for (int d = lane; d < D; d += 32)
		mean += xr[d];
	mean = warp_sum(mean) / D;
	for (int d = lane; d < D; d += 32)
		var += (xr[d] - mean) * (xr[d] - mean);
	var = warp_sum(var) / D;
	r = rsqrtf(var + LN_EPS);
	for (int d = lane; d < D; d += 32)
		y[(size_t)row * D + d] = (xr[d] - mean) * r;
	if (lane == 0)
		rstd[row] = r;
}

__global__ void layernorm_bwd(const float *y, const float *rstd, const float *dy, float *dx,
			      int rows, int D, int accumulate)
{
	int row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;

	if (row >= rows)
		return;
	const float *yr = y + (size_t)row * D, *dyr = dy + (size_t)row * D;
	float *dxr = dx + (size_t)row * D;
	float mdy = 0.0f, mdyy = 0.0f, r = rstd[row];

	for (int d = lane; d < D; d += 32) {
		mdy += dyr[d];
		mdyy += dyr[d] * yr[d];
	}
	mdy = warp_sum(mdy) / D;
	mdyy = warp_sum(mdyy) / D;
	for (int d = lane; d < D; d += 32) {
		float v = r * (dyr[d] - mdy - yr[d] * mdyy);
		dxr[d] = accumulate ? dxr[d] + v : v;
	}
}

__global__ void rows_to_heads(const float *src, int stride, int col0, float *dst, int B, int T,
			      int H, int dh)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (size_t)B * H * T * dh)
		return;
	int c = (int)(i % dh), t = (int)((i / dh) % T), h = (int)((i / ((size_t)dh * T)) % H);
	int b = (int)(i / ((size_t)dh * T * H));
	dst[i] = src[((size_t)b * T + t) * stride + col0 + h * dh + c];
}

__global__ void heads_to_rows(const float *src, float *dst, int stride, int col0, int B, int T,
			      int H, int dh)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= (size_t)B * H * T * dh)
		return;
	int c = (int)(i % dh), t = (int)((i / dh) % T), h = (int)((i / ((size_t)dh * T)) % H);
	int b = (int)(i / ((size_t)dh * T * H));
	dst[((size_t)b * T + t) * stride + col0 + h * dh + c] = src[i];
}

__global__ void softmax_causal_fwd(float *s, int rows, int T)
{
	int row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;

	if (row >= rows)
		return;
	int i = row % T;
	float *r = s + (size_t)row * T, mx = -INFINITY, sum = 0.0f, inv;

	for (int j = lane; j <= i; j += 32)
		mx = fmaxf(mx, r[j]);
	mx = warp_max(mx);
	for (int j = lane; j <= i; j += 32)
		sum += __expf(r[j] - mx);
	inv = 1.0f / warp_sum(sum);
	for (int j = lane; j < T; j += 32)
		r[j] = j <= i ? __expf(r[j] - mx) * inv : 0.0f;
}

__global__ void softmax_causal_bwd(const float *p, float *dp, int rows, int T, float scale)
{
	int row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;

	if (row >= rows)
		return;
	int i = row % T;
	const float *pr = p + (size_t)row * T;
	float *dr = dp + (size_t)row * T, dot = 0.0f;

	for (int j = lane; j <= i; j += 32)
		dot += pr[j] * dr[j];
	dot = warp_sum(dot);
	for (int j = lane; j < T; j += 32)
		dr[j] = j <= i ? scale * pr[j] * (dr[j] - dot) : 0.0f;
}

__device__ __forceinline__ float gelu_th(float u)
{
	return tanhf(0.7978845608028654f * (u + 0.044715f * u * u * u));
}

__global__ void gelu_fwd(const float *u, float *g, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		g[i] = 0.5f * u[i] * (1.0f + gelu_th(u[i]));
}

__global__ void gelu_bwd(const float *u, float *dg, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	float x = u[i], th = gelu_th(x);
	dg[i] *= 0.5f * (1.0f + th) +
		 0.5f * x * (1.0f - th * th) * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x * x);
}

/* One block per row. */
__global__ void cross_entropy(const float *logits, const int *targets, float *dlogits,
			      float *row_loss, int rows, int V)
{
	__shared__ float red[THREADS / 32];
	int row = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
	const float *lg = logits + (size_t)row * V;
	float *dl = dlogits + (size_t)row * V, mx = -INFINITY, sum = 0.0f, inv;

	for (int v = t; v < V; v += THREADS)
		mx = fmaxf(mx, lg[v]);
	mx = warp_max(mx);
	if (lane == 0)
		red[warp] = mx;
	__syncthreads();
	mx = red[0];
	for (int w = 1; w < THREADS / 32; w++)
		mx = fmaxf(mx, red[w]);
	__syncthreads();
	for (int v = t; v < V; v += THREADS)
		sum += __expf(lg[v] - mx);
	sum = warp_sum(sum);
	if (lane == 0)
		red[warp] = sum;
	__syncthreads();
	sum = 0.0f;
	for (int w = 0; w < THREADS / 32; w++)
		sum += red[w];
	inv = 1.0f / sum;
	int target = targets[row];
	for (int v = t; v < V; v += THREADS)
		dl[v] = (__expf(lg[v] - mx) * inv - (v == target ? 1.0f : 0.0f)) / rows;
	if (t == 0)
		row_loss[row] = mx + logf(sum) - lg[target];
}

__global__ void sum_block(const float *v, int n, float scale, float *out)
{
	__shared__ float red[THREADS / 32];
	int t = threadIdx.x;
	float s = 0.0f;

	for (int i = t; i < n; i += THREADS)
		s += v[i];
	s = warp_sum(s);
	if ((t & 31) == 0)
		red[t >> 5] = s;
	__syncthreads();
	if (t == 0) {
		s = 0.0f;
		for (int w = 0; w < THREADS / 32; w++)
			s += red[w];
		out[0] = scale * s;
	}
}

__global__ void sgd(float *p, const float *g, size_t n, float lr)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] -= lr * g[i];
}

} /* namespace */

extern "C" cudaError_t tfk_embed_fwd(const int *tokens, const float *tok_emb,
				     const float *pos_emb, float *x, int rows, int seq,
				     int dmodel, cudaStream_t s)
{
	embed_fwd<<<blocks_for((size_t)rows * dmodel), THREADS, 0, s>>>(tokens, tok_emb, pos_emb,
									 x, rows, seq, dmodel);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_embed_bwd(const int *tokens, const float *dx, float *dtok,
				     float *dpos, int rows, int seq, int dmodel, cudaStream_t s)
{
	embed_bwd<<<blocks_for((size_t)rows * dmodel), THREADS, 0, s>>>(tokens, dx, dtok, dpos,
									 rows, seq, dmodel);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_layernorm_fwd(const float *x, float *y, float *rstd, int rows,
					 int dmodel, cudaStream_t s)
{
	layernorm_fwd<<<warp_blocks(rows), THREADS, 0, s>>>(x, y, rstd, rows, dmodel);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_layernorm_bwd(const float *y, const float *rstd, const float *dy,
					 float *dx, int rows, int dmodel, int accumulate,
					 cudaStream_t s)
{
	layernorm_bwd<<<warp_blocks(rows), THREADS, 0, s>>>(y, rstd, dy, dx, rows, dmodel,
							    accumulate);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_rows_to_heads(const float *src, int src_stride, int col0, float *dst,
					 int batch, int seq, int heads, int head_dim,
					 cudaStream_t s)
{
	rows_to_heads<<<blocks_for((size_t)batch * heads * seq * head_dim), THREADS, 0, s>>>(
		src, src_stride, col0, dst, batch, seq, heads, head_dim);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_heads_to_rows(const float *src, float *dst, int dst_stride, int col0,
					 int batch, int seq, int heads, int head_dim,
					 cudaStream_t s)
{
	heads_to_rows<<<blocks_for((size_t)batch * heads * seq * head_dim), THREADS, 0, s>>>(
		src, dst, dst_stride, col0, batch, seq, heads, head_dim);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_softmax_causal_fwd(float *scores, int matrices, int seq,
					      cudaStream_t s)
{
	softmax_causal_fwd<<<warp_blocks(matrices * seq), THREADS, 0, s>>>(scores, matrices * seq,
									   seq);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_softmax_causal_bwd(const float *p, float *dp, int matrices, int seq,
					      float scale, cudaStream_t s)
{
	softmax_causal_bwd<<<warp_blocks(matrices * seq), THREADS, 0, s>>>(p, dp, matrices * seq,
									   seq, scale);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_gelu_fwd(const float *u, float *g, size_t n, cudaStream_t s)
{
	gelu_fwd<<<blocks_for(n), THREADS, 0, s>>>(u, g, n);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_gelu_bwd(const float *u, float *dg, size_t n, cudaStream_t s)
{
	gelu_bwd<<<blocks_for(n), THREADS, 0, s>>>(u, dg, n);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_cross_entropy(const float *logits, const int *targets,
					 float *dlogits, float *row_loss, int rows, int vocab,
					 cudaStream_t s)
{
	cross_entropy<<<rows, THREADS, 0, s>>>(logits, targets, dlogits, row_loss, rows, vocab);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_sum(const float *v, int n, float scale, float *out, cudaStream_t s)
{
	sum_block<<<1, THREADS, 0, s>>>(v, n, scale, out);
	return cudaGetLastError();
}

extern "C" cudaError_t tfk_sgd(float *p, const float *g, size_t n, float lr, cudaStream_t s)
{
	sgd<<<blocks_for(n), THREADS, 0, s>>>(p, g, n, lr);
	return cudaGetLastError();
}
