/* transformer_ref.c - CPU reference of the transformer workload (seeds
 * 003/004): forward pass, loss and backward pass in double precision. It is
 * written for clarity, not speed: the checks run it on tiny configurations. */
#include "transformer_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

int tf_config_check(const struct tf_config *c, char *msg, size_t msg_bytes)
{
	if (c->layers < 1 || c->dmodel < 1 || c->heads < 1 || c->seq < 1 || c->batch < 1 ||
	    c->vocab < 2) {
		snprintf(msg, msg_bytes, "every size must be positive (vocab at least 2)");
		return -1;
	}
	if (c->dmodel % c->heads) {
		snprintf(msg, msg_bytes, "--dmodel=%d is not divisible by --heads=%d", c->dmodel,
			 c->heads);
		return -1;
	}
	return 0;
}

size_t tf_tensor_count(const struct tf_config *c, enum tf_tensor t)
{
	size_t D = (size_t)c->dmodel;

	switch (t) {
	case TF_TOK_EMB:
		return (size_t)c->vocab * D;
	case TF_POS_EMB:
		return (size_t)c->seq * D;
	case TF_WQKV:
		return D * 3 * D;
	case TF_WO:
		return D * D;
	case TF_W1:
	case TF_W2:
		return D * 4 * D;
	case TF_WOUT:
		return D * (size_t)c->vocab;
	default:
		return 0;
	}
}

static size_t layer_count(const struct tf_config *c)
{
	return tf_tensor_count(c, TF_WQKV) + tf_tensor_count(c, TF_WO) +
	       tf_tensor_count(c, TF_W1) + tf_tensor_count(c, TF_W2);
}

size_t tf_offset(const struct tf_config *c, enum tf_tensor t, int layer)
{
	size_t base = tf_tensor_count(c, TF_TOK_EMB) + tf_tensor_count(c, TF_POS_EMB);
	size_t lb = base + (size_t)layer * layer_count(c);

	switch (t) {
	case TF_TOK_EMB:
		return 0;
	case TF_POS_EMB:
		return tf_tensor_count(c, TF_TOK_EMB);
	case TF_WQKV:
		return lb;
	case TF_WO:
		return lb + tf_tensor_count(c, TF_WQKV);
	case TF_W1:
		return lb + tf_tensor_count(c, TF_WQKV) + tf_tensor_count(c, TF_WO);
	case TF_W2:
		return lb + tf_tensor_count(c, TF_WQKV) + tf_tensor_count(c, TF_WO) +
		       tf_tensor_count(c, TF_W1);
	case TF_WOUT:
	default:
		return base + (size_t)c->layers * layer_count(c);
	}
}

size_t tf_param_count(const struct tf_config *c)
{
	return tf_offset(c, TF_WOUT, 0) + tf_tensor_count(c, TF_WOUT);
}

const char *tf_tensor_name(enum tf_tensor t)
{
	static const char *const names[TF_NTENSORS] = { "tok_emb", "pos_emb", "wqkv", "wo",
							"w1",      "w2",      "wout" };

	return t < TF_NTENSORS ? names[t] : "?";
}

static void fill_normal(struct wl_rng *rng, double *p, size_t n, double std)
{
	for (size_t i = 0; i < n; i++)
		p[i] = std * wl_rng_normal(rng);
}

void tf_init_params(const struct tf_config *c, uint64_t seed, double *params)
{
	struct wl_rng rng;
	double D = c->dmodel;

	wl_rng_seed(&rng, seed);
	fill_normal(&rng, params + tf_offset(c, TF_TOK_EMB, 0), tf_tensor_count(c, TF_TOK_EMB),
		    1.0);
	fill_normal(&rng, params + tf_offset(c, TF_POS_EMB, 0), tf_tensor_count(c, TF_POS_EMB),
		    1.0);
	for (int l = 0; l < c->layers; l++) {
		fill_normal(&rng, params + tf_offset(c, TF_WQKV, l), tf_tensor_count(c, TF_WQKV),
			    1.0 / sqrt(D));
		fill_normal(&rng, params + tf_offset(c, TF_WO, l), tf_tensor_count(c, TF_WO),
			    1.0 / sqrt(D));
		fill_normal(&rng, params + tf_offset(c, TF_W1, l), tf_tensor_count(c, TF_W1),
			    1.0 / sqrt(D));
		fill_normal(&rng, params + tf_offset(c, TF_W2, l), tf_tensor_count(c, TF_W2),
			    1.0 / sqrt(4.0 * D));
	}
	fill_normal(&rng, params + tf_offset(c, TF_WOUT, 0), tf_tensor_count(c, TF_WOUT),
		    1.0 / sqrt(D));
}

