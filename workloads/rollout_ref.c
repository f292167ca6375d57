/* rollout_ref.c - CPU reference of the stochastic operator rollout (seed 001)
 * in double precision, and the deterministic inputs both sides start from. */
#include "rollout_ref.h"

#include <math.h>
#include <string.h>

#include "wl_common.h"

size_t rollout_state_count(const struct rollout_config *c)
{
	return (size_t)c->realizations * c->height * c->width * c->channels;
}

size_t rollout_weight_count(const struct rollout_config *c)
{
	return (size_t)9 * c->channels * c->channels;
}

void rollout_init(const struct rollout_config *c, double *x0, double *w)
{
	struct wl_rng rng;
	size_t n = rollout_state_count(c), nw = rollout_weight_count(c);
	/* He scaling keeps the convolution's output variance near its input's. */
	double scale = sqrt(2.0 / (9.0 * c->channels));

	wl_rng_seed(&rng, c->seed);
	for (size_t i = 0; i < n; i++)
		x0[i] = wl_rng_normal(&rng);
	for (size_t i = 0; i < nw; i++)
		w[i] = scale * wl_rng_normal(&rng);
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t rollout_noise_key(uint64_t seed, int step)
{
	return mix64(seed ^ mix64(0xd1b54a32d192ed03ull * (uint64_t)(step + 1)));
}

uint64_t rollout_noise_bits(uint64_t key, uint64_t index)
{
	return mix64(key + index * 0x9e3779b97f4a7c15ull);
}

double rollout_noise_normal(uint64_t key, uint64_t index)
{
	/* Elements 2k and 2k+1 are the cosine and sine halves of one
	 * Box-Muller draw: half the hashing and logarithms per element. */
	uint64_t bits = rollout_noise_bits(key, index >> 1);
	/* u1 in (0, 1] keeps the log finite; u2 in [0, 1). */
	double u1 = (double)((bits >> 40) + 1) * 0x1.0p-24;
	double u2 = (double)(bits & 0xffffffu) * 0x1.0p-24;
	double rad = sqrt(-2.0 * log(u1));

	return (index & 1) ? rad * sin(2.0 * M_PI * u2) : rad * cos(2.0 * M_PI * u2);
}

double rollout_gelu(double x)
{
	const double k = 0.7978845608028654; /* sqrt(2/pi) */

	return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

void rollout_ref_conv(const struct rollout_config *c, const double *x, const double *w,
		      double *y)
{
	int H = c->height, W = c->width, C = c->channels;

	for (int r = 0; r < c->realizations; r++) {
		const double *xr = x + (size_t)r * H * W * C;
		double *yr = y + (size_t)r * H * W * C;

		for (int h = 0; h < H; h++)
			for (int ww = 0; ww < W; ww++) {
				double *out = yr + ((size_t)h * W + ww) * C;

				memset(out, 0, sizeof(double) * C);
				for (int tap = 0; tap < 9; tap++) {
					int hh = h + tap / 3 - 1, wx = ww + tap % 3 - 1;
					const double *in, *wt;

					if (hh < 0 || hh >= H || wx < 0 || wx >= W)
						continue;
					in = xr + ((size_t)hh * W + wx) * C;
					wt = w + (size_t)tap * C * C;
					for (int ci = 0; ci < C; ci++)
						for (int co = 0; co < C; co++)
							out[co] += in[ci] * wt[ci * C + co];
				}
			}
	}
}

void rollout_ref_instnorm(const struct rollout_config *c, double *y)
{
	size_t plane = (size_t)c->height * c->width;
	int C = c->channels;

	for (int r = 0; r < c->realizations; r++) {
		double *yr = y + (size_t)r * plane * C;

		for (int ch = 0; ch < C; ch++) {
			double mean = 0.0, var = 0.0, rstd;

			for (size_t p = 0; p < plane; p++)
				mean += yr[p * C + ch];
			mean /= (double)plane;
			/* Two passes: the reference must not share the GPU's
			 * E[y^2] - mean^2 cancellation. */
			for (size_t p = 0; p < plane; p++) {
				double d = yr[p * C + ch] - mean;

				var += d * d;
			}
			var /= (double)plane;
			rstd = 1.0 / sqrt(var + ROLLOUT_NORM_EPS);
			for (size_t p = 0; p < plane; p++)
				yr[p * C + ch] = (yr[p * C + ch] - mean) * rstd;
		}
	}
}

void rollout_ref_gelu_noise(const struct rollout_config *c, int step, double *y)
{
	size_t n = rollout_state_count(c);
	uint64_t key = rollout_noise_key(c->seed, step);

	for (size_t i = 0; i < n; i++)
		y[i] = rollout_gelu(y[i]) + ROLLOUT_NOISE_SIGMA * rollout_noise_normal(key, i);
}

void rollout_ref_run(const struct rollout_config *c, const double *w, double *x, double *tmp)
{
	size_t n = rollout_state_count(c);

	for (int s = 0; s < c->timesteps; s++) {
		rollout_ref_conv(c, x, w, tmp);
		rollout_ref_instnorm(c, tmp);
		rollout_ref_gelu_noise(c, s, tmp);
		memcpy(x, tmp, n * sizeof(double));
	}
}

void rollout_compare(const double *a, const double *ref, size_t n, struct rollout_error *e)
{
	double sum = 0.0, mx = 0.0;

	for (size_t i = 0; i < n; i++) {
		double d = fabs(a[i] - ref[i]);

		/* NaN must not compare as small: it poisons max_abs. */
		if (d > mx || isnan(d))
			mx = isnan(mx) ? mx : d;
		sum += d;
	}
	e->rel_l2 = wl_rel_l2(a, ref, n);
	e->max_abs = mx;
	e->mean_abs = n ? sum / (double)n : 0.0;
}
