/* rollout_ref.h - the stochastic operator rollout of seed 001: its inputs, its
 * noise generator and its CPU reference in double precision.
 *
 * One timestep maps the state x (realizations x H x W x C, channels innermost)
 * to GELU(InstanceNorm(conv3x3(x, w))) + sigma * noise. The convolution has no
 * bias (instance normalisation would remove it) and zero padding. The noise is
 * counter-based: element i of step s is a pure function of (seed, s, i), so
 * the GPU draws exactly the same numbers in any order.
 *
 * Plain C: CI builds and tests it without CUDA. */
#ifndef ROLLOUT_REF_H
#define ROLLOUT_REF_H

#include <stddef.h>
#include <stdint.h>

#define ROLLOUT_NOISE_SIGMA 0.1
#define ROLLOUT_NORM_EPS 1e-5

struct rollout_config {
	int realizations;
	int channels;
	int height, width;
	int timesteps;
	uint64_t seed;
};

size_t rollout_state_count(const struct rollout_config *c);  /* R*H*W*C */
size_t rollout_weight_count(const struct rollout_config *c); /* 9*C*C */

/* Deterministic inputs from c->seed: the initial state (standard normal) and
 * the weights, laid out [tap = ky*3+kx][ci][co], He-scaled. */
void rollout_init(const struct rollout_config *c, double *x0, double *w);

/* Counter-based noise: one key per (seed, step), then one splitmix64 output
 * per pair of element indices. Mirrored bit for bit in kernels/rollout.cu. */
uint64_t rollout_noise_key(uint64_t seed, int step);
uint64_t rollout_noise_bits(uint64_t key, uint64_t index);
/* Box-Muller of two 24-bit fields of the bits of index/2 (cosine for even
 * indices, sine for odd): 24-bit uniforms are exact in float, so the GPU's
 * float version differs only by its log/sin/cos rounding. */
double rollout_noise_normal(uint64_t key, uint64_t index);

double rollout_gelu(double x); /* tanh approximation */

/* The three stages of one timestep, each over the whole state. */
void rollout_ref_conv(const struct rollout_config *c, const double *x, const double *w,
		      double *y);
void rollout_ref_instnorm(const struct rollout_config *c, double *y);
void rollout_ref_gelu_noise(const struct rollout_config *c, int step, double *y);

/* Run c->timesteps steps from x (overwritten with the final state). tmp holds
 * rollout_state_count() doubles. */
void rollout_ref_run(const struct rollout_config *c, const double *w, double *x, double *tmp);

/* Error measures between a result and a reference of n values. */
struct rollout_error {
	double rel_l2;   /* ||a - ref|| / ||ref|| */
	double max_abs;  /* max |a - ref| */
	double mean_abs; /* mean |a - ref| */
};
void rollout_compare(const double *a, const double *ref, size_t n, struct rollout_error *e);

#endif
