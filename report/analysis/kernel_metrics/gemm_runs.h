/* gemm_runs.h - runs of the same small GEMM, and what the trace can say of
 * whether its launches depend on each other.
 *
 * Independent products (one per attention head, one per expert) can become
 * one batched GEMM; a stack of layers, each consuming the last one's output,
 * cannot. The trace does not see data, only the order of launches:
 *
 *   - a GEMM that alternates with other kernels on one stream (GEMM,
 *     bias+ReLU, GEMM, bias+ReLU, ...) looks like a chain of layers;
 *   - the same GEMM running on several streams at once was already issued
 *     as independent work;
 *   - back-to-back launches on one stream, with no kernel between, fit
 *     both: the advice for them is conditional.
 *
 * A run is built per stream by the launch scan (rules_launch.c); runs of one
 * GEMM on one device that overlap in time on different streams are then
 * grouped into one, and each is classified. Pure functions, tested with
 * values. */
#ifndef REPORT_GEMM_RUNS_H
#define REPORT_GEMM_RUNS_H

#include <stdbool.h>
#include <stdint.h>

enum gemm_run_kind {
	GEMM_RUN_UNKNOWN,     /* back to back on one stream: chain or independent */
	GEMM_RUN_CHAIN,       /* alternates with other kernels on one stream */
	GEMM_RUN_INDEPENDENT, /* on several streams at once */
};

struct gemm_run {
	int64_t name_id, grid, block; /* the GEMM and its launch shape */
	int64_t device, stream;
	int64_t start_ns, end_ns;     /* first launch's start, last one's end */
	int64_t launches;
	int64_t kernel_ns;            /* the GPU time of its launches */
	int64_t adjacent;             /* consecutive launches with no kernel between */
	int64_t interleaved;          /* consecutive launches with other kernels between */
	int64_t others;               /* other kernels between its launches */
	int streams;                  /* streams it spans (1 before grouping) */
};

enum gemm_run_kind gemm_run__classify(const struct gemm_run *r);
/* Sorts runs and merges those of the same GEMM, shape and device that
 * overlap in time (on different streams: runs of one stream never overlap)
 * into the first of them; returns the number of runs left. */
int gemm_runs__group(struct gemm_run *runs, int n);

#endif
