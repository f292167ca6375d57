/* diff.h - `perfkit diff`: what changed between two captures.
 *
 * A capture is first summarised into a diff_profile (diff_profile.c): one
 * entry per kernel (name + launch shape), per NVTX range name, per copy
 * kind (direction + host memory kind) and per CUDA API call's name, each with its count, total, median
 * and quartiles of duration, plus the capture's totals and identity
 * (program, GPU) and its steady-state loop (model/window.h: the window
 * diagnose analyses) with what ran in it. The same profile feeds the
 * baseline and the gate, so all three agree on what a key means.
 *
 * Two windows of one job seldom hold the same number of steps, so their
 * totals do not compare: when both captures have a loop, entries are
 * compared per iteration (time and count per iteration, in the loop) and per
 * launch (median duration); otherwise over the whole captures, with a
 * warning. A per-launch change counts only beyond noise (diff_launch_changed)
 * and a change of calls per iteration only beyond what the windows' edges
 * explain (diff_calls_changed): a kernel whose total fell because it ran
 * fewer times is not faster. Two profiles are matched entry by entry
 * (diff.c); rows go to a table sink (text, CSV, JSON) or to the HTML page
 * (diff_html.c). */
#ifndef REPORT_DIFF_H
#define REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"
#include "model/window.h"

struct rpt_sink;

/* One kernel shape, NVTX range name, copy kind or CUDA API call (by name)
 * of one capture. */
struct diff_stat {
	char *name;               /* kernel name, range name or copy label */
	int32_t grid[3], block[3]; /* kernels only; 0 elsewhere */
	int32_t copy_kind;        /* copies: enum prof_copy_kind; -1 for memsets and others */
	int64_t count;
	int64_t total_ns;
	int64_t median_ns;        /* per launch (per instance for ranges) */
	int64_t q1_ns, q3_ns;     /* quartiles of the durations: q3 - q1 is the spread */
	int64_t bytes;            /* copies: bytes moved; 0 elsewhere */
	/* What started inside the loop window (diff_profile.loop); GPU work by
	 * its start on the GPU, ranges by their start on the host. */
	int64_t loop_count, loop_total_ns, loop_bytes;
};

struct diff_section {
	struct diff_stat *v;
	size_t n, cap;
};

/* API calls are host time: in no GPU total and no verdict's GPU figures. */
enum diff_section_id {
	DIFF_KERNELS = 0, DIFF_COPIES = 1, DIFF_RANGES = 2, DIFF_API = 3, DIFF_NSECTIONS = 4
};

struct diff_profile {
	char *path;
	char *program;        /* the script or module an interpreter or launcher ran, else
			       * the command's basename (program_id.h); "" when the
			       * capture does not say */
	char *launcher;       /* what ran it ("torchrun", "python3"); "" when none or unknown */
	char *gpu;            /* first GPU's name; "" when the capture does not say */
	/* One rank of a job (ranks[] of the job's profile): its number and its
	 * name ("rank 1"); -1 and "" for a whole capture. */
	int rank;
	char rank_name[32];
	/* The loop's steps, each from its start to the next one's (the last:
	 * its own span): median and quartiles of that wall time; 0 without
	 * a loop. */
	int64_t step_med_ns, step_q1_ns, step_q3_ns;
	int nsteps;
	/* A job (several ranks in one capture): each rank's profile, its rows
	 * alone and its own loop, in rank order; the whole capture's loop is
	 * then its first rank's, so that iterations count steps of a rank. */
	struct diff_profile *ranks;
	int nranks;
	/* A job's straggler (diff_job.c): the rank the others wait for at
	 * the collectives in its ranks' loops, by diagnose's rule
	 * (job_judge__straggler, its default thresholds); -1 when none. */
	int straggler_rank;
	int64_t late_collectives, collectives; /* it arrived last at / in the loops */
	int64_t straggler_wait_ns;             /* the others' mean wait at those, summed */
	int64_t gpu_time_ns;  /* summed kernel, copy and memset durations */
	int64_t wall_ns;      /* PERFKIT_META duration_ns, else the capture's time span */
	int64_t kernel_count;
	int64_t alloc_count;  /* GPU memory allocations */
	struct diff_section sec[DIFF_NSECTIONS];
	/* The steady-state loop (loop.iterations == 0: none found) and what ran
	 * in it: the per-iteration figures are these over loop.iterations. */
	struct sum_window loop;
	int64_t loop_gpu_time_ns, loop_kernel_count, loop_alloc_count;
	/* Kernel, copy, memset, range and API rows with a bad span (their end
	 * before their start, or 2^63 ns or more after it), and copies and
	 * memsets of a negative byte count: in no section and no
	 * total, as the summary reports leave them out (SUM_BAD_SPAN,
	 * SUM_BAD_COPY). */
	int64_t rows_left_out;
};

/* Summarise an open store. Missing optional tables give empty sections. */
int diff_profile__load(struct diff_profile *p, struct prof_store *s, struct prof_error *err);
/* Open path, summarise it and close it. */
int diff_profile__load_path(struct diff_profile *p, const char *path, struct prof_error *err);
void diff_profile__exit(struct diff_profile *p);
/* Summarise an open store with its loop marked as `like`'s is, where that
 * marker repeats in it and its own search settled on another (NULL, or no
 * loop: as diff_profile__load). For a store that cannot be opened again
 * by its path: a job's merged capture, removed once it is open. */
int diff_profile__load_like(struct diff_profile *p, struct prof_store *s,
			    const struct sum_window *like, struct prof_error *err);
