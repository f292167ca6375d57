/* transformer_main.c - training steps of the small decoder-only transformer
 * of seeds 003/004 on the GPU (FP32, cuBLAS for the matrix products).
 *
 * Naive, as the seeds describe their starting point: the embedding tables
 * are downloaded and the input embeddings assembled on the host and uploaded
 * in every step, targets and per-row losses go through pageable blocking
 * copies, every temporary is cudaMalloc'ed and cudaFree'd in every step, and
 * attention makes one small GEMM launch per (sequence, head).
 * Optimized: token ids go up in one pinned asynchronous copy and a GPU
 * kernel looks the embeddings up, temporaries come from a buffer pool
 * allocated once, attention uses cublasSgemmStridedBatched, and the whole
 * step (embedding to SGD update) is captured once as a CUDA graph and
 * replayed. Both run the same arithmetic on the same batches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "transformer.h"
#include "transformer_ref.h"
#include "wl_common.h"

#define NBATCHES 16                      /* distinct batches cycled through */
#define BLAS_WORKSPACE_BYTES (32u << 20) /* set before capture: no allocation inside */
#define GRAD_TOL 1e-4                    /* GPU FP32 vs CPU double gradients, rel L2 */
#define FD_TOL 1e-6                      /* CPU gradient vs finite differences */

struct tf_opts {
	struct wl_common common;
	struct tf_config cfg;
	int steps;
	double lr;
};

/* One variant's device state. */
struct tf_gpu {
	struct tf_config cfg;
	bool naive;
	float lr;
	cudaStream_t s;
	cublasHandle_t blas;
	void *blas_ws;
	float *params, *grads;
	int *ids;     /* tokens (rows) then targets (rows) */
	float *loss;  /* optimized: the step's mean loss */
	/* temporaries: per-step cudaMalloc (naive), or a pool filled by the first
	 * step and handed out in the same order afterwards (optimized) */
	float **bufs;
	size_t *buf_n;
	int nbufs, cap, next;
	/* host side */
	int *batches;          /* NBATCHES x (tokens, targets); pinned when optimized */
	float *h_emb, *h_x, *h_rows; /* naive staging (pageable) */
	float *losses;         /* optimized: pinned, one per step */
	int nlosses;
	cudaGraphExec_t exec;
	bool have_graph;
};

static int cuda_ok(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "perfkit: transformer: %s: %s\n", what, cudaGetErrorString(e));
	return -1;
}

static int blas_ok(cublasStatus_t st, const char *what)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 0;
	fprintf(stderr, "perfkit: transformer: %s: cuBLAS status %d\n", what, (int)st);
	return -1;
}

/* Row-major C[M][N] = alpha op(A) op(B) + beta C through column-major cuBLAS:
 * C^T = op(B)^T op(A)^T, so the operands swap. ld* are row strides. */
static int gemm(struct tf_gpu *g, bool ta, bool tb, int M, int N, int K, float alpha,
		const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	return blas_ok(cublasSgemm(g->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				   ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
				   &beta, C, ldc),
		       "sgemm");
}

/* The per-head products: `count` independent M x N products whose operands
 * follow each other at the given element strides. Naive: one cublasSgemm
 * per head; optimized: one strided-batched launch. */
static int gemm_heads(struct tf_gpu *g, bool ta, bool tb, int M, int N, int K, float alpha,
		      const float *A, int lda, long long sa, const float *B, int ldb,
		      long long sb, float *C, int ldc, long long sc, int count)
{
	const float beta = 0.0f;

	if (!g->naive)
		return blas_ok(cublasSgemmStridedBatched(
				       g->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				       ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, sb,
				       A, lda, sa, &beta, C, ldc, sc, count),
			       "sgemm strided batched");
	for (int i = 0; i < count; i++)
		if (gemm(g, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
			 C + i * sc, ldc))
			return -1;
	return 0;
}

static float *tmp(struct tf_gpu *g, size_t n, int *err)
{
	float *p = NULL;

	if (*err)
		return NULL;
	if (!g->naive && g->next < g->nbufs) {
		if (g->buf_n[g->next] != n) {
			fprintf(stderr, "perfkit: transformer: buffer pool order changed\n");
			*err = -1;
			return NULL;
		}
		return g->bufs[g->next++];
	}
	if (g->nbufs == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		float **b = realloc(g->bufs, (size_t)cap * sizeof(*b));
		size_t *bn = b ? realloc(g->buf_n, (size_t)cap * sizeof(*bn)) : NULL;

		if (b)
			g->bufs = b;
		if (!b || !bn) {
			fprintf(stderr, "perfkit: transformer: out of memory\n");
			*err = -1;
			return NULL;
		}
		g->buf_n = bn;
		g->cap = cap;
	}
	if (cuda_ok(cudaMalloc((void **)&p, n * sizeof(float)), "cudaMalloc")) {
		*err = -1;
		return NULL;
	}
	g->bufs[g->nbufs] = p;
	g->buf_n[g->nbufs++] = n;
	g->next = g->nbufs;
	return p;
}

