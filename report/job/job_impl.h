/* job_impl.h - internals of report/job: probing one capture, the time base
 * arithmetic (pure, tested on values) and the job's metadata. */
#ifndef REPORT_JOB_IMPL_H
#define REPORT_JOB_IMPL_H

#include "job.h"
#include "summary/query.h"

/* Probe the capture at path (with_pids: also the processes that left rows,
 * which a merge needs to keep them apart). */
int job_capture__probe(const char *path, bool with_pids, struct job_capture *c,
		       struct prof_error *err);
void job_capture__exit(struct job_capture *c);
/* Read the ends of the capture's NCCL kernels (c->nccl). */
int job_capture__read_collectives(struct job_capture *c, struct prof_error *err);
/* Whether two captures hold a process of the same pid. */
bool job_capture__shares_pid(const struct job_capture *a, const struct job_capture *b);

/* One host's clock: its earliest start pair and latest end pair. */
struct job_host_clock {
	struct job_clock_pair start, end;
	bool has_start, has_end;
};

/* One NCCL kernel's end on its process's clock. Without the collective
 * model's payloads, a collective is known by its kernel's name and its
 * place among that process's kernels of that name: NCCL launches the
 * kernels of one communicator in the same order on every rank. */
struct job_collective_end {
	uint64_t name_hash;
	int64_t pid;      /* globalPid without the host bits */
	int32_t ordinal;  /* how many kernels of this name the process ran before */
	int64_t end_ns;
};

/* One observation for the solver: a collective's end on a process of a host
 * group, already moved by that host's clock mapping. */
struct job_end_obs {
	uint64_t key_hash;
	int32_t key_ordinal;
	int group;
	int64_t end_ns;
};

/* The offset of each host group (offsets[0] = 0) that brings the matched
 * ends of the same collective together, by least squares over every
 * collective seen on at least two groups; *rms_ns: the spread of the aligned
 * ends of a collective about their mean (its error estimate), *matched: how
 * many collectives spanned two groups or more. obs is sorted in place. */
int job_time__fit_collectives(struct job_end_obs *obs, size_t n, int ngroups, double *offsets,
			      double *rms_ns, int *matched);

/* Fold a capture's pairs into its host's clock. */
void job_host_clock__add(struct job_host_clock *h, const struct job_capture *c);
/* The mapping of host h's times onto the time base of host ref, from their
 * clock pairs: both hosts' realtime clocks are taken to agree, each
 * timestamp's offset from its realtime clock moving linearly between its
 * start and end pairs. span_ns: how long the capture lasts (a rate that
 * moves no time by half a ns over it is left out, so nothing but a shift
 * is applied). Returns false (map a plain copy) when either lacks a pair. */
bool job_time__clock_map(const struct job_host_clock *ref, const struct job_host_clock *h,
			 int64_t span_ns, struct prof_merge_map *map);
/* Where time t of a capture mapped by map lands (t + shift at t). */
int64_t job_time__apply(const struct prof_merge_map *map, int64_t t);

/* ---- map and reduce (job_summary.c) -------------------------------------- */

/* A group (kernel name, range name and style) with its durations as
 * ascending runs. */
struct js_group {
	char *label, *label2;
	bool key_is_null;
	struct sum_run *runs;
	size_t n, cap;
};

/* Sorted by (label, label2, key_is_null). */
struct js_groups {
	struct js_group *g;
	size_t n, cap;
	int64_t rows_left_out;
};

struct js_interval {
	int64_t start, end;
};

/* A device's busy time as ascending, disjoint union intervals on the job's
 * time base (not yet clipped to the job's span). */
struct js_device {
	int64_t id;
	struct js_interval *iv;
	size_t n, cap;
};

struct js_gpu {
	int64_t id;
	char *name;
	int capture; /* the first capture that has it wins */
};

/* What the overview and cuda_gpu_kern_sum of a job need of its captures. */
struct job_summary {
	struct js_groups kernels, ranges;
	struct js_device *dev;      /* by id */
	size_t ndev, devcap;
	int64_t busy_first_ns, busy_last_ns, busy_left_out;
	bool busy_any;
	struct sum_transfer *tr;    /* by (copy kind, host kind) */
	size_t ntr, trcap;
	int64_t tr_left_out;
	int64_t dropped, not_written;
	struct js_gpu *gpus;
	size_t ngpus, gpucap;
	int session_capture;        /* the first capture with a session start; -1: none */
	bool session_null;
	int64_t session_start_ns;
	int mapped;                 /* captures folded in */
};

/* Map capture i of plan into s. */
int job_summary__map(const struct job_plan *p, int i, struct job_summary *s,
		     struct prof_error *err);
/* a += b; b is emptied. Exact: any order and grouping give the same a. */
int job_summary__reduce(struct job_summary *a, struct job_summary *b, struct prof_error *err);
void job_summary__exit(struct job_summary *s);
/* The overview and cuda_gpu_kern_sum's groups of the whole job. */
int job_summary__overview(const struct job_plan *p, const struct job_summary *s,
			  struct sum_overview *o, struct prof_error *err);
int job_summary__kern_sum(const struct job_summary *s, struct sum_groups *gs,
			  struct prof_error *err);
/* Map and reduce the whole job: on nthreads local threads, and across the
 * MPI processes when an MPI launcher started this one. 1: *out is the
 * job's summary (this process prints); 0: another process has it (this
 * one prints nothing); < 0: an error, in err. */
int job_summary__compute(const struct job_plan *p, int nthreads, struct job_summary *out,
			 struct prof_error *err);
/* The local cores, or PERFKIT_THREADS when set. */
int job_summary__threads(void);
/* A summary as bytes and back (between MPI processes). */
int job_summary__pack(const struct job_summary *s, char **buf, size_t *len);
int job_summary__unpack(const char *buf, size_t len, struct job_summary *s);

/* The PERFKIT_META rows of a merged job, through put(ctx, key, value). */
int job_meta__write(const struct job_plan *plan,
		    int (*put)(void *ctx, const char *key, const char *value), void *ctx);

#endif