int tf_next_token(const struct tf_config *c, int token)
{
	/* 5 is coprime with any vocab not divisible by 5; for those the rule is
	 * still a fixed function of the current token, which is all it needs. */
	return (int)((5LL * token + 3) % c->vocab);
}

void tf_make_batch(const struct tf_config *c, uint64_t seed, int index, int *tokens,
		   int *targets)
{
	struct wl_rng rng;

	wl_rng_seed(&rng, seed * 0x9e3779b97f4a7c15ull + (uint64_t)index);
	for (int b = 0; b < c->batch; b++) {
		int tok = (int)(wl_rng_u64(&rng) % (uint64_t)c->vocab);

		for (int t = 0; t < c->seq; t++) {
			tokens[b * c->seq + t] = tok;
			tok = tf_next_token(c, tok);
			targets[b * c->seq + t] = tok;
		}
	}
}

double tf_gelu(double u)
{
	const double k = 0.7978845608028654;

	return 0.5 * u * (1.0 + tanh(k * (u + 0.044715 * u * u * u)));
}

double tf_gelu_grad(double u)
{
	const double k = 0.7978845608028654;
	double th = tanh(k * (u + 0.044715 * u * u * u));

	return 0.5 * (1.0 + th) + 0.5 * u * (1.0 - th * th) * k * (1.0 + 3.0 * 0.044715 * u * u);
}

/* C[M][N] (+)= A[M][K] B[K][N] */
static void mm(const double *A, const double *B, double *C, int M, int K, int N, int acc)
{
	if (!acc)
		memset(C, 0, sizeof(double) * (size_t)M * N);
	for (int m = 0; m < M; m++)
		for (int k = 0; k < K; k++) {
			double a = A[(size_t)m * K + k];

			for (int n = 0; n < N; n++)
				C[(size_t)m * N + n] += a * B[(size_t)k * N + n];
		}
}

/* C[M][N] += A[K][M]^T B[K][N]  (weight gradients) */
static void mm_tn(const double *A, const double *B, double *C, int M, int K, int N)
{
	for (int k = 0; k < K; k++)
		for (int m = 0; m < M; m++) {
			double a = A[(size_t)k * M + m];

			for (int n = 0; n < N; n++)
				C[(size_t)m * N + n] += a * B[(size_t)k * N + n];
		}
}

/* C[M][N] (+)= A[M][K] B[N][K]^T  (input gradients through W [N][K]) */
static void mm_nt(const double *A, const double *B, double *C, int M, int K, int N, int acc)
{
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double s = acc ? C[(size_t)m * N + n] : 0.0;

			for (int k = 0; k < K; k++)
				s += A[(size_t)m * K + k] * B[(size_t)n * K + k];
			C[(size_t)m * N + n] = s;
		}
}

static void layernorm(const double *x, double *y, double *rstd, int N, int D)
{
	for (int n = 0; n < N; n++) {
		const double *xr = x + (size_t)n * D;
		double mean = 0.0, var = 0.0;

		for (int d = 0; d < D; d++)
			mean += xr[d];
		mean /= D;
		for (int d = 0; d < D; d++)
			var += (xr[d] - mean) * (xr[d] - mean);
		var /= D;
		rstd[n] = 1.0 / sqrt(var + TF_LN_EPS);
		for (int d = 0; d < D; d++)
			y[(size_t)n * D + d] = (xr[d] - mean) * rstd[n];
	}
}

/* dx += LN backward of dy, given the normalised output y and 1/std. */
static void layernorm_back(const double *y, const double *rstd, const double *dy, double *dx,
			   int N, int D)
{
	for (int n = 0; n < N; n++) {
		const double *yr = y + (size_t)n * D, *dyr = dy + (size_t)n * D;
		double mdy = 0.0, mdyy = 0.0;

		for (int d = 0; d < D; d++) {
			mdy += dyr[d];
			mdyy += dyr[d] * yr[d];
		}
		mdy /= D;
		mdyy /= D;
		for (int d = 0; d < D; d++)
			dx[(size_t)n * D + d] += rstd[n] * (dyr[d] - mdy - yr[d] * mdyy);
	}
}

/* Activations of one layer kept for the backward pass, in the model's names
 * (transformer_ref.h): x the layer's input, a = LN(x) and ra its 1/std,
 * qkv = a Wqkv, p the attention probabilities, att = Attn(a), h = x + att Wo,
 * m = LN(h) and rm its 1/std, u = m W1, g = GELU(u). */