/* End of a step: the naive pipeline frees every temporary it took. */
static void release_temps(struct tf_gpu *g)
{
	if (g->naive) {
		for (int i = 0; i < g->nbufs; i++)
			cudaFree(g->bufs[i]);
		g->nbufs = 0;
	}
	g->next = 0;
}

#define P(t, l) (g->params + tf_offset(c, (t), (l)))
#define GR(t, l) (g->grads + tf_offset(c, (t), (l)))
#define K(call, what) (err = err ? err : cuda_ok((call), (what)))

/* Activations of one layer kept for the backward pass, in the model's names
 * (transformer_ref.h): a = LN(x) and ra its 1/std, q k v the heads of
 * a Wqkv, pr the attention probabilities, att the merged heads,
 * hh = h = x + att Wo, m = LN(h) and rm its 1/std, u = m W1, gl = GELU(u). */
struct layer_cache {
	float *a, *ra, *q, *k, *v, *pr, *att, *hh, *m, *rm, *u, *gl;
};

/* What the forward phase leaves for the backward and update phases. */
struct step_acts {
	struct layer_cache *lc;    /* one per layer */
	float *x;                  /* the embeddings, then each layer's output */
	float *f, *rf;             /* the final layer norm and its 1/std */
	float *dlogits, *row_loss; /* both written by the cross-entropy */
};

/* The input rows: the naive step assembled them on the host (x0_given);
 * otherwise a kernel looks the token ids up in the embedding tables. */
static int step_embedding(struct tf_gpu *g, struct step_acts *s, float *x0_given)
{
	const struct tf_config *c = &g->cfg;
	int D = c->dmodel, T = c->seq, N = c->batch * T;
	int err = 0;

	s->x = x0_given;
	if (!s->x) {
		s->x = tmp(g, (size_t)N * D, &err);
		K(tfk_embed_fwd(g->ids, P(TF_TOK_EMB, 0), P(TF_POS_EMB, 0), s->x, N, T, D, g->s),
		  "embedding");
	}
	return err;
}

/* Layer l: h = x + Attn(LN(x)) Wo, then x' = h + GELU(LN(h) W1) W2. *x is
 * the layer's input, then its output. */
static int layer_forward(struct tf_gpu *g, int l, struct layer_cache *lc, float **x)
{
	const struct tf_config *c = &g->cfg;
	int D = c->dmodel, T = c->seq, H = c->heads, dh = D / H;
	int N = c->batch * T, BH = c->batch * H, F = 4 * D;
	size_t ND = (size_t)N * D;
	float scale = 1.0f / sqrtf((float)dh);
	float *qkv, *o, *xn;
	int err = 0;

	lc->a = tmp(g, ND, &err);
	lc->ra = tmp(g, (size_t)N, &err);
	qkv = tmp(g, 3 * ND, &err);
	lc->q = tmp(g, ND, &err);
	lc->k = tmp(g, ND, &err);
	lc->v = tmp(g, ND, &err);
	lc->pr = tmp(g, (size_t)BH * T * T, &err);
	o = tmp(g, ND, &err);
	lc->att = tmp(g, ND, &err);
	lc->hh = tmp(g, ND, &err);
	lc->m = tmp(g, ND, &err);
	lc->rm = tmp(g, (size_t)N, &err);
	lc->u = tmp(g, (size_t)N * F, &err);
	lc->gl = tmp(g, (size_t)N * F, &err);
	xn = tmp(g, ND, &err);
	if (err)
		return err;
	K(tfk_layernorm_fwd(*x, lc->a, lc->ra, N, D, g->s), "layernorm");
	err = err || gemm(g, false, false, N, 3 * D, D, 1.0f, lc->a, D, P(TF_WQKV, l), 3 * D,
			  0.0f, qkv, 3 * D);
	K(tfk_rows_to_heads(qkv, 3 * D, 0, lc->q, c->batch, T, H, dh, g->s), "split");
	K(tfk_rows_to_heads(qkv, 3 * D, D, lc->k, c->batch, T, H, dh, g->s), "split");
	K(tfk_rows_to_heads(qkv, 3 * D, 2 * D, lc->v, c->batch, T, H, dh, g->s), "split");
	err = err || gemm_heads(g, false, true, T, T, dh, scale, lc->q, dh, (long long)T * dh,
				lc->k, dh, (long long)T * dh, lc->pr, T, (long long)T * T, BH);
	K(tfk_softmax_causal_fwd(lc->pr, BH, T, g->s), "softmax");
	err = err || gemm_heads(g, false, false, T, dh, T, 1.0f, lc->pr, T, (long long)T * T,
				lc->v, dh, (long long)T * dh, o, dh, (long long)T * dh, BH);
	K(tfk_heads_to_rows(o, lc->att, D, 0, c->batch, T, H, dh, g->s), "merge");
	K(cudaMemcpyAsync(lc->hh, *x, ND * sizeof(float), cudaMemcpyDeviceToDevice, g->s),
	  "residual");
	err = err || gemm(g, false, false, N, D, D, 1.0f, lc->att, D, P(TF_WO, l), D, 1.0f,
			  lc->hh, D);
	K(tfk_layernorm_fwd(lc->hh, lc->m, lc->rm, N, D, g->s), "layernorm");
	err = err || gemm(g, false, false, N, F, D, 1.0f, lc->m, D, P(TF_W1, l), F, 0.0f, lc->u,
			  F);
	K(tfk_gelu_fwd(lc->u, lc->gl, (size_t)N * F, g->s), "gelu");
	K(cudaMemcpyAsync(xn, lc->hh, ND * sizeof(float), cudaMemcpyDeviceToDevice, g->s),
	  "residual");
	err = err || gemm(g, false, false, N, D, F, 1.0f, lc->gl, F, P(TF_W2, l), D, 1.0f, xn,
			  D);
	*x = xn;
	return err;
}

