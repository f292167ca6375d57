/* wl_common.h - what the four reference workloads share: common options,
 * deterministic inputs, the result table and the --json line.
 *
 * Plain C with no CUDA headers, so CI builds and unit-tests it. */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum wl_variant { WL_NAIVE = 1, WL_OPTIMIZED = 2, WL_BOTH = 3 };

/* Options every workload takes. */
struct wl_common {
	enum wl_variant variant; /* --variant=naive|optimized|both (default both) */
	int iters;               /* --iters=N (default per workload) */
	bool check;              /* --check: compare with the CPU reference */
	bool json;               /* --json: one machine-readable result line per variant */
	uint64_t seed;           /* --seed=N (default 1) */
};

/* One workload-specific option: --name=value. `parse` returns 0 or -1 for a
 * bad value; it receives `target` untouched. */
struct wl_option {
	const char *name;
	const char *help;
	int (*parse)(const char *value, void *target);
	void *target;
};

/* Parsers for wl_option.parse. */
int wl_parse_int(const char *value, void *target);       /* int, > 0 */
int wl_parse_int_list(const char *value, void *target);  /* struct wl_int_list */
int wl_parse_string(const char *value, void *target);    /* const char * */

struct wl_int_list { int n; int v[16]; };

/* Added parsers. An extra option given without "=value" (e.g. --cpu-table)
 * reaches its parser with value NULL; every parser but wl_parse_flag then
 * fails, so a value-taking option still demands its value. */
int wl_parse_flag(const char *value, void *target);      /* bool; bare flag */
int wl_parse_count(const char *value, void *target);     /* int > 0, K/M suffix (10K, 1M) */

/* Parse argv into common (defaults already set by the caller) and extra.
 * Prints usage naming prog and every option on --help (returns 1) or on a bad
 * option (message on stderr, returns -1). Returns 0 on success. */
int wl_parse_args(const char *prog, int argc, char **argv, struct wl_common *common,
		  const struct wl_option *extra, int nextra);

/* Deterministic inputs: splitmix64-seeded xoshiro256** (same sequence on every
 * machine for a given seed). */
struct wl_rng { uint64_t s[4]; };
void wl_rng_seed(struct wl_rng *r, uint64_t seed);
uint64_t wl_rng_u64(struct wl_rng *r);
double wl_rng_uniform(struct wl_rng *r);            /* [0, 1) */
double wl_rng_normal(struct wl_rng *r);             /* mean 0, stddev 1 */

/* Relative error ||a - b|| / ||b|| in double. */
double wl_rel_l2(const double *a, const double *b, size_t n);

double wl_now_ms(void); /* monotonic wall clock */

/* One measured variant. */
struct wl_result {
	const char *workload;
	const char *variant;       /* "naive", "optimized", or a sub-case like "fp16" */
	const char *size;          /* e.g. "rows=1000000" */
	double step_ms;            /* time per step */
	double throughput;         /* items per second */
	const char *unit;          /* "rows/s", "timesteps/s", "structures/s", "tokens/s" */
	bool checked, check_ok;    /* --check ran, and passed */
	double check_error;        /* the error the check measured */
};

/* The closing table: one row per result, and optimized/naive speedup when
 * both a "naive" and an "optimized" row are present (or a row against the
 * first row for sub-cases). */
void wl_print_table(FILE *out, const struct wl_result *results, int n);
/* The speedup wl_print_table shows for row i: throughput over that of the
 * "naive" row with the same workload and size, else over the first row of the
 * same workload (step times when a throughput is missing). 0 when row i is
 * its own baseline or none exists. */
double wl_speedup(const struct wl_result *results, int n, int i);
/* One JSON object on one line (names are fixed ASCII; no escaping needed
 * beyond what the function does). */
void wl_print_json(FILE *out, const struct wl_result *r);

#endif