struct layer_cache {
	double *x, *a, *ra, *qkv, *p, *att, *h, *m, *rm, *u, *g;
};

/* What the forward phase leaves for the backward phase. */
struct ref_acts {
	struct layer_cache *lc; /* one per layer */
	double *x;              /* the embeddings, then each layer's output */
	double *f, *rf;         /* the final layer norm and its 1/std */
	double *logits, *prob;  /* prob: the softmax of the logits */
};

static double *alloc_d(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));

	if (!p) {
		fprintf(stderr, "perfkit: transformer: out of memory\n");
		exit(2);
	}
	return p;
}

static void attention(const struct tf_config *c, const double *qkv, double *p, double *att)
{
	int T = c->seq, D = c->dmodel, H = c->heads, dh = D / H;
	double scale = 1.0 / sqrt((double)dh);

	for (int b = 0; b < c->batch; b++)
		for (int h = 0; h < H; h++) {
			double *P = p + ((size_t)b * H + h) * T * T;

			for (int i = 0; i < T; i++) {
				const double *q = qkv + ((size_t)b * T + i) * 3 * D + h * dh;
				double mx = -INFINITY, sum = 0.0;

				for (int j = 0; j < T; j++) {
					const double *k = qkv + ((size_t)b * T + j) * 3 * D + D + h * dh;
					double s = 0.0;

					if (j > i) {
						P[i * T + j] = 0.0;
						continue;
					}
					for (int e = 0; e < dh; e++)
						s += q[e] * k[e];
					P[i * T + j] = s * scale;
					if (P[i * T + j] > mx)
						mx = P[i * T + j];
				}
				for (int j = 0; j <= i; j++) {
					P[i * T + j] = exp(P[i * T + j] - mx);
					sum += P[i * T + j];
				}
				for (int j = 0; j <= i; j++)
					P[i * T + j] /= sum;
				for (int e = 0; e < dh; e++) {
					double o = 0.0;

					for (int j = 0; j <= i; j++)
						o += P[i * T + j] *
						     qkv[((size_t)b * T + j) * 3 * D + 2 * D + h * dh + e];
					att[((size_t)b * T + i) * D + h * dh + e] = o;
				}
			}
		}
}

static void attention_back(const struct tf_config *c, const double *qkv, const double *p,
			   const double *datt, double *dqkv)
{
	int T = c->seq, D = c->dmodel, H = c->heads, dh = D / H;
	double scale = 1.0 / sqrt((double)dh);
	double *dp = alloc_d((size_t)T);

	for (int b = 0; b < c->batch; b++)
		for (int h = 0; h < H; h++) {
			const double *P = p + ((size_t)b * H + h) * T * T;

			for (int i = 0; i < T; i++) {
				const double *dout = datt + ((size_t)b * T + i) * D + h * dh;
				const double *q = qkv + ((size_t)b * T + i) * 3 * D + h * dh;
				double *dq = dqkv + ((size_t)b * T + i) * 3 * D + h * dh;
				double dot = 0.0;

				for (int j = 0; j <= i; j++) {
					const double *v = qkv + ((size_t)b * T + j) * 3 * D + 2 * D + h * dh;
					double *dv = dqkv + ((size_t)b * T + j) * 3 * D + 2 * D + h * dh;

					dp[j] = 0.0;
					for (int e = 0; e < dh; e++) {
						dp[j] += dout[e] * v[e];
						dv[e] += P[i * T + j] * dout[e];
					}
					dot += P[i * T + j] * dp[j];
				}
				for (int j = 0; j <= i; j++) {
					const double *k = qkv + ((size_t)b * T + j) * 3 * D + D + h * dh;
					double *dk = dqkv + ((size_t)b * T + j) * 3 * D + D + h * dh;
					double ds = scale * P[i * T + j] * (dp[j] - dot);

					for (int e = 0; e < dh; e++) {
						dq[e] += ds * k[e];
						dk[e] += ds * q[e];
					}
				}
			}
		}
	free(dp);
}

/* x0 = tok_emb[token] + pos_emb[position] */
static double *ref_embedding(const struct tf_config *c, const double *params, const int *tokens)
{
	int D = c->dmodel, T = c->seq, N = c->batch * c->seq;
	double *x = alloc_d((size_t)N * D);

	for (int n = 0; n < N; n++)
		for (int d = 0; d < D; d++)
			x[(size_t)n * D + d] =
				params[tf_offset(c, TF_TOK_EMB, 0) + (size_t)tokens[n] * D + d] +
				params[tf_offset(c, TF_POS_EMB, 0) + (size_t)(n % T) * D + d];
	return x;
}

