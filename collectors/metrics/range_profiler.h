/* range_profiler.h - a C interface over CUPTI's range profiler (one kernel
 * launch = one range, kernel replay). The implementation is the one C++
 * translation unit of perfkit, because cupti_profiler_host.h includes
 * <string>; everything else of the metrics collector is C. */
#ifndef PERFKIT_RANGE_PROFILER_H
#define PERFKIT_RANGE_PROFILER_H

#include <stddef.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rp_session;

/* Enable the range profiler on ctx for the given metrics. On failure returns
 * < 0 with a message in msg. */
int rp__open(CUcontext ctx, const char *const *metrics, int nmetrics, struct rp_session **out,
	     char *msg, size_t cap);
/* 1 when the GPU of ctx offers every one of metrics to the range profiler
 * (CUPTI accepts them into a configuration), else 0. */
int rp__supported(CUcontext ctx, const char *const *metrics, int nmetrics);
/* Another metric set on the session's context; returns its index (the
 * first set, given to rp__open, is 0), or < 0 on error. */
int rp__add_set(struct rp_session *s, const char *const *metrics, int nmetrics);
/* Measure the next launch with set (its metrics go to rp__collect). */
int rp__use(struct rp_session *s, int set);
/* How many replay passes a set needs, or < 0 on error. */
int rp__passes(struct rp_session *s, int set);
/* Around one launch: start before it, stop after it. */
int rp__start(struct rp_session *s);
int rp__stop(struct rp_session *s);
/* Decode the profiled range and evaluate the metrics of the set in use into
 * values[nmetrics of that set].
 * Returns 1 when a range was decoded, 0 when none was, < 0 on error. */
int rp__collect(struct rp_session *s, double *values);
void rp__close(struct rp_session *s);
const char *rp__last_error(void);
/* The demangled form of a C++ symbol (malloc'd), or NULL when it is not one. */
char *rp__demangle(const char *mangled);

#ifdef __cplusplus
}
#endif

#endif
