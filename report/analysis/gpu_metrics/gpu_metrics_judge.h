/* gpu_metrics_judge.h - what the sampled GPU metrics say of one kernel name
 * or one sample period, for the rules of rules_gpu_metrics.c: pure
 * functions of the values (percentages 0-100 as the GPU samples them, NaN
 * where it gave none) and the thresholds, tested with values. */
#ifndef REPORT_GPU_METRICS_JUDGE_H
#define REPORT_GPU_METRICS_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

/* The thresholds (diagnose settings, as fractions 0-1). */
struct gmj_limits {
	double min_coverage;   /* gpu_metrics.min_coverage: a name's averages count where it
				* fills at least this share of the sample periods it falls in */
	double max_sm_active;  /* few_sms.max_sm_active */
	double max_tensor;     /* tensor_idle.max_tensor_active */
	double dram_roof;      /* dram_roof.min_throughput */
	double link_roof;      /* link_saturated.min_throughput */
};

/* Whether a name's averages describe it: it filled enough of the periods
 * that gave them (coverage = covered / touched). */
bool gmj__judged(double coverage, const struct gmj_limits *l);

enum gmj_sms {
	GMJ_SMS_NOT_LOW,      /* enough SMs busy, or not judged */
	GMJ_SMS_SMALL_GRID,   /* fewer blocks than SMs in every launch */
	GMJ_SMS_UNDERFILLED,  /* enough blocks, yet few SMs busy: tails, imbalance */
	GMJ_SMS_LOW,          /* few SMs busy; the grid is not known */
};

/* A kernel's SMs Active average (NaN: none) against its largest grid
 * (blocks; 0: unknown) and the GPU's SM count (0: unknown). */
enum gmj_sms gmj__few_sms(double sm_active, double coverage, int64_t max_blocks, int sm_count,
			  const struct gmj_limits *l);

/* A GEMM (gemm_names.h) whose tensor pipe sits idle while it runs, in FP32:
 * no 16-bit, 8-bit, TF32 or double type in its name. */
bool gmj__tensor_idle(const char *name, double tensor_active, double coverage, const struct gmj_limits *l);

/* DRAM read plus write of a period (either may be NaN; both: not at the
 * roof) at or above the roof. */
bool gmj__at_dram_roof(double read, double write, const struct gmj_limits *l);
/* The busier direction of a link (either may be NaN); NaN when it gave neither. */
double gmj__link_throughput(double rx, double tx);
/* A link's throughput (gmj__link_throughput) at or above its roof. */
bool gmj__link_saturated(double throughput, const struct gmj_limits *l);

#endif