/* Every layer, then the final layer norm, the logits and the cross-entropy,
 * whose kernel writes the per-row losses and their gradient at once. */
static int step_forward(struct tf_gpu *g, struct step_acts *s, float *row_loss_out)
{
	const struct tf_config *c = &g->cfg;
	int D = c->dmodel, V = c->vocab, N = c->batch * c->seq;
	size_t ND = (size_t)N * D;
	const int *targets = g->ids + N;
	float *logits;
	int err = 0;

	for (int l = 0; l < c->layers && !err; l++)
		err = layer_forward(g, l, &s->lc[l], &s->x);
	s->f = tmp(g, ND, &err);
	s->rf = tmp(g, (size_t)N, &err);
	logits = tmp(g, (size_t)N * V, &err);
	s->dlogits = tmp(g, (size_t)N * V, &err);
	s->row_loss = row_loss_out ? row_loss_out : tmp(g, (size_t)N, &err);
	if (!err) {
		K(tfk_layernorm_fwd(s->x, s->f, s->rf, N, D, g->s), "layernorm");
		err = err || gemm(g, false, false, N, V, D, 1.0f, s->f, D, P(TF_WOUT, 0), V, 0.0f,
				  logits, V);
		K(tfk_cross_entropy(logits, targets, s->dlogits, s->row_loss, N, V, g->s),
		  "cross-entropy");
	}
	return err;
}

/* Gradients of layer l; dx, the gradient of its output, becomes the
 * gradient of its input in place. */
static int layer_backward(struct tf_gpu *g, int l, const struct layer_cache *lc, float *dx)
{
	const struct tf_config *c = &g->cfg;
	int D = c->dmodel, T = c->seq, H = c->heads, dh = D / H;
	int N = c->batch * T, BH = c->batch * H, F = 4 * D;
	size_t ND = (size_t)N * D;
	float scale = 1.0f / sqrtf((float)dh);
	int err = 0;
	float *dg = tmp(g, (size_t)N * F, &err), *dm = tmp(g, ND, &err);
	float *datt = tmp(g, ND, &err), *dout = tmp(g, ND, &err);
	float *dp = tmp(g, (size_t)BH * T * T, &err);
	float *dq = tmp(g, ND, &err), *dk = tmp(g, ND, &err), *dv = tmp(g, ND, &err);
	float *dqkv = tmp(g, 3 * ND, &err), *da = tmp(g, ND, &err);

	if (err)
		return err;
	/* x' = h + GELU(LN(h) W1) W2; dx becomes dh in place */
	err = gemm(g, true, false, F, D, N, 1.0f, lc->gl, F, dx, D, 0.0f, GR(TF_W2, l), D) ||
	      gemm(g, false, true, N, F, D, 1.0f, dx, D, P(TF_W2, l), D, 0.0f, dg, F);
	K(tfk_gelu_bwd(lc->u, dg, (size_t)N * F, g->s), "gelu backward");
	err = err ||
	      gemm(g, true, false, D, F, N, 1.0f, lc->m, D, dg, F, 0.0f, GR(TF_W1, l), F) ||
	      gemm(g, false, true, N, D, F, 1.0f, dg, F, P(TF_W1, l), F, 0.0f, dm, D);
	K(tfk_layernorm_bwd(lc->m, lc->rm, dm, dx, N, D, 1, g->s), "layernorm backward");
	/* h = x + Attn(LN(x)) Wo; dx becomes dx_l in place */
	err = err ||
	      gemm(g, true, false, D, D, N, 1.0f, lc->att, D, dx, D, 0.0f, GR(TF_WO, l), D) ||
	      gemm(g, false, true, N, D, D, 1.0f, dx, D, P(TF_WO, l), D, 0.0f, datt, D);
	K(tfk_rows_to_heads(datt, D, 0, dout, c->batch, T, H, dh, g->s), "split");
	err = err ||
	      gemm_heads(g, false, true, T, T, dh, 1.0f, dout, dh, (long long)T * dh, lc->v, dh,
			 (long long)T * dh, dp, T, (long long)T * T, BH) ||
	      gemm_heads(g, true, false, T, dh, T, 1.0f, lc->pr, T, (long long)T * T, dout, dh,
			 (long long)T * dh, dv, dh, (long long)T * dh, BH);
	K(tfk_softmax_causal_bwd(lc->pr, dp, BH, T, scale, g->s), "softmax backward");
	err = err ||
	      gemm_heads(g, false, false, T, dh, T, 1.0f, dp, T, (long long)T * T, lc->k, dh,
			 (long long)T * dh, dq, dh, (long long)T * dh, BH) ||
	      gemm_heads(g, true, false, T, dh, T, 1.0f, dp, T, (long long)T * T, lc->q, dh,
			 (long long)T * dh, dk, dh, (long long)T * dh, BH);
	K(tfk_heads_to_rows(dq, dqkv, 3 * D, 0, c->batch, T, H, dh, g->s), "merge");
	K(tfk_heads_to_rows(dk, dqkv, 3 * D, D, c->batch, T, H, dh, g->s), "merge");
	K(tfk_heads_to_rows(dv, dqkv, 3 * D, 2 * D, c->batch, T, H, dh, g->s), "merge");
	err = err ||
	      gemm(g, true, false, D, 3 * D, N, 1.0f, lc->a, D, dqkv, 3 * D, 0.0f,
		   GR(TF_WQKV, l), 3 * D) ||
	      gemm(g, false, true, N, D, 3 * D, 1.0f, dqkv, 3 * D, P(TF_WQKV, l), 3 * D, 0.0f,
		   da, D);
	K(tfk_layernorm_bwd(lc->a, lc->ra, da, dx, N, D, 1, g->s), "layernorm backward");
	return err;
}