/* Layer l: h = x + Attn(LN(x)) Wo, then x' = h + GELU(LN(h) W1) W2. The cache
 * k takes x; returns x', a new buffer. */
static double *layer_forward(const struct tf_config *c, const double *params, int l,
			     struct layer_cache *k, double *x)
{
	int D = c->dmodel, T = c->seq, N = c->batch * c->seq, F = 4 * D;
	size_t ND = (size_t)N * D;

	k->x = x;
	k->a = alloc_d(ND);
	k->ra = alloc_d((size_t)N);
	k->qkv = alloc_d(ND * 3);
	k->p = alloc_d((size_t)c->batch * c->heads * T * T);
	k->att = alloc_d(ND);
	k->h = alloc_d(ND);
	k->m = alloc_d(ND);
	k->rm = alloc_d((size_t)N);
	k->u = alloc_d((size_t)N * F);
	k->g = alloc_d((size_t)N * F);
	layernorm(k->x, k->a, k->ra, N, D);
	mm(k->a, params + tf_offset(c, TF_WQKV, l), k->qkv, N, D, 3 * D, 0);
	attention(c, k->qkv, k->p, k->att);
	memcpy(k->h, k->x, ND * sizeof(double));
	mm(k->att, params + tf_offset(c, TF_WO, l), k->h, N, D, D, 1);
	layernorm(k->h, k->m, k->rm, N, D);
	mm(k->m, params + tf_offset(c, TF_W1, l), k->u, N, D, F, 0);
	for (size_t i = 0; i < (size_t)N * F; i++)
		k->g[i] = tf_gelu(k->u[i]);
	x = alloc_d(ND);
	memcpy(x, k->h, ND * sizeof(double));
	mm(k->g, params + tf_offset(c, TF_W2, l), x, N, F, D, 1);
	return x;
}

/* Softmax of each row of logits into prob; returns the mean cross-entropy
 * of the targets. */
static double cross_entropy(const double *logits, const int *targets, double *prob, int N, int V)
{
	double loss = 0.0;

	for (int n = 0; n < N; n++) {
		const double *lg = logits + (size_t)n * V;
		double mx = lg[0], sum = 0.0;

		for (int v = 1; v < V; v++)
			if (lg[v] > mx)
				mx = lg[v];
		for (int v = 0; v < V; v++) {
			prob[(size_t)n * V + v] = exp(lg[v] - mx);
			sum += prob[(size_t)n * V + v];
		}
		for (int v = 0; v < V; v++)
			prob[(size_t)n * V + v] /= sum;
		loss += (mx + log(sum) - lg[targets[n]]) / N;
	}
	return loss;
}

/* Every layer, then the final layer norm, the logits and the cross-entropy;
 * returns the loss. */
static double ref_forward(const struct tf_config *c, const double *params, const int *targets,
			  struct ref_acts *s)
{
	int D = c->dmodel, V = c->vocab, N = c->batch * c->seq;
	size_t ND = (size_t)N * D;

	for (int l = 0; l < c->layers; l++)
		s->x = layer_forward(c, params, l, &s->lc[l], s->x);
	s->f = alloc_d(ND);
	s->rf = alloc_d((size_t)N);
	s->logits = alloc_d((size_t)N * V);
	s->prob = alloc_d((size_t)N * V);
	layernorm(s->x, s->f, s->rf, N, D);
	mm(s->f, params + tf_offset(c, TF_WOUT, 0), s->logits, N, D, V, 0);
	return cross_entropy(s->logits, targets, s->prob, N, V);
}

/* Gradients of layer l into grad; dx, the gradient of its output, becomes
 * the gradient of its input. */
