/* transformer.h - device code of the transformer workload (seeds 003/004),
 * callable from C. The matrix products are cuBLAS calls made by the host
 * program; these are the kernels between them. Row-major [rows][features]
 * throughout; attention operands per head are [batch*heads][seq][head_dim].
 * Every launcher returns the launch's cudaError_t. */
#ifndef KERNELS_TRANSFORMER_H
#define KERNELS_TRANSFORMER_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x[n] = tok_emb[tokens[n]] + pos_emb[n % seq], n < rows. */
cudaError_t tfk_embed_fwd(const int *tokens, const float *tok_emb, const float *pos_emb,
			  float *x, int rows, int seq, int dmodel, cudaStream_t s);
/* dtok[tokens[n]] += dx[n]; dpos[n % seq] += dx[n] (both zeroed by the caller). */
cudaError_t tfk_embed_bwd(const int *tokens, const float *dx, float *dtok, float *dpos,
			  int rows, int seq, int dmodel, cudaStream_t s);

/* y = (x - mean) / std per row; rstd[row] = 1/std. */
cudaError_t tfk_layernorm_fwd(const float *x, float *y, float *rstd, int rows, int dmodel,
			      cudaStream_t s);
/* dx (+)= layer-norm backward of dy given the normalised y and rstd. */
cudaError_t tfk_layernorm_bwd(const float *y, const float *rstd, const float *dy, float *dx,
			      int rows, int dmodel, int accumulate, cudaStream_t s);

/* dst[(b*heads+h)][t][c] = src[b*seq+t][col0 + h*head_dim + c] (row stride src_stride). */
cudaError_t tfk_rows_to_heads(const float *src, int src_stride, int col0, float *dst, int batch,
			      int seq, int heads, int head_dim, cudaStream_t s);
/* The inverse: dst[b*seq+t][col0 + h*head_dim + c] = src[(b*heads+h)][t][c]. */
cudaError_t tfk_heads_to_rows(const float *src, float *dst, int dst_stride, int col0, int batch,
			      int seq, int heads, int head_dim, cudaStream_t s);

/* Causal softmax of each seq x seq score matrix, in place (row i keeps j <= i). */
cudaError_t tfk_softmax_causal_fwd(float *scores, int matrices, int seq, cudaStream_t s);
/* dp -> scale * p * (dp - sum_j p dp): the gradient of the pre-scale scores. */
cudaError_t tfk_softmax_causal_bwd(const float *p, float *dp, int matrices, int seq, float scale,
				   cudaStream_t s);

cudaError_t tfk_gelu_fwd(const float *u, float *g, size_t n, cudaStream_t s);
/* dg *= GELU'(u) */
cudaError_t tfk_gelu_bwd(const float *u, float *dg, size_t n, cudaStream_t s);

/* Per row: dlogits = (softmax - onehot(target)) / rows, row_loss = -log p(target). */
cudaError_t tfk_cross_entropy(const float *logits, const int *targets, float *dlogits,
			      float *row_loss, int rows, int vocab, cudaStream_t s);
/* out[0] = scale * sum(v[0..n)), one block, fixed order. */
cudaError_t tfk_sum(const float *v, int n, float scale, float *out, cudaStream_t s);
/* p -= lr * g */
cudaError_t tfk_sgd(float *p, const float *g, size_t n, float lr, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