/* The gradients in reverse order: the output layer and the final layer norm,
 * every layer from the last, then the embedding tables (zeroed, since the
 * lookup's backward adds into them). */
static int step_backward(struct tf_gpu *g, const struct step_acts *s)
{
	const struct tf_config *c = &g->cfg;
	int D = c->dmodel, T = c->seq, V = c->vocab, N = c->batch * T;
	size_t ND = (size_t)N * D;
	const int *tokens = g->ids;
	float *df, *dx;
	int err = 0;

	df = tmp(g, ND, &err);
	dx = tmp(g, ND, &err);
	if (!err) {
		err = gemm(g, true, false, D, V, N, 1.0f, s->f, D, s->dlogits, V, 0.0f,
			   GR(TF_WOUT, 0), V) ||
		      gemm(g, false, true, N, D, V, 1.0f, s->dlogits, V, P(TF_WOUT, 0), V, 0.0f, df,
			   D);
		K(tfk_layernorm_bwd(s->f, s->rf, df, dx, N, D, 0, g->s), "layernorm backward");
	}
	for (int l = c->layers - 1; l >= 0 && !err; l--)
		err = layer_backward(g, l, &s->lc[l], dx);
	K(cudaMemsetAsync(GR(TF_TOK_EMB, 0), 0,
			  (tf_tensor_count(c, TF_TOK_EMB) + tf_tensor_count(c, TF_POS_EMB)) *
				  sizeof(float),
			  g->s),
	  "memset");
	K(tfk_embed_bwd(tokens, dx, GR(TF_TOK_EMB, 0), GR(TF_POS_EMB, 0), N, T, D, g->s),
	  "embedding backward");
	return err;
}

/* SGD on every parameter. The optimized step also averages the loss on the
 * GPU, so that one float goes down per step. */
static int step_update(struct tf_gpu *g, const struct step_acts *s)
{
	const struct tf_config *c = &g->cfg;
	int N = c->batch * c->seq, err = 0;

	if (g->naive) {
		/* one launch per parameter tensor */
		for (int t = 0; t < TF_NTENSORS && !err; t++)
			for (int l = 0; l < (t >= TF_WQKV && t <= TF_W2 ? c->layers : 1); l++)
				K(tfk_sgd(P(t, l), GR(t, l), tf_tensor_count(c, t), g->lr, g->s),
				  "sgd");
	} else {
		K(tfk_sgd(g->params, g->grads, tf_param_count(c), g->lr, g->s), "sgd");
		K(tfk_sum(s->row_loss, N, 1.0f / N, g->loss, g->s), "loss");
	}
	return err;
}

/* Forward, loss, backward and SGD update on device data already in place
 * (ids uploaded, or the embeddings in x0 for the naive path when x0 != NULL).
 * This is the part the optimized variant captures as a graph. One NVTX range
 * per phase, in the order of tf_ref_loss; after an error the later phases
 * launch nothing, but their ranges still open and close. */
static int step_body(struct tf_gpu *g, float *x0_given, float *row_loss_out)
{
	struct step_acts s = { 0 };
	int err;

	s.lc = calloc((size_t)g->cfg.layers, sizeof(*s.lc));
	if (!s.lc) {
		fprintf(stderr, "perfkit: transformer: out of memory\n");
		return -1;
	}
	nvtxRangePushA("embedding");
	err = step_embedding(g, &s, x0_given);
	nvtxRangePop();
	nvtxRangePushA("forward");
	if (!err)
		err = step_forward(g, &s, row_loss_out);
	nvtxRangePop();
	nvtxRangePushA("backward");
	if (!err)
		err = step_backward(g, &s);
	nvtxRangePop();
	nvtxRangePushA("update");
	if (!err)
		err = step_update(g, &s);
	nvtxRangePop();
	free(s.lc);
	return err;
}

