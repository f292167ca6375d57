/* baseline.h - `perfkit baseline save`: what a set of repeated captures of
 * one program on one GPU measured, per key, as a JSON file for the gate.
 *
 * Keys (one value per capture, from its diff_profile):
 *   gpu_time, wall_time        ns: summed GPU activity, run duration
 *   kernel_count, alloc_count  launches, GPU memory allocations
 *   copy_bytes:<direction>     bytes copied per direction (HtoD, DtoH, ...)
 *   kernel:<name>              ns: the median launch of the kernel (all
 *                              launch shapes: their medians weighted by launches)
 *   nvtx:<name>                ns: the median instance of the NVTX range
 * A job (several ranks in one capture) has every key once per rank, its
 * name after "rank<N>/" ("rank1/gpu_time", "rank1/kernel:<name>"), each
 * from that rank's own rows and loop, so that a figure per iteration is
 * per step of that rank; and the job's
 *   step                       ns: its slowest rank's median step (the
 *                              wall time the job waits for each step)
 * The first five are per run: their value is the capture's total, and where
 * the capture has a loop (the window diagnose analyses) also what ran in it
 * per iteration. The last two are per launch, which no number of
 * iterations changes; they also record their time per iteration. A per-run
 * key a capture lacks counts 0 for it; a per-launch key it lacks (the
 * kernel did not run) has no sample there.
 *
 * Per key the file holds the median, min, max and median absolute deviation
 * (MAD) over the captures, the samples, the same for the per-iteration
 * figures when every capture had a loop marked alike (the first capture's
 * marker, diff_profiles__align_loops), and optionally a budget
 * ("max_regression": "10%") that the user adds to override the gate's global
 * one. It also names the program, the GPU and the job's size (its ranks,
 * 1 for one process) so that the gate can refuse a capture of something
 * else, and the loop's marker and iterations (a job's: its first rank's).
 *
 * Format 1 (before per-iteration figures) held every key as a total per
 * run; it still loads, and the gate then compares totals and says so. */
#ifndef REPORT_BASELINE_H
#define REPORT_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diff.h"
#include "prof/error.h"
#include "model/window.h"

#define BASELINE_FORMAT_VERSION 2
/* Every number a baseline holds lies in [0, BASELINE_MAX_NUMBER]: below
 * INT64_MAX, so that it converts back to a count of ns or bytes. */
#define BASELINE_MAX_NUMBER 9.0e18

enum baseline_unit { BASELINE_NS = 0, BASELINE_BYTES = 1, BASELINE_COUNT = 2 };

const char *baseline_unit__name(enum baseline_unit u);

/* What a key's value is: the capture's total (per run) or its median launch. */
enum baseline_per { BASELINE_PER_RUN = 0, BASELINE_PER_LAUNCH = 1 };

/* "run", "launch". */
const char *baseline_per__name(enum baseline_per p);

/* The key of a job's step. */
#define BASELINE_STEP_KEY "step"

/* A capture's job size: its ranks, 1 for one process. */
int baseline__job_size(const struct diff_profile *p);

/* One key's value in one capture. */
struct baseline_value {
	char *name;
	enum baseline_unit unit;
	enum baseline_per per;
	double value;          /* per run: the capture's total; per launch: the median launch */
	double total;          /* the capture's total (what format 1 held for every key) */
	double per_iteration;  /* in the loop, per iteration; < 0: the capture has no loop */
	double largest_launch; /* per run: the most one launch (kernel, copy, allocation)
				* adds to the key; a loop window's edges can hold one
				* more or less at each end */
	int64_t launches;      /* per launch: launches (instances) in the capture */
};

struct baseline_values {
	struct baseline_value *v;
	size_t n;
};

/* The keys of one capture, sorted by name. Names are canonical: exactly what
 * a baseline file read back gives for them (invalid UTF-8 replaced). */
int baseline_values__init(struct baseline_values *vals, const struct diff_profile *p,
			  struct prof_error *err);
void baseline_values__exit(struct baseline_values *vals);
const struct baseline_value *baseline_values__find(const struct baseline_values *vals, const char *name);

/* prefix + name as a baseline file gives name back (invalid UTF-8 replaced
 * by U+FFFD): how a capture's names compare with a file's. malloc'd. */
char *baseline__canonical_name(const char *prefix, const char *name);

/* Median, min, max and MAD of samples (reordered in place); NaN samples
 * (absent) are left out, and all-absent gives zeros. Returns how many
 * samples counted. */
struct baseline_stats {
	double median, min, max, mad;
};
size_t baseline_stats__compute(struct baseline_stats *st, double *samples, size_t n);

struct baseline_key {
	char *name;
	enum baseline_unit unit;
	enum baseline_per per;
	struct baseline_stats st;
	double *samples;           /* one per capture, in capture order; NaN: absent */
	size_t nsamples;
	double budget_pct;         /* per-key max regression in %; < 0: use the global one */
	bool has_per_iteration;    /* every capture had a loop, marked alike */
	struct baseline_stats per_iteration;
	double *per_iteration_samples;
	double largest_launch;     /* per run: the largest over the captures */
	double launches;           /* per launch: median launches over the captures */
};

struct baseline {
	char *path;    /* the file it was loaded from; NULL when built in memory */
	int version;   /* the file's format (BASELINE_FORMAT_VERSION when built) */
	char *program;   /* the script or module past its launcher (program_id.h) */
	char *launcher;  /* what ran it in the first capture; "" when none or unknown */
	char *gpu;
	int ranks;       /* the job's size (1: one process); 0 unknown: a file saved
			  * before jobs were keyed rank by rank */
	char **captures; /* paths the baseline was made from */
	size_t ncaptures;
	/* The captures' loop: its marker (loop.mark SUM_LOOP_NONE when they had
	 * no loop marked alike, and in format 1) and median iterations. */
	struct sum_window loop;
	int *iterations;           /* per capture when loop.mark is set */
	struct baseline_key *keys; /* sorted by name */
	size_t nkeys;
};

/* From n profiles of the same program on the same GPU, jobs of one size
 * (else PROF_E_USAGE naming the capture that differs). Their loops should be aligned first
 * (diff_profiles__align_loops). */
int baseline__build(struct baseline *b, const struct diff_profile *p, size_t n,
		    struct prof_error *err);
/* Write b to path as every output is written (prof/output.h; flags:
 * PROF_OUTPUT_REPLACE to replace an existing file): complete or not at
 * all. */
int baseline__save(const struct baseline *b, const char *path, unsigned flags,
		   struct prof_error *err);
/* Read and validate a baseline file: PROF_E_IO when it cannot be read,
 * PROF_E_USAGE with the reason when it is not a valid baseline (one
 * without keys among them: a gate against it would compare nothing). */
int baseline__load(struct baseline *b, const char *path, struct prof_error *err);
void baseline__exit(struct baseline *b);
const struct baseline_key *baseline__find(const struct baseline *b, const char *name);
/* The loop the captures were measured over, for marking new captures' loops
 * alike; NULL when the baseline has none. */
const struct sum_window *baseline__loop(const struct baseline *b);

/* "5%", "5" or "0.5%" -> 5, 5, 0.5. Returns -1 for anything else (negative,
 * not a number, trailing text). */
int baseline__parse_percent(const char *s, double *pct);

#endif
