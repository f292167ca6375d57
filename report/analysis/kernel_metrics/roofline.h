/* roofline.h - per-kernel roofline from hardware metrics and measured peaks.
 *
 * Metrics come from PERFKIT_KERNEL_METRICS (written by `perfkit run
 * --metrics=roofline`, one row per profiled launch, joined to kernel rows by
 * globalPid + correlationId); ceilings from PERFKIT_PEAKS (`perfkit peaks`),
 * else from TARGET_INFO_GPU's nominal bandwidth and clock (said so). */
#ifndef REPORT_ROOFLINE_H
#define REPORT_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"

struct rpt_sink;

/* The tensor cores' precisions, by the source type of their operands
 * (PERFKIT_KERNEL_METRICS.tensorFlops*, PERFKIT_PEAKS tensor_*_flops_per_s). */
enum roof_tensor { ROOF_T_F16, ROOF_T_BF16, ROOF_T_TF32, ROOF_T_F64, ROOF_T_F8, ROOF_T__COUNT };
const char *roof_tensor__name(enum roof_tensor t);

struct roof_peaks {
	double dram_bytes_per_s, l2_bytes_per_s;  /* 0: not measured */
	double fp64_flops_per_s, fp32_flops_per_s, fp16_flops_per_s, bf16_flops_per_s;
	/* dense tensor-core rates; 0 where neither measured nor known */
	double tensor_flops_per_s[ROOF_T__COUNT];
	bool tensor_measured[ROOF_T__COUNT];  /* from PERFKIT_PEAKS, else nominal */
	bool measured;       /* from PERFKIT_PEAKS, not nominal */
	char source[256];
};

enum roof_class { ROOF_MEMORY, ROOF_COMPUTE, ROOF_LATENCY, ROOF_LAUNCH };
const char *roof_class__name(enum roof_class c);

struct roof_kernel {
	char *name;
	int64_t launches, measured;  /* all launches; launches with metrics */
	int64_t time_ns;             /* all launches' total time */
	int64_t metric_time_ns;      /* gpu__time_duration of measured launches */
	double flops_f64, flops_f32, flops_f16, tensor_inst;
	double tensor_flops[ROOF_T__COUNT];
	bool has_flops;              /* FLOPs counted (not with --metrics=memory) */
	bool has_tensor_flops;       /* tensor-core FLOPs counted (a collector that records them) */
	double dram_bytes, l2_bytes;
	/* derived */
	double flops, ai_dram, ai_l2, flops_per_s, dram_bytes_per_s, l2_bytes_per_s;
	double peak_flops;           /* of the kernel's dominant precision */
	int tensor_precision;        /* the dominant one when tensor cores, else -1 */
	double roof_fraction;        /* achieved / the roof at its intensity (nearer roof) */
	enum roof_class klass;
};

/* Launches shorter than this on average, and at least ROOF_LAUNCH_MIN_COUNT of them, are launch-bound. */
#define ROOF_LAUNCH_MAX_NS 5000
#define ROOF_LAUNCH_MIN_COUNT 100
/* Below this fraction of the nearer roof a kernel is latency-bound. */
#define ROOF_LATENCY_FRACTION 0.2

int roof_peaks__load(struct prof_store *s, struct roof_peaks *p, struct prof_error *err);
/* How many launches have metrics (0 without PERFKIT_KERNEL_METRICS); a
 * store that cannot be read says so (err) rather than counting none. */
int roof__count_measured(struct prof_store *s, int64_t *n, struct prof_error *err);
/* Kernels with metrics, aggregated by name, sorted by total time; only the
 * launches starting in [from_ns, to_ns) when to_ns > from_ns, else all. */
int roof__load(struct prof_store *s, const struct roof_peaks *p, int64_t from_ns, int64_t to_ns,
	       struct roof_kernel **out, int *n, struct prof_error *err);
void roof__free(struct roof_kernel *k, int n);
/* Whether any kernel has FLOP counts (--metrics=roofline, not memory). */
bool roof__any_flops(const struct roof_kernel *k, int n);
/* Kernels whose FLOPs lack the tensor cores' share: counted without the
 * per-precision tensor counters (an older collector, or a GPU without
 * them) although they ran tensor-pipe instructions. */
int roof__tensor_unknown(const struct roof_kernel *k, int n);
/* Classify one kernel from its sums (fills the derived fields). */
void roof__derive(struct roof_kernel *k, const struct roof_peaks *p);
int roof__rows(const struct roof_kernel *k, int n, struct rpt_sink *sink);
/* Gnuplot data files + script in dir (roof_plot_files: the points, the
 * roofs, the script); the script reads the data files, nothing is spliced
 * in. dir is made when missing; each file is written as every output is
 * (prof/output.h; flags: PROF_OUTPUT_REPLACE to replace existing ones),
 * and every one is refused or opened before any is written. */
#define ROOF_PLOT_FILES 3
extern const char *const roof_plot_files[ROOF_PLOT_FILES];
int roof__write_plot(const char *dir, const struct roof_kernel *k, int n, const struct roof_peaks *p,
		     unsigned flags, struct prof_error *err);

#endif