/* Naive step: host-side embedding assembly and pageable blocking copies. */
static int naive_step(struct tf_gpu *g, int batch, double *loss)
{
	const struct tf_config *c = &g->cfg;
	int N = c->batch * c->seq, D = c->dmodel, err = 0;
	const int *host_ids = g->batches + (size_t)(batch % NBATCHES) * 2 * N;
	size_t ntok = tf_tensor_count(c, TF_TOK_EMB), npos = tf_tensor_count(c, TF_POS_EMB);
	float *x0, *row_loss;

	nvtxRangePushA("step");
	nvtxRangePushA("load/transfer");
	x0 = tmp(g, (size_t)N * D, &err);
	row_loss = tmp(g, (size_t)N, &err);
	K(cudaMemcpy(g->h_emb, g->params + tf_offset(c, TF_TOK_EMB, 0), ntok * sizeof(float),
		     cudaMemcpyDeviceToHost),
	  "download embeddings");
	K(cudaMemcpy(g->h_emb + ntok, g->params + tf_offset(c, TF_POS_EMB, 0),
		     npos * sizeof(float), cudaMemcpyDeviceToHost),
	  "download embeddings");
	nvtxRangePushA("embedding");
	for (int n = 0; n < N && !err; n++)
		for (int d = 0; d < D; d++)
			g->h_x[(size_t)n * D + d] = g->h_emb[(size_t)host_ids[n] * D + d] +
						    g->h_emb[ntok + (size_t)(n % c->seq) * D + d];
	nvtxRangePop();
	K(cudaMemcpy(x0, g->h_x, (size_t)N * D * sizeof(float), cudaMemcpyHostToDevice),
	  "upload embeddings");
	K(cudaMemcpy(g->ids, host_ids, 2 * (size_t)N * sizeof(int), cudaMemcpyHostToDevice),
	  "upload targets");
	nvtxRangePop();
	err = err || step_body(g, x0, row_loss);
	nvtxRangePushA("load/transfer");
	K(cudaMemcpy(g->h_rows, row_loss, (size_t)N * sizeof(float), cudaMemcpyDeviceToHost),
	  "download loss");
	nvtxRangePop();
	if (!err && loss) {
		double s = 0.0;

		for (int n = 0; n < N; n++)
			s += g->h_rows[n];
		*loss = s / N;
	}
	release_temps(g);
	nvtxRangePop();
	return err;
}

/* Optimized step: one pinned async copy of the ids, then the graph (captured
 * on first use after one eager step that fills the buffer pool), then an
 * async copy of the loss into pinned memory. No host synchronisation. */
static int optimized_step(struct tf_gpu *g, int batch, int step_index)
{
	const struct tf_config *c = &g->cfg;
	int N = c->batch * c->seq, err = 0;
	cudaGraph_t graph = NULL;

	nvtxRangePushA("step");
	nvtxRangePushA("load/transfer");
	K(cudaMemcpyAsync(g->ids, g->batches + (size_t)(batch % NBATCHES) * 2 * N,
			  2 * (size_t)N * sizeof(int), cudaMemcpyHostToDevice, g->s),
	  "upload ids");
	nvtxRangePop();
	if (!err && g->nbufs == 0) {
		err = step_body(g, NULL, NULL);
		release_temps(g);
	} else if (!err && !g->have_graph) {
		K(cudaStreamBeginCapture(g->s, cudaStreamCaptureModeThreadLocal), "capture");
		if (!err) {
			int body = step_body(g, NULL, NULL);

			release_temps(g);
			K(cudaStreamEndCapture(g->s, &graph), "end capture");
			err = err || body;
		}
		K(cudaGraphInstantiate(&g->exec, graph, 0), "graph instantiate");
		if (graph)
			cudaGraphDestroy(graph);
		g->have_graph = !err;
		nvtxRangePushA("graph");
		K(cudaGraphLaunch(g->exec, g->s), "graph launch");
		nvtxRangePop();
	} else if (!err) {
		nvtxRangePushA("graph");
		K(cudaGraphLaunch(g->exec, g->s), "graph launch");
		nvtxRangePop();
	}
	if (step_index >= 0 && step_index < g->nlosses)
		K(cudaMemcpyAsync(&g->losses[step_index], g->loss, sizeof(float),
				  cudaMemcpyDeviceToHost, g->s),
		  "download loss");
	nvtxRangePop();
	return err;
}

static int step(struct tf_gpu *g, int batch, int step_index, double *loss)
{
	return g->naive ? naive_step(g, batch, loss) : optimized_step(g, batch, step_index);
}

