/* critical_path.h - what sets the length of one step: the chain of host
 * work, CUDA calls, launches, kernels, copies and cross-stream waits that
 * ends where the step ends, walked backwards from there.
 *
 * The walk (critical_path__walk, a pure function over one step's work,
 * calls and stream waits) asks at each point what the current piece had
 * to wait for:
 *   - GPU work starts after the latest of: the previous work on its stream
 *     (stream order), the call that launched it (a launch), and, when its
 *     stream waited on an event since its previous launch, the work of
 *     another stream of the device that ended last before it (the event's
 *     recorder is not in the trace: this dependency is inferred);
 *   - a host thread inside a call that returned when GPU work ended (a
 *     synchronisation or a free: the last work of the process, of the
 *     synchronised stream when the trace names it, that ended inside the
 *     call; a copy call: its own copy) waited for that work;
 *   - otherwise the thread was inside its call, or doing its own work
 *     between calls.
 * Work an earlier step launched is queued ahead of the step: the walk
 * stops there. The segments tile the step: their lengths add up to its
 * span. Which step: the one of median span, from its start (or, when the
 * GPU was still busy with the work the previous step launched, that work's
 * end) to the end of its range or of the last GPU work it launched,
 * whichever is later. */
#ifndef REPORT_CRITICAL_PATH_H
#define REPORT_CRITICAL_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/gpu_work.h"
#include "step_data.h"

struct gpu_idle_result;

/* ---- the walk (pure) --------------------------------------------------------- */

enum cp_kind {
	CP_HOST_WORK,      /* a host thread outside CUDA calls */
	CP_CALL,           /* inside a CUDA call (ref: the call) */
	CP_LAUNCH_LATENCY, /* from the launching call's return to the work's start */
	CP_GPU,            /* a kernel, copy or memset running (ref: the work) */
	CP_STREAM_GAP,     /* from the previous work on the stream to this one */
	CP_EVENT_WAIT,     /* from the work of another stream (ref) to this one: inferred */
	CP_QUEUED,         /* work queued before the step, started within it */
	CP_UNATTRIBUTED,   /* the walk could not go on */
	CP_NKINDS
};

enum cp_edge { CP_EDGE_LAUNCH, CP_EDGE_STREAM, CP_EDGE_EVENT, CP_EDGE_SYNC, CP_EDGE_COPY, CP_NEDGES };

struct cp_segment {
	int64_t start_ns, end_ns;
	enum cp_kind kind;
	int ref;             /* index into calls (CP_CALL) or work (CP_GPU, CP_EVENT_WAIT), else -1 */
	/* where the segment lies, for a picture of the step: on the thread
	 * tid (host segments; work -1) or on the stream of work */
	int64_t tid;
	int work;
};


struct cp_path {
	struct cp_segment *seg; /* in time order */
	int nseg, cap;
	int edges[CP_NEDGES];
};

/* Walk back from the anchor to span_start. Returns 0 or PROF_E_NOMEM. */
int critical_path__walk(const struct cp_data *d, const struct cp_anchor *a, int64_t span_start_ns,
			struct cp_path *out);
void cp_path__exit(struct cp_path *p);

/* "host work", "CUDA call", "kernel", ... for a segment of the path. */
const char *cp_kind__name(enum cp_kind k, const struct gpu_work *work);

/* ---- one step of a capture --------------------------------------------------- */



/* A part of the path: its segments of one kind and name, summed. */
struct cp_part {
	char *label;          /* "cudaMemcpy", "kernel gemm...", "host work outside CUDA calls" */
	const char *kind;     /* cp_kind__name */
	int64_t time_ns;
	int count;
	bool inferred;
};

struct critical_path {
	int step;             /* 1-based among the window's steps; 0: none */
	int nsteps;
	int64_t start_ns, end_ns; /* the step's span */
	int nseg;
	int edges[CP_NEDGES];
	struct cp_part *parts; /* longest first */
	int nparts;
	char why_none[256];   /* when step is 0 */
	/* The step replayed forward as measured and with each set of changes
	 * (step_replay.h), by the set's bits, in ns; 0 where the replay did
	 * not run. */
	int64_t replay_ns[REPLAY_NSETS];
	double pinned_bytes_per_ns;  /* the bandwidth the pinned replay used */
	/* The step replayed as measured but each call shorter by what
	 * perfkit's recording added to it (record_cost.h): the step untraced;
	 * 0 where that cost is not measured (or the capture is not perfkit's). */
	int64_t unrecorded_ns;
	/* the costs it took off: per launch, allocation or free, copy, other call */
	double record_launch_ns, record_alloc_ns, record_copy_ns, record_call_ns;
};

/* Step rows past this many (work plus calls) are not walked. */
#define CP_MAX_ROWS 4000000

/* idle: the window's idle attribution where made already (its pass found
 * the ends of the work each step launched), else NULL. */
int critical_path__analyse(struct diag_scope *ctx, const struct gpu_idle_result *idle, struct critical_path **out,
			   struct prof_error *err);
void critical_path__delete(struct critical_path *cp);

/* The step's rows and its path as the walk saw them, for a picture of
 * the step (the HTML report): work by start, calls by (thread, start),
 * waits, the path's segments in time order and the calls' names. */
struct cp_step_rows {
	struct gpu_work *work;
	int nwork;
	struct cp_call *calls;
	int ncalls;
	struct cp_wait *waits;
	int nwaits;
	struct cp_segment *seg;
	int nseg;
	struct api_names names;
	int64_t step_tid; /* the thread whose range is the step (sum_step's global_tid) */
};

/* critical_path__analyse that also hands over the rows of the step it
 * walked (zeroed when it walked none); free them with cp_step_rows__exit. */
int critical_path__analyse_rows(struct diag_scope *ctx, const struct gpu_idle_result *idle, struct critical_path **out,
				struct cp_step_rows *rows, struct prof_error *err);
void cp_step_rows__exit(struct cp_step_rows *rows);

#endif
