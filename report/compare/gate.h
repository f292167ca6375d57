/* gate.h - `perfkit gate`: compare new captures with a baseline, key by key,
 * and decide whether the run regressed.
 *
 * Kernels and NVTX ranges are judged per launch (their median launch), which
 * no number of iterations changes. The per-run keys (GPU time, wall time,
 * launches, allocations, bytes copied) are judged per iteration of the loop
 * when the baseline recorded per-iteration figures and every new capture
 * has a loop marked alike, so that a capture holding fewer steps than the
 * baseline's compares fairly; otherwise as totals per capture, and the
 * result says why (a format-1 baseline holds totals only, for every key).
 *
 * For each key the new value is the median over the new captures. A key
 * fails when
 *     new > base + base * budget + noise   and   new - base > floor
 * where base is the baseline median, budget the key's own max_regression or
 * else the global one, noise the spread the baseline measured (the larger of
 * max - median and noise_mads robust standard deviations, 1.4826 * MAD), and
 * (printed as allowed = base + budget + noise + the floor's lift over
 * them, terms that add up), floor the smallest change worth failing a build for: for times, the larger
 * of min_time_ns and min_share_pct of the baseline's GPU time (kernels and
 * copies) or wall time (NVTX ranges), over the run; per iteration, that
 * over the baseline's iterations, and at least what one launch more or less
 * at each edge of the loop windows adds; per launch, that over the key's
 * launches in the run. Lower is better for every key. A kernel or NVTX
 * range also fails when its median launch grew by max_launch_ratio or more,
 * under the floor too, unless its time per iteration (else in the run) is
 * below min_launch_share_pct of the baseline's wall time: a 6x slower
 * kernel is a regression however short it is, when it counts.
 *
 * A job is gated rank by rank (baseline.h: "rank1/..." keys, each per step
 * of its rank's own loop, whose totals are that rank's GPU and wall time)
 * and on its step (the slowest rank's median step, against 1% of itself).
 * A capture of another job size than the baseline's (a job of 4 ranks
 * against one of 2, or one process against a job) is refused, since its
 * ranks do not do the same work, unless both are jobs and common_ranks:
 * then the keys both have are compared and a rank only one side has shows
 * as added or removed keys, which fail nothing. One process and a job share
 * no key, and a baseline saved before jobs were keyed rank by rank holds a
 * job's ranks summed: both are always refused.
 *
 * Keys only in the new captures (added kernels) and keys they lack (removed
 * kernels) are reported but do not fail by themselves: their time shows in
 * gpu_time and wall_time, and a failure there names the kernels that grew
 * most, added ones included. */
#ifndef REPORT_GATE_H
#define REPORT_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "baseline.h"
#include "diff.h"
#include "prof/error.h"

struct rpt_sink;

struct gate_options {
	double max_regression_pct; /* global budget, % of the baseline median */
	int64_t min_time_ns;       /* time changes below this never fail */
	double min_share_pct;      /* nor those below this share of the run's total */
	double noise_mads;         /* robust standard deviations of noise allowed */
	/* A kernel or range whose median launch grew by this ratio or more
	 * fails even under the floor, unless its time is under
	 * min_launch_share_pct of the baseline's wall time (per iteration
	 * where compared so, else of the run). */
	double max_launch_ratio;
	double min_launch_share_pct;
	bool any_program;          /* --program=any: another program is compared too */
	bool common_ranks;         /* --ranks=common: a job of another size too, on
				    * the ranks (keys) both have */
	bool full_names;           /* the key's full name in text and JUnit */
};

/* 5 %, 100 us, 1 %, 3 MADs, 2x per launch above 0.5 % of the step. */
void gate_options__init(struct gate_options *o);

enum gate_verdict { GATE_PASS = 0, GATE_FAIL = 1, GATE_ADDED = 2, GATE_REMOVED = 3 };

const char *gate_verdict__name(enum gate_verdict v);

/* What a case's values are. */
enum gate_per { GATE_PER_CAPTURE = 0, GATE_PER_ITERATION = 1, GATE_PER_LAUNCH = 2 };

/* "capture", "iteration", "launch". */
const char *gate_per__name(enum gate_per p);

/* The longest key text and JUnit show in a line of 200 columns. */
#define GATE_NAME_MAX 72

struct gate_case {
	char *key;
	char *name;        /* the key as text, JUnit and the messages show it: a
			    * kernel's short name (sink/symbol.h), cut to
			    * GATE_NAME_MAX columns, unless full_names */
	enum baseline_unit unit;
	enum gate_per per;
	enum gate_verdict verdict;
	bool in_base, in_new;
	double base;       /* baseline median (0 when added) */
	double new;        /* median over the new captures (0 when removed) */
	double allowed;    /* the largest new value that passes */
	double budget_pct; /* the budget applied */
	double noise;      /* the noise allowance applied */
	double floor;      /* the significance floor applied */
	/* allowed = base + budget_amount + noise + floor_lift: what the floor
	 * adds where it is above the budget and the noise (0 elsewhere) */
	double budget_amount, floor_lift;
	double launch_share_pct; /* per launch: the key's share of the wall time; < 0 unknown */
	bool ratio_failed; /* failed by max_launch_ratio, under the allowance */
	double growth;     /* what the key added to the run's GPU or wall time, per
			    * iteration when the run keys are compared so: the
			    * kernels that grew most are named by it */
	char *message;     /* one line saying what was measured and why it failed/passed */
};

struct gate_result {
	char *program, *gpu;
	size_t ncaptures;
	bool per_iteration; /* the run keys were compared per iteration */
	char *basis;        /* how the captures were compared, and why not per
			     * iteration when they were not */
	struct gate_case *cases; /* failures first, then by key */
	size_t ncases, nfailed;
	int64_t rows_left_out; /* the captures' bad rows, in no key (diff_profile) */
	/* the kernel names of every key, so that two kernels never show the
	 * same short name (sink/symbol.h); while gate__run runs */
	struct rpt_symbols *names;
};

/* PROF_E_USAGE (with a message naming both) when a capture is of another
 * program, GPU or job size than the baseline. */
int gate__run(struct gate_result *r, const struct baseline *b, const struct diff_profile *p,
	      size_t n, const struct gate_options *o, struct prof_error *err);
void gate__exit(struct gate_result *r);

/* Rows: one per key (with_message adds the message column), then a summary
 * holding the basis. */
int gate__report(const struct gate_result *r, struct rpt_sink *sink, bool with_message);
/* JUnit XML: one testsuite, one testcase per key, failures carry the message. */
int gate__write_junit(const struct gate_result *r, FILE *f);


#endif