static void gpu__exit(struct tf_gpu *g)
{
	bool pinned = !g->naive;

	if (g->have_graph)
		cudaGraphExecDestroy(g->exec);
	g->naive = true; /* the pool goes back too */
	release_temps(g);
	free(g->bufs);
	free(g->buf_n);
	if (g->blas)
		cublasDestroy(g->blas);
	cudaFree(g->blas_ws);
	cudaFree(g->params);
	cudaFree(g->grads);
	cudaFree(g->ids);
	cudaFree(g->loss);
	if (pinned) {
		cudaFreeHost(g->batches);
		cudaFreeHost(g->losses);
	} else {
		free(g->batches);
	}
	free(g->h_emb);
	free(g->h_x);
	free(g->h_rows);
	if (g->s)
		cudaStreamDestroy(g->s);
	memset(g, 0, sizeof(*g));
}

static int gpu__init(struct tf_gpu *g, const struct tf_config *c, bool naive, float lr,
		     const float *params, uint64_t data_seed, int nlosses)
{
	int N = c->batch * c->seq, err = 0;
	size_t np = tf_param_count(c), nb = (size_t)NBATCHES * 2 * N;

	memset(g, 0, sizeof(*g));
	g->cfg = *c;
	g->naive = naive;
	g->lr = lr;
	nvtxRangePushA("load/transfer");
	/* naive: the legacy default stream, where every copy and free serialises */
	if (!naive)
		K(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking), "stream");
	if (!err && blas_ok(cublasCreate(&g->blas), "cublasCreate"))
		err = -1;
	if (!err && blas_ok(cublasSetStream(g->blas, g->s), "cublasSetStream"))
		err = -1;
	if (!naive) {
		/* cuBLAS allocates nothing under graph capture once it has a workspace */
		K(cudaMalloc(&g->blas_ws, BLAS_WORKSPACE_BYTES), "cudaMalloc");
		if (!err && blas_ok(cublasSetWorkspace(g->blas, g->blas_ws, BLAS_WORKSPACE_BYTES),
				    "cublasSetWorkspace"))
			err = -1;
		K(cudaMallocHost((void **)&g->batches, nb * sizeof(int)), "cudaMallocHost");
		K(cudaMallocHost((void **)&g->losses,
				 (size_t)(nlosses > 0 ? nlosses : 1) * sizeof(float)),
		  "cudaMallocHost");
		g->nlosses = nlosses;
	} else {
		g->batches = malloc(nb * sizeof(int));
		g->h_emb = malloc((tf_tensor_count(c, TF_TOK_EMB) + tf_tensor_count(c, TF_POS_EMB)) *
				  sizeof(float));
		g->h_x = malloc((size_t)N * c->dmodel * sizeof(float));
		g->h_rows = malloc((size_t)N * sizeof(float));
		if (!err && (!g->batches || !g->h_emb || !g->h_x || !g->h_rows)) {
			fprintf(stderr, "perfkit: transformer: out of memory\n");
			err = -1;
		}
	}
	K(cudaMalloc((void **)&g->params, np * sizeof(float)), "cudaMalloc");
	K(cudaMalloc((void **)&g->grads, np * sizeof(float)), "cudaMalloc");
	K(cudaMalloc((void **)&g->ids, 2 * (size_t)N * sizeof(int)), "cudaMalloc");
	K(cudaMalloc((void **)&g->loss, sizeof(float)), "cudaMalloc");
	K(cudaMemcpy(g->params, params, np * sizeof(float), cudaMemcpyHostToDevice), "upload");
	if (!err)
		for (int i = 0; i < NBATCHES; i++)
			tf_make_batch(c, data_seed, i, g->batches + (size_t)i * 2 * N,
				      g->batches + (size_t)i * 2 * N + N);
	nvtxRangePop();
	if (err)
		gpu__exit(g);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median time per step over `iters` runs of `steps` steps, after three
 * warm-up steps (for the optimized variant: pool fill, capture, replay). */
static int time_steps(struct tf_gpu *g, int steps, int iters, double *ms_per_step)
{
	double *t = calloc((size_t)iters, sizeof(double)), loss;
	int err = -1;

	if (!t)
		goto out;
	for (int i = 0; i < 3; i++)
		if (step(g, i, -1, &loss))
			goto out;
	if (cuda_ok(cudaDeviceSynchronize(), "sync"))
		goto out;
	for (int it = 0; it < iters; it++) {
		double t0 = wl_now_ms();

		for (int i = 0; i < steps; i++)
			if (step(g, i, i, &loss))
				goto out;
		if (cuda_ok(cudaDeviceSynchronize(), "sync"))
			goto out;
		t[it] = (wl_now_ms() - t0) / steps;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp_double);
	*ms_per_step = t[iters / 2];
	err = 0;
out:
	free(t);
	return err;
}

static void init_params(const struct tf_config *c, uint64_t seed, float *pf, double *pd)
{
	size_t n = tf_param_count(c);

	tf_init_params(c, seed, pd);
	for (size_t i = 0; i < n; i++) {
		pf[i] = (float)pd[i];
		pd[i] = pf[i]; /* the reference starts from the values the GPU has */
	}
}

/* --check, part 1: gradients of one step of a tiny model, GPU against the
 * CPU reference (per-tensor relative L2), and the CPU reference against
 * central finite differences on a spread of parameters. */
