/* overview.h - the overview read from one store or put together from a
 * job's captures (overview.c), and its parts: each GPU's busy union and the
 * transfers by direction and memory kind. */
#ifndef REPORT_MODEL_OVERVIEW_H
#define REPORT_MODEL_OVERVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"
#include "model/context_failure.h"
#include "model/groups.h"
#include "model/job_time.h"

/* How a job's capture moves onto the job's time base: a row moves by the
 * offset at its start (report/job's mapping, as the merge moves it). */
struct sum_time_move {
	int64_t (*offset_at)(void *ctx, int64_t t);
	void *ctx;
};

/* The union of each device's kernels, copies, memsets and CUDA graph
 * launches recorded whole in (device, start) order: interval() gets each
 * union interval once, in that order; first/last: the span of all the
 * work. The overview's busy time and the HTML report's utilisation plot. */
struct sum_busy_walk {
	int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns);
	void *ctx;
	int64_t first_ns, last_ns;
	bool any;
	int64_t rows_left_out;
};
int sum_busy__walk(struct prof_store *s, const struct sum_time_move *move,
		   struct sum_busy_walk *w, struct prof_error *err);
/* The part of [start, end] inside [lo, hi], in ns. */
int64_t sum_busy__clipped(int64_t start, int64_t end, int64_t lo, int64_t hi);

struct sum_busy_device {
	int64_t device_id, busy_ns;
};

/* Copies of one direction and host memory kind. */
struct sum_transfer {
	int64_t copy_kind, host_kind;
	bool host_kind_null;
	int64_t count, bytes, time_ns;
};

/* What the overview shows, read from one store (sum_overview__load) or put
 * together from a job's captures (report/job), then printed by
 * sum_overview__emit: the same rows either way. Strings are malloc'd. */
struct sum_overview {
	char *name;                 /* the File row */
	bool nsys;
	char *command, *host, *gpu, *start, *duration, *exit_status; /* PERFKIT_META */
	char *gpu_names;            /* "0: NAME; 1: ..." when gpu is NULL */
	bool has_session_start;
	int64_t session_start_ns;
	struct sum_busy_device *busy; /* by device id */
	size_t nbusy, busy_cap;
	int64_t busy_first_ns, busy_last_ns, busy_left_out;
	bool busy_any;
	/* a capture made of capture windows: how many, and the time they
	 * recorded, which is the busy time's span (0: the capture has none) */
	int windows;
	int64_t recorded_ns;
	struct sum_groups kernels, ranges; /* sorted by total */
	struct sum_transfer *transfers;    /* most bytes first */
	size_t ntransfers, transfers_cap;
	int64_t transfers_left_out;
	/* managed memory's page faults: CPU faults, GPU fault groups and the
	 * faults in them (CUDA_UM_*_PAGE_FAULT_EVENTS) */
	int64_t um_cpu_faults, um_gpu_groups, um_gpu_faults;
	int64_t dropped, not_written;
	struct sum_context_failure failure;
	int64_t gm_samples_dropped; /* sampled GPU metrics lost (--gpu-metrics) */
	int64_t gm_ended_early;     /* GPUs whose sampling stopped before the program */
	bool has_job_time;          /* a job of several hosts: the Time base and Alignment
				     * error rows */
	struct sum_job_time job_time;
};

int sum_overview__load(struct prof_store *s, struct sum_overview *o, struct prof_error *err);
/* A reader of the busy walk's union intervals beside the overview's own
 * (the HTML page keeps them for its utilisation plot, drawn later): told
 * each one as sum_busy__walk gives it, unclipped. */
struct sum_busy_tap {
	void (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns);
	void *ctx;
};
/* sum_overview__load, its busy walk's intervals told to tap too. */
int sum_overview__load_tapped(struct prof_store *s, struct sum_overview *o,
			      const struct sum_busy_tap *tap, struct prof_error *err);
int sum_overview__emit(const struct sum_overview *o, struct rpt_sink *sink, struct prof_error *err);
void sum_overview__exit(struct sum_overview *o);
/* The run's span from start and duration, when both are recorded. */
bool sum_overview__span(const struct sum_overview *o, int64_t *start_ns, int64_t *duration_ns);
/* Append "ID: NAME" to a "; "-separated list of GPU names. */
int sum_gpu_names__add(char **names, int64_t id, const char *name);
int sum_transfers__add(struct sum_overview *o, const struct sum_transfer *t);
/* Only the transfers of s (and transfers_left_out) into o. */
int sum_overview__load_transfers(struct prof_store *s, struct sum_overview *o,
				 struct prof_error *err);

/* How many rows the overview shows in its top-N sections. */
#define SUMMARY_OVERVIEW_TOP 5

#endif
