/* job_impl.h - internals of report/job: probing one capture, the time base
 * arithmetic (pure, tested on values) and the job's metadata. */
#ifndef REPORT_JOB_IMPL_H
#define REPORT_JOB_IMPL_H

#include "job.h"

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

/* The PERFKIT_META rows of a merged job, through put(ctx, key, value). */
int job_meta__write(const struct job_plan *plan,
		    int (*put)(void *ctx, const char *key, const char *value), void *ctx);

#endif
