/* transformer_ref.h - the small decoder-only transformer of seeds 003/004:
 * its configuration, parameter layout, synthetic training data and a CPU
 * reference of the loss and its gradient in double precision.
 *
 * Model (pre-norm, no biases, layer norms without affine parameters):
 *   x0 = tok_emb[token] + pos_emb[position]
 *   per layer: h = x + Attn(LN(x)) Wo,  Attn = causal multi-head softmax(QK^T/sqrt(dh)) V
 *              with [Q K V] = LN(x) Wqkv;   x' = h + GELU(LN(h) W1) W2  (MLP width 4*dmodel)
 *   logits = LN(x_L) Wout;  loss = mean cross-entropy of the next tokens.
 * Matrices are row-major, activations [tokens][features], y = x W with
 * W [in][out]. All parameters sit in one vector in the order of
 * enum tf_tensor (per layer for the four layer tensors), so that the GPU
 * keeps them in one buffer and SGD is one pass.
 *
 * Plain C: CI builds and tests it without CUDA. */
#ifndef TRANSFORMER_REF_H
#define TRANSFORMER_REF_H

#include <stddef.h>
#include <stdint.h>

#define TF_LN_EPS 1e-5

struct tf_config {
	int layers, dmodel, heads, seq, batch, vocab;
};

enum tf_tensor { TF_TOK_EMB, TF_POS_EMB, TF_WQKV, TF_WO, TF_W1, TF_W2, TF_WOUT, TF_NTENSORS };

/* 0, or -1 with a message in msg (dmodel not divisible by heads, ...). */
int tf_config_check(const struct tf_config *c, char *msg, size_t msg_bytes);

size_t tf_tensor_count(const struct tf_config *c, enum tf_tensor t); /* elements */
/* Offset of a tensor in the parameter vector (layer ignored for embeddings/Wout). */
size_t tf_offset(const struct tf_config *c, enum tf_tensor t, int layer);
size_t tf_param_count(const struct tf_config *c);
const char *tf_tensor_name(enum tf_tensor t);

/* Deterministic parameters: normal with std 1/sqrt(fan_in) for matrices,
 * std 1 for the embeddings. */
void tf_init_params(const struct tf_config *c, uint64_t seed, double *params);

/* The synthetic task: each sequence starts at a random token and follows a
 * fixed bijective rule next = (5 * cur + 3) mod vocab, so the next token is
 * learnable from the current one. tokens and targets hold batch*seq ids;
 * batch `index` of a given seed is always the same. */
void tf_make_batch(const struct tf_config *c, uint64_t seed, int index, int *tokens,
		   int *targets);
int tf_next_token(const struct tf_config *c, int token);

/* Mean cross-entropy loss of the batch; when grad is not NULL also its
 * gradient with respect to every parameter (tf_param_count values). */
double tf_ref_loss(const struct tf_config *c, const double *params, const int *tokens,
		   const int *targets, double *grad);

/* params -= lr * grad */
void tf_sgd(double *params, const double *grad, size_t n, double lr);

double tf_gelu(double u);
double tf_gelu_grad(double u);

#endif
