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
/* Whether two captures hold a process of the same pid. */
bool job_capture__shares_pid(const struct job_capture *a, const struct job_capture *b);

/* One host's clock: its earliest start pair and latest end pair. */
struct job_host_clock {
	struct job_clock_pair start, end;
	bool has_start, has_end;
};

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