static const struct tf_config grad_cfg = {
	.layers = 2, .dmodel = 16, .heads = 2, .seq = 8, .batch = 2, .vocab = 11
};

static int check_gradients(bool naive, uint64_t seed, double *worst, bool *ok)
{
	const struct tf_config *c = &grad_cfg;
	size_t n = tf_param_count(c);
	int N = c->batch * c->seq, *tokens = malloc(2 * (size_t)N * sizeof(int)), err = -1;
	int steps, done;
	float *pf = malloc(n * sizeof(float)), *gf = malloc(n * sizeof(float));
	double *pd = malloc(n * sizeof(double)), *gd = malloc(n * sizeof(double));
	double *gg = malloc(n * sizeof(double)), loss_ref, fd_worst = 0.0;
	struct tf_gpu g;

	if (!tokens || !pf || !gf || !pd || !gd || !gg) {
		fprintf(stderr, "perfkit: transformer: out of memory\n");
		goto out;
	}
	init_params(c, seed, pf, pd);
	tf_make_batch(c, seed, 0, tokens, tokens + N);
	loss_ref = tf_ref_loss(c, pd, tokens, tokens + N, gd);
	if (gpu__init(&g, c, naive, 0.0f, pf, seed, 1))
		goto out;
	/* optimized: eager step, capture + launch, then a replay; the last step
	 * runs into poisoned gradients, so it must write every one itself */
	steps = naive ? 1 : 3;
	for (done = 0; done < steps; done++)
		if ((done == steps - 1 &&
		     cuda_ok(cudaMemsetAsync(g.grads, 0xff, n * sizeof(float), g.s), "poison")) ||
		    step(&g, 0, 0, NULL))
			break;
	if (done != steps || cuda_ok(cudaDeviceSynchronize(), "sync") ||
	    cuda_ok(cudaMemcpy(gf, g.grads, n * sizeof(float), cudaMemcpyDeviceToHost),
		    "download")) {
		gpu__exit(&g);
		goto out;
	}
	gpu__exit(&g);
	for (size_t i = 0; i < n; i++)
		gg[i] = gf[i];
	*worst = 0.0;
	for (int t = 0; t < TF_NTENSORS; t++)
		for (int l = 0; l < (t >= TF_WQKV && t <= TF_W2 ? c->layers : 1); l++) {
			size_t off = tf_offset(c, t, l);
			double e = wl_rel_l2(gg + off, gd + off, tf_tensor_count(c, t));

			if (!(e <= *worst))
				*worst = e;
		}
	/* finite differences of the reference on a spread of parameters */
	for (size_t i = 0; i < n; i += n / 97 + 1) {
		double save = pd[i], lp, lm, fd, e;

		pd[i] = save + 1e-5;
		lp = tf_ref_loss(c, pd, tokens, tokens + N, NULL);
		pd[i] = save - 1e-5;
		lm = tf_ref_loss(c, pd, tokens, tokens + N, NULL);
		pd[i] = save;
		fd = (lp - lm) / 2e-5;
		e = fabs(fd - gd[i]) / (1e-2 + fabs(fd));
		if (e > fd_worst)
			fd_worst = e;
	}
	*ok = *worst <= GRAD_TOL && fd_worst <= FD_TOL;
	printf("check %-9s gradients (L%d D%d H%d T%d B%d V%d, loss %.6f): GPU vs CPU worst "
	       "tensor rel L2 %.2e (tolerance %.0e); CPU vs finite differences %.2e "
	       "(tolerance %.0e) -> %s\n",
	       naive ? "naive" : "optimized", c->layers, c->dmodel, c->heads, c->seq, c->batch,
	       c->vocab, loss_ref, *worst, GRAD_TOL, fd_worst, FD_TOL, *ok ? "ok" : "FAIL");
	err = 0;
out:
	free(tokens);
	free(pf);
	free(gf);
	free(pd);
	free(gd);
	free(gg);
	return err;
}

/* --check, part 2: the loss must fall on the synthetic task (first ten
 * steps' mean against the last ten's, over 300 SGD steps). */
#define TRAIN_STEPS 300
static const struct tf_config train_cfg = {
	.layers = 1, .dmodel = 16, .heads = 2, .seq = 8, .batch = 4, .vocab = 11
};

