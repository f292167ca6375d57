/* baseline.h - `perfkit baseline save`: what a set of repeated captures of
 * one program on one GPU measured, per key, as a JSON file for the gate.
 *
 * Keys (one value per capture, from its diff_profile):
 *   gpu_time, wall_time        ns: summed GPU activity, run duration
 *   kernel_count, alloc_count  launches, GPU memory allocations
 *   copy_bytes:<direction>     bytes copied per direction (HtoD, DtoH, ...)
 *   kernel:<name>              ns: total time of the kernel (all launch shapes)
 *   nvtx:<name>                ns: total time of the NVTX range
 * A key a capture lacks counts 0 for it (the kernel did not run).
 *
 * Per key the file holds the median, min, max and median absolute deviation
 * (MAD) over the captures, the samples, and optionally a budget
 * ("max_regression": "10%") that the user adds to override the gate's global
 * one. It also names the program and the GPU so that the gate can refuse a
 * capture of something else. */
#ifndef REPORT_BASELINE_H
#define REPORT_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "diff.h"
#include "prof/error.h"

#define BASELINE_FORMAT_VERSION 1

enum baseline_unit { BASELINE_NS = 0, BASELINE_BYTES = 1, BASELINE_COUNT = 2 };

const char *baseline_unit__name(enum baseline_unit u);

/* One key's value in one capture. */
struct baseline_value {
	char *name;
	enum baseline_unit unit;
	int64_t value;
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

/* Median, min, max and MAD of samples (reordered in place). */
struct baseline_stats {
	int64_t median, min, max, mad;
};
void baseline_stats__compute(struct baseline_stats *st, int64_t *samples, size_t n);

struct baseline_key {
	char *name;
	enum baseline_unit unit;
	struct baseline_stats st;
	int64_t *samples; /* one per capture, in capture order */
	size_t nsamples;
	double budget_pct; /* per-key max regression in %; < 0: use the global one */
};

struct baseline {
	char *path;    /* the file it was loaded from; NULL when built in memory */
	char *program;
	char *gpu;
	char **captures; /* paths the baseline was made from */
	size_t ncaptures;
	struct baseline_key *keys; /* sorted by name */
	size_t nkeys;
};

/* From n profiles of the same program on the same GPU (else PROF_E_USAGE
 * naming the capture that differs). */
int baseline__build(struct baseline *b, const struct diff_profile *p, size_t n,
		    struct prof_error *err);
int baseline__save(const struct baseline *b, const char *path, struct prof_error *err);
/* Read and validate a baseline file: PROF_E_IO when it cannot be read,
 * PROF_E_USAGE with the reason when it is not a valid baseline. */
int baseline__load(struct baseline *b, const char *path, struct prof_error *err);
void baseline__exit(struct baseline *b);
const struct baseline_key *baseline__find(const struct baseline *b, const char *name);

/* "5%", "5" or "0.5%" -> 5, 5, 0.5. Returns -1 for anything else (negative,
 * not a number, trailing text). */
int baseline__parse_percent(const char *s, double *pct);

#endif
