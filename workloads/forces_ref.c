/* forces_ref.c - structure generation and the double-precision energy and
 * forces of the batched forces workload. */
#include "forces_ref.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

/* Atoms per cubic Angstrom: about that of organic molecules, so that a
 * 64-atom structure spans about two cutoffs and most pairs interact. */
#define FO_DENSITY 0.08
#define FO_TRIES 1000

void fo_params__init(struct fo_params *p, uint64_t seed)
{
	struct wl_rng r;

	wl_rng_seed(&r, seed);
	p->cutoff = FO_CUTOFF;
	/* Neighbouring Gaussians overlap at about half height. */
	p->gamma = 4.0;
	for (int k = 0; k < FO_BASIS; k++) {
		p->mu[k] = 0.5 + (FO_CUTOFF - 0.5) * k / (FO_BASIS - 1);
		p->w[k] = 0.5 * wl_rng_normal(&r);
	}
}

static void place_atoms(struct wl_rng *r, double *pos, int n)
{
	double side = cbrt(n / FO_DENSITY);

	for (int i = 0; i < n; i++) {
		double *x = pos + 3 * i;

		/* Rejection keeps atoms FO_MIN_DIST apart; the density leaves
		 * plenty of room, the try limit only bounds the loop. */
		for (int t = 0; t < FO_TRIES; t++) {
			bool clash = false;

			for (int d = 0; d < 3; d++)
				x[d] = side * wl_rng_uniform(r);
			for (int j = 0; j < i && !clash; j++) {
				double dx = x[0] - pos[3 * j], dy = x[1] - pos[3 * j + 1],
				       dz = x[2] - pos[3 * j + 2];

				clash = dx * dx + dy * dy + dz * dz < FO_MIN_DIST * FO_MIN_DIST;
			}
			if (!clash)
				break;
		}
	}
}

int fo_set__new(struct fo_set *set, int structures, uint64_t seed, int first)
{
	struct wl_rng r;

	memset(set, 0, sizeof(*set));
	if (structures <= 0)
		return -EINVAL;
	set->structures = structures;
	set->offset = malloc(((size_t)structures + 1) * sizeof(*set->offset));
	if (!set->offset)
		return -ENOMEM;
	set->offset[0] = 0;
	for (int s = 0; s < structures; s++) {
		wl_rng_seed(&r, seed * 0x100000001b3ull + (uint64_t)(first + s));
		set->offset[s + 1] = set->offset[s] + FO_MIN_ATOMS +
				     (int)(wl_rng_u64(&r) % (FO_MAX_ATOMS - FO_MIN_ATOMS + 1));
	}
	set->atoms = set->offset[structures];
	set->pos = malloc((size_t)set->atoms * 3 * sizeof(*set->pos));
	if (!set->pos) {
		fo_set__delete(set);
		return -ENOMEM;
	}
	for (int s = 0; s < structures; s++) {
		/* Same stream as the atom count above: draw the count again. */
		wl_rng_seed(&r, seed * 0x100000001b3ull + (uint64_t)(first + s));
		(void)wl_rng_u64(&r);
		place_atoms(&r, set->pos + 3 * set->offset[s], set->offset[s + 1] - set->offset[s]);
	}
	return 0;
}

void fo_set__delete(struct fo_set *set)
{
	free(set->offset);
	free(set->pos);
	memset(set, 0, sizeof(*set));
}

double fo_phi(const struct fo_params *p, double r, double *dphi_dr)
{
	double fc, dfc, s = 0.0, ds = 0.0;

	if (r >= p->cutoff) {
		*dphi_dr = 0.0;
		return 0.0;
	}
	fc = 0.5 * (cos(M_PI * r / p->cutoff) + 1.0);
	dfc = -0.5 * M_PI / p->cutoff * sin(M_PI * r / p->cutoff);
	for (int k = 0; k < FO_BASIS; k++) {
		double d = r - p->mu[k], e = p->w[k] * exp(-p->gamma * d * d);

		s += e;
		ds += -2.0 * p->gamma * d * e;
	}
	*dphi_dr = dfc * s + fc * ds;
	return fc * s;
}

static double dist(const double *pos, int i, int j, double d[3])
{
	for (int c = 0; c < 3; c++)
		d[c] = pos[3 * i + c] - pos[3 * j + c];
	return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

double fo_energy(const struct fo_params *p, const double *pos, int n)
{
	double e = 0.0, d[3], dphi;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			e += fo_phi(p, dist(pos, i, j, d), &dphi);
	return e;
}

double fo_energy_forces(const struct fo_params *p, const double *pos, int n, double *forces)
{
	double e = 0.0, d[3], dphi;

	memset(forces, 0, (size_t)n * 3 * sizeof(*forces));
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			double r = dist(pos, i, j, d);

			e += fo_phi(p, r, &dphi);
			/* d = x_i - x_j: dE/dx_i = phi' d / r, and the
			 * opposite on j. */
			for (int c = 0; c < 3; c++) {
				double g = dphi * d[c] / r;

				forces[3 * i + c] -= g;
				forces[3 * j + c] += g;
			}
		}
	return e;
}

void fo_fd_forces(const struct fo_params *p, const double *pos, int n, double h, double *forces)
{
	double *x = malloc((size_t)n * 3 * sizeof(*x));

	if (!x) {
		for (int i = 0; i < 3 * n; i++)
			forces[i] = NAN;
		return;
	}
	memcpy(x, pos, (size_t)n * 3 * sizeof(*x));
	for (int i = 0; i < 3 * n; i++) {
		double keep = x[i], ep, em;

		x[i] = keep + h;
		ep = fo_energy(p, x, n);
		x[i] = keep - h;
		em = fo_energy(p, x, n);
		x[i] = keep;
		forces[i] = -(ep - em) / (2.0 * h);
	}
	free(x);
}