static int check_training(bool naive, uint64_t seed, bool *ok)
{
	const struct tf_config *c = &train_cfg;
	size_t n = tf_param_count(c);
	float *pf = malloc(n * sizeof(float));
	double *pd = malloc(n * sizeof(double)), first = 0.0, last = 0.0;
	struct tf_gpu g;
	int err = -1;

	if (!pf || !pd) {
		fprintf(stderr, "perfkit: transformer: out of memory\n");
		goto out;
	}
	init_params(c, seed, pf, pd);
	if (gpu__init(&g, c, naive, 0.1f, pf, seed, TRAIN_STEPS))
		goto out;
	for (int s = 0; s < TRAIN_STEPS; s++) {
		double loss = 0.0;

		if (step(&g, s, s, &loss))
			goto fail;
		if (!naive)
			continue;
		if (s < 10)
			first += loss / 10;
		if (s >= TRAIN_STEPS - 10)
			last += loss / 10;
	}
	if (cuda_ok(cudaDeviceSynchronize(), "sync"))
		goto fail;
	if (!naive)
		for (int s = 0; s < 10; s++) {
			first += g.losses[s] / 10;
			last += g.losses[TRAIN_STEPS - 10 + s] / 10;
		}
	*ok = last < 0.5 * first;
	printf("check %-9s training (L%d D%d V%d, %d SGD steps): loss %.4f -> %.4f -> %s\n",
	       naive ? "naive" : "optimized", c->layers, c->dmodel, c->vocab, TRAIN_STEPS, first,
	       last, *ok ? "ok" : "FAIL");
	err = 0;
fail:
	gpu__exit(&g);
out:
	free(pf);
	free(pd);
	return err;
}

int main(int argc, char **argv)
{
	struct tf_opts o = {
		.common = { .variant = WL_BOTH, .iters = 3, .seed = 1 },
		.cfg = { .layers = 4, .dmodel = 256, .heads = 4, .seq = 128, .batch = 8,
			 .vocab = 4096 },
		.steps = 20,
	};
	const struct wl_option extra[] = {
		{ "layers", "=N  transformer layers (default 4)", wl_parse_int, &o.cfg.layers },
		{ "dmodel", "=N  model width (default 256)", wl_parse_int, &o.cfg.dmodel },
		{ "heads", "=N  attention heads, dividing dmodel (default 4)", wl_parse_int,
		  &o.cfg.heads },
		{ "seq", "=N  sequence length (default 128)", wl_parse_int, &o.cfg.seq },
		{ "batch", "=N  sequences per step, the size (default 8)", wl_parse_int,
		  &o.cfg.batch },
		{ "vocab", "=N  vocabulary size (default 4096)", wl_parse_int, &o.cfg.vocab },
		{ "steps", "=N  timed training steps per run (default 20)", wl_parse_int,
		  &o.steps },
	};
	struct wl_result res[2];
	char size[96], msg[128];
	int nres = 0, rc = 2, pr;
	size_t np;
	float *pf = NULL;
	double *pd = NULL;
	bool check_failed = false;

	pr = wl_parse_args("transformer", argc, argv, &o.common, extra,
			   (int)(sizeof(extra) / sizeof(extra[0])));
	if (pr)
		return pr > 0 ? 0 : 2;
	if (tf_config_check(&o.cfg, msg, sizeof(msg))) {
		fprintf(stderr, "perfkit: transformer: %s\n", msg);
		return 2;
	}
	np = tf_param_count(&o.cfg);
	pf = malloc(np * sizeof(float));
	pd = malloc(np * sizeof(double));
	if (!pf || !pd) {
		fprintf(stderr, "perfkit: transformer: out of memory for %zu parameters\n", np);
		goto out;
	}
	init_params(&o.cfg, o.common.seed, pf, pd);
	snprintf(size, sizeof(size), "L%d D%d H%d T%d B%d V%d", o.cfg.layers, o.cfg.dmodel,
		 o.cfg.heads, o.cfg.seq, o.cfg.batch, o.cfg.vocab);
	printf("transformer: %s, %zu parameters, %d timed steps x %d runs per variant\n", size,
	       np, o.steps, o.common.iters);

	for (int naive = 1; naive >= 0; naive--) {
		struct tf_gpu g;
		double ms;
		int tokens = o.cfg.batch * o.cfg.seq;

		if (!(o.common.variant & (naive ? WL_NAIVE : WL_OPTIMIZED)))
			continue;
		if (gpu__init(&g, &o.cfg, naive, 0.01f, pf, o.common.seed, o.steps))
			goto out;
		pr = time_steps(&g, o.steps, o.common.iters, &ms);
		if (!pr && !naive)
			printf("optimized: %d pooled buffers, one graph per step\n", g.nbufs);
		gpu__exit(&g);
		if (pr)
			goto out;
		res[nres++] = (struct wl_result){ .workload = "transformer",
						  .variant = naive ? "naive" : "optimized",
						  .size = size,
						  .step_ms = ms,
						  .throughput = 1e3 * tokens / ms,
						  .unit = "tokens/s" };
	}

	if (o.common.check) {
		for (int i = 0; i < nres; i++) {
			bool naive = strcmp(res[i].variant, "naive") == 0, gok = false, tok = false;
			double worst = 0.0;

			if (check_gradients(naive, o.common.seed, &worst, &gok) ||
			    check_training(naive, o.common.seed, &tok))
				goto out;
			res[i].checked = true;
			res[i].check_ok = gok && tok;
			res[i].check_error = worst;
			check_failed |= !res[i].check_ok;
		}
	}

	wl_print_table(stdout, res, nres);
	if (o.common.json)
		for (int i = 0; i < nres; i++)
			wl_print_json(stdout, &res[i]);
	rc = check_failed ? 1 : 0;
out:
	free(pf);
	free(pd);
	return rc;
}