/* Make the loops of p[0..n) count the same iterations: each profile whose
 * loop is marked by another NVTX range or kernel than `like` (p[0]'s loop
 * when NULL) is summarised again with its loop marked as `like` is, where
 * that marker repeats in it (sum_window__find_marked). Profiles are compared
 * per iteration only when their loops are marked alike. */
int diff_profiles__align_loops(struct diff_profile *p, size_t n, const struct sum_window *like,
			       struct prof_error *err);
/* Human label of a copy direction ("HtoD", "DtoH", ...). */
const char *diff_copy_kind__name(int32_t copy_kind);

/* ---- noise ------------------------------------------------------------- */

/* The smallest relative change of a median, or of calls per iteration,
 * that counts as a change at all (timer ticks, clocks). */
#define DIFF_MIN_CHANGE 0.03

/* The one noise rule of every label (kernels, copies, ranges, the step
 * itself): a time changed when it moved by more than DIFF_MIN_CHANGE of
 * its base and by more than what the spread of its launches explains,
 * calls x the smaller IQR of one launch (the steadier side's middle
 * half; calls is 1 for a median launch or the step). A row's time is its
 * time per iteration; it is "slower"/"faster" by that change's direction,
 * "more calls"/"fewer calls" where its calls per iteration changed that
 * way (diff_calls_changed) and its median launch did not: no label
 * contradicts its row's Delta. */
bool diff_time_changed(double base_ns, double new_ns, double calls, int64_t base_iqr_ns,
		       int64_t new_iqr_ns);
/* diff_time_changed of one launch's median. */
bool diff_launch_changed(int64_t base_median_ns, int64_t base_iqr_ns, int64_t new_median_ns,
			 int64_t new_iqr_ns);
/* Launches that the edges of two windows explain: one more or less at
 * each end where a window cuts the loop. */
#define DIFF_EDGE_CALLS 2.0

/* Whether calls per iteration changed: by more than DIFF_MIN_CHANGE and by
 * more than DIFF_EDGE_CALLS calls over the shorter of the two loops.
 * Iterations are 1 for totals. */
bool diff_calls_changed(double base_calls, double base_iterations, double new_calls,
			double new_iterations);

/* ---- matching ---------------------------------------------------------- */

enum diff_change {
	DIFF_SAME, DIFF_SLOWER, DIFF_FASTER, DIFF_MORE_CALLS, DIFF_FEWER_CALLS, DIFF_ADDED,
	DIFF_REMOVED,
};

/* "same", "slower", "faster", "more calls", "fewer calls", "added", "removed". */
const char *diff_change__name(enum diff_change c);

/* One matched entry: base or new is NULL for an added or removed entry. */
struct diff_row {
	const struct diff_stat *base, *new;
	/* Per iteration of the loop when the result is per_iteration, else over
	 * the whole capture: */
	double base_calls, new_calls;  /* launches (instances, copies) */
	double base_time_ns, new_time_ns;
	int64_t delta_ns;              /* new_time_ns - base_time_ns, rounded */
	bool launch_changed;           /* the median per launch moved beyond noise */
	bool calls_changed;            /* calls per iteration changed */
	enum diff_change change;       /* added/removed, else by launch, else by calls */
	double effect_ns;              /* what the real changes cost per iteration: the
					* median's change x new calls, the calls' change
					* x base median, the time of an added or removed
					* entry; 0 when nothing changed beyond noise */
};

struct diff_result {
	const struct diff_profile *base, *new;
	bool per_iteration;            /* both captures have a loop */
	double base_iterations, new_iterations; /* the divisors: 1 when !per_iteration */
	/* Sorted: entries with a real change first, by |effect_ns|, then the
	 * rest by |delta_ns|. */
	struct diff_row *rows[DIFF_NSECTIONS];
	size_t nrows[DIFF_NSECTIONS];
	/* The wall time per step (diff_profile.step_*_ns) moved beyond noise,
	 * by the rule of diff_launch_changed; false without steps on a side. */
	bool step_changed;
	/* Two jobs: rank with rank by rank number (ranks only one side has
	 * are left out and said), and the pair whose NEW step is the longest,
	 * what the job waits for (-1 when there are no pairs). */
	struct diff_result *ranks;
	int nranks;
	int slowest;
};

int diff__compute(struct diff_result *r, const struct diff_profile *base,
		  const struct diff_profile *new);
void diff__exit(struct diff_result *r);

/* "NEW is 1.8x faster per iteration on the GPU (BASE 50 iterations, NEW 44:
 * compared per iteration): flash_fwd -30% per launch (-41 us/iter), ..."
 * (raw capture names: the caller's sink escapes them). */
int diff__verdict(const struct diff_result *r, char *buf, size_t cap);
/* Emit the verdict, the loops, the totals and the four sections (a job's rank by rank) as reports
 * on sink. */
int diff__report(const struct diff_result *r, struct rpt_sink *sink);
/* A self-contained HTML page holding the same tables. */
int diff__write_html(const struct diff_result *r, FILE *out);

/* The rows some profiles left out (diff_profile.rows_left_out, summed) as a
 * sentence: "2 rows with an impossible span (...) or a negative byte count
 * were left out". */
void diff_left_out__text(char *buf, size_t cap, int64_t rows);
/* The same as the note of the report being written on sink, under the key
 * the summary reports use ("rows_left_out"). */
int diff_left_out__note(struct rpt_sink *sink, int64_t rows);

/* "41 ms", "1.25 s", "350 us": a duration for messages. */
void diff_format_ns(char *buf, size_t cap, int64_t ns);

#endif
