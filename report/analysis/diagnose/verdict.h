/* verdict.h - one verdict per step: the step's time as a budget that adds
 * up to the step, and the bound it names. The GPU's time in the window is
 * either busy (its own computing, communication kernels, copies not under
 * a kernel) or idle, and the idle attribution (gpu_idle.h) splits the idle
 * time by what the host was doing; each part is divided by the steps, so
 * the budget is of one mean step. The bound is the group of parts with the
 * most time: the GPU's own work, the host's launching and work, waiting,
 * transfers or communication. */
#ifndef REPORT_ANALYSIS_VERDICT_H
#define REPORT_ANALYSIS_VERDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"

enum verdict_part {
	PART_COMPUTE,        /* kernels other than communication */
	PART_COMMUNICATION,  /* NCCL's kernels, not under other kernels */
	PART_COPIES,         /* copies and memsets, not under a kernel */
	PART_HOST_WORK,      /* GPU idle: the host's own work between CUDA calls */
	PART_LAUNCH,         /* GPU idle: launch calls, their latency, other CUDA calls */
	PART_SYNC,           /* GPU idle: the host blocked in a synchronisation */
	PART_BLOCKING_COPY,  /* GPU idle: the host in a blocking or pageable copy */
	PART_PAGE_MIGRATION, /* managed memory's faulting stretches: the host or a
			      * kernel stalled on pages moving on demand */
	PART_ALLOC,          /* GPU idle: the host allocating or freeing */
	PART_GPU_WAIT,       /* GPU idle: queued work waiting on another stream's event */
	PART_QUEUED_GAP,     /* GPU idle: queued work started late, no wait recorded:
			      * the GPU's own latency from one kernel to the next */
	PART_UNACCOUNTED,    /* GPU idle: no recorded call launched what followed */
	VERDICT_NPARTS
};

/* Numbered as program.c's bound_ids know them. */
enum verdict_bound {
	BOUND_GPU_COMPUTE,
	BOUND_GPU_MEMORY,
	BOUND_LAUNCH_HOST,
	BOUND_SYNC,
	BOUND_TRANSFER,
	BOUND_COMMUNICATION,
	BOUND_ANOTHER_RANK,
	VERDICT_NBOUNDS
};

struct diag_verdict {
	bool valid;                  /* false: no GPU work or no attribution */
	enum verdict_bound bound;
	int64_t step_ns;             /* the mean step (the window when no loop was found) */
	int steps;                   /* the steps it is the mean of; 0: the window */
	int64_t part_ns[VERDICT_NPARTS]; /* of one mean step; they add up to step_ns */
	int64_t device_id;           /* the GPU the budget is of (the busiest) */
	int64_t all_changes_ns;      /* the mean step with every replayable change the
				      * findings name made at once (rules/gains.c);
				      * 0: not estimated */
	/* the mean step without perfkit's recording cost of each call, the
	 * replay's ratio applied (rules/gains.c); 0: the cost is not measured */
	int64_t unrecorded_step_ns;
	/* that cost per launch, allocation or free, copy, and other call */
	double record_launch_ns, record_alloc_ns, record_copy_ns, record_call_ns;
	int64_t migration_gpu_ns;    /* of page_migrations, what kernels and copies
				      * stalled (one mean step) */
	/* GPU compute or GPU memory was told apart by the sampled DRAM
	 * throughput (a capture with per-kernel metrics ran under kernel
	 * replay and has no verdict); without it a step the GPU sets is named
	 * GPU compute, and says so */
	bool gpu_bound_measured;
	char summary[480];
};

/* "GPU compute", "launch/host", ... as expected.json and the text say them. */
const char *verdict_bound__name(enum verdict_bound b);
/* "gpu_compute", "host_work", ...: the JSON's part ids; and for people. */
const char *verdict_part__id(enum verdict_part p);
const char *verdict_part__title(enum verdict_part p);
/* The bound a part counts toward (PART_UNACCOUNTED: none, -1). */
int verdict_part__bound(enum verdict_part p);

/* The parts with time, largest first (ties in the order of the enum), into
 * order; their number. */
int diag_verdict__parts_by_size(const struct diag_verdict *v, int order[VERDICT_NPARTS]);
/* The bound from a budget (pure): the group of parts with the most time. */
enum verdict_bound diag_verdict__bound_of(const int64_t part_ns[VERDICT_NPARTS]);
/* Writes v->summary from its parts and bound (pure). */
void diag_verdict__summarise(struct diag_verdict *v);

#endif
