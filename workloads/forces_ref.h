/* forces_ref.h - inputs and CPU reference of the batched forces workload
 * (seed 002): small molecular structures (12 to 64 atoms) and a pairwise
 * radial-basis potential with a smooth cosine cutoff,
 *
 *   E = sum_{i<j} phi(r_ij),  phi(r) = fc(r) * sum_k w_k exp(-gamma (r - mu_k)^2),
 *   fc(r) = (cos(pi r / rc) + 1) / 2 for r < rc, else 0,
 *
 * with analytic forces F_i = -dE/dx_i = -sum_j phi'(r_ij) (x_i - x_j) / r_ij.
 *
 * Plain C in double: the host program, the unit tests and the GPU check. */
#ifndef FORCES_REF_H
#define FORCES_REF_H

#include <stdint.h>

#define FO_MIN_ATOMS 12
#define FO_MAX_ATOMS 64
#define FO_BASIS 16
#define FO_CUTOFF 5.0      /* Angstrom */
#define FO_MIN_DIST 0.9    /* closest approach of two atoms in a structure */

struct fo_params {
	double w[FO_BASIS];    /* weights, drawn from N(0, 0.5^2) */
	double mu[FO_BASIS];   /* centres, evenly from 0.5 to the cutoff */
	double gamma;          /* width, 1 / Angstrom^2 */
	double cutoff;
};

/* A set of structures: atoms of structure s are offset[s] .. offset[s+1]-1,
 * positions pos[3*atom .. 3*atom+2]. */
struct fo_set {
	int structures, atoms;
	int *offset;           /* [structures + 1] */
	double *pos;           /* [atoms * 3] */
};

void fo_params__init(struct fo_params *p, uint64_t seed);
/* Structure s depends only on (seed, first + s), so sets of different sizes
 * drawn from one seed share their leading structures. */
int fo_set__new(struct fo_set *set, int structures, uint64_t seed, int first);
void fo_set__delete(struct fo_set *set);

/* Pair term and its derivative with respect to r. */
double fo_phi(const struct fo_params *p, double r, double *dphi_dr);
double fo_energy(const struct fo_params *p, const double *pos, int n);
/* Energy, and forces[3n] = -dE/dx. */
double fo_energy_forces(const struct fo_params *p, const double *pos, int n, double *forces);
/* Forces by central finite differences of fo_energy with step h. */
void fo_fd_forces(const struct fo_params *p, const double *pos, int n, double h, double *forces);

#endif