static void layer_backward(const struct tf_config *c, const double *params, int l,
			   const struct layer_cache *k, double *dx, double *grad)
{
	int D = c->dmodel, N = c->batch * c->seq, F = 4 * D;
	size_t ND = (size_t)N * D;
	double *dg = alloc_d((size_t)N * F), *dm = alloc_d(ND);
	double *dh = alloc_d(ND), *datt = alloc_d(ND), *dqkv = alloc_d(ND * 3);
	double *da = alloc_d(ND);

	/* x' = h + g W2 */
	memcpy(dh, dx, ND * sizeof(double));
	mm_tn(k->g, dx, grad + tf_offset(c, TF_W2, l), F, N, D);
	mm_nt(dx, params + tf_offset(c, TF_W2, l), dg, N, D, F, 0);
	for (size_t i = 0; i < (size_t)N * F; i++)
		dg[i] *= tf_gelu_grad(k->u[i]);
	mm_tn(k->m, dg, grad + tf_offset(c, TF_W1, l), D, N, F);
	mm_nt(dg, params + tf_offset(c, TF_W1, l), dm, N, F, D, 0);
	layernorm_back(k->m, k->rm, dm, dh, N, D);
	/* h = x + att Wo */
	memcpy(dx, dh, ND * sizeof(double));
	mm_tn(k->att, dh, grad + tf_offset(c, TF_WO, l), D, N, D);
	mm_nt(dh, params + tf_offset(c, TF_WO, l), datt, N, D, D, 0);
	attention_back(c, k->qkv, k->p, datt, dqkv);
	mm_tn(k->a, dqkv, grad + tf_offset(c, TF_WQKV, l), D, N, 3 * D);
	mm_nt(dqkv, params + tf_offset(c, TF_WQKV, l), da, N, 3 * D, D, 0);
	layernorm_back(k->a, k->ra, da, dx, N, D);
	free(dg);
	free(dm);
	free(dh);
	free(datt);
	free(dqkv);
	free(da);
}

/* The gradient of every parameter, in reverse order: the cross-entropy's
 * (made in place of prob), the output layer and the final layer norm, every
 * layer from the last, then the embedding tables. */
static void ref_backward(const struct tf_config *c, const double *params, const int *tokens,
			 const int *targets, struct ref_acts *s, double *grad)
{
	int D = c->dmodel, T = c->seq, V = c->vocab, N = c->batch * c->seq;
	size_t ND = (size_t)N * D;
	double *dlogits = s->prob, *df = alloc_d(ND), *dx = alloc_d(ND);

	memset(grad, 0, tf_param_count(c) * sizeof(double));
	for (int n = 0; n < N; n++) {
		for (int v = 0; v < V; v++)
			dlogits[(size_t)n * V + v] /= N;
		dlogits[(size_t)n * V + targets[n]] -= 1.0 / N;
	}
	mm_tn(s->f, dlogits, grad + tf_offset(c, TF_WOUT, 0), D, N, V);
	mm_nt(dlogits, params + tf_offset(c, TF_WOUT, 0), df, N, V, D, 0);
	layernorm_back(s->f, s->rf, df, dx, N, D);
	for (int l = c->layers - 1; l >= 0; l--)
		layer_backward(c, params, l, &s->lc[l], dx, grad);
	for (int n = 0; n < N; n++)
		for (int d = 0; d < D; d++) {
			grad[tf_offset(c, TF_TOK_EMB, 0) + (size_t)tokens[n] * D + d] +=
				dx[(size_t)n * D + d];
			grad[tf_offset(c, TF_POS_EMB, 0) + (size_t)(n % T) * D + d] +=
				dx[(size_t)n * D + d];
		}
	free(df);
	free(dx);
}

static void ref_acts__exit(struct ref_acts *s, int layers)
{
	for (int l = 0; l < layers; l++) {
		struct layer_cache *k = &s->lc[l];

		free(k->x);
		free(k->a);
		free(k->ra);
		free(k->qkv);
		free(k->p);
		free(k->att);
		free(k->h);
		free(k->m);
		free(k->rm);
		free(k->u);
		free(k->g);
	}
	free(s->lc);
	free(s->x);
	free(s->f);
	free(s->rf);
	free(s->logits);
	free(s->prob);
}

/* The phases of transformer_main.c's step_body, in its order; the update
 * phase is tf_sgd, below. */
double tf_ref_loss(const struct tf_config *c, const double *params, const int *tokens,
		   const int *targets, double *grad)
{
	struct ref_acts s = { 0 };
	double loss;

	s.lc = calloc((size_t)c->layers, sizeof(*s.lc));
	if (!s.lc) {
		fprintf(stderr, "perfkit: transformer: out of memory\n");
		exit(2);
	}
	s.x = ref_embedding(c, params, tokens);
	loss = ref_forward(c, params, targets, &s);
	if (grad)
		ref_backward(c, params, tokens, targets, &s, grad);
	ref_acts__exit(&s, c->layers);
	return loss;
}

/* The update phase (step_update on the GPU). */
void tf_sgd(double *params, const double *grad, size_t n, double lr)
{
	for (size_t i = 0; i < n; i++)
		params[i] -= lr * grad[i];
}
