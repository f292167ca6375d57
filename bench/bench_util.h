/* bench_util.h - what every benchmark program needs: clocks and a cheap,
 * deterministic source of varied values. Header-only, because bench/ builds
 * each .c file as its own program. */
#ifndef PERFKIT_BENCH_UTIL_H
#define PERFKIT_BENCH_UTIL_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

/* Monotonic wall clock, seconds. */
static inline double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process, user plus system, seconds. */
static inline double bench_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* xorshift64*: fast and deterministic (the same values every run), so
 * stores built for a benchmark are the same from one run to the next. */
static inline uint64_t bench_rnd(void)
{
	static uint64_t state = 0x9E3779B97F4A7C15ULL;

	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 2685821657736338717ULL;
}

#endif
