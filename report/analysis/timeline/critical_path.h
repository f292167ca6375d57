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

/* ---- the walk (pure) --------------------------------------------------------- */

struct cp_call {
	int64_t start_ns, end_ns, tid, pid, name_id;
	enum api_kind kind;
	bool waits_for_gpu;  /* a synchronisation or a free: returns when GPU work is done */
	int64_t sync_stream; /* the stream it synchronises with; -1: any */
};

struct cp_wait {
	int64_t pid, device_id, stream_id;
	int64_t at_ns;       /* host time of the cudaStreamWaitEvent call */
};

/* One step's data: work sorted by start, calls by (tid, start), waits by
 * (pid, device, stream, time). cp_data__index builds the lookups the walk
 * uses; cp_data__exit frees those (not the arrays, which are the caller's). */
struct cp_data {
	const struct gpu_work *work;
	int nwork;
	const struct cp_call *calls;
	int ncalls;
	const struct cp_wait *waits;
	int nwaits;
	int64_t own_from_ns;  /* work launched before this is an earlier step's
			       * (NVTX steps); INT64_MIN: none is */
	int *prev_on_stream;  /* per work: the previous work on its stream, or -1 */
	int *by_end;          /* work indices by end */
	int *cover;           /* per call: the call of its thread, started no later,
			       * that ends last */
	int *own_work;        /* per call: work it launched (start and thread match), or -1 */
};

int cp_data__index(struct cp_data *d);
/* The order of waits the lookups use (process, device, stream, time) of x
 * against that key. */
int cp_wait__cmp(const struct cp_wait *x, int64_t pid, int64_t dev, int64_t stream, int64_t at);
void cp_data__exit(struct cp_data *d);
/* Lookups over indexed data (critical_path_walk.c): the last call of
 * thread tid that starts before t (-1: none); the work of process pid that
 * ended last inside (after, upto], of one stream when stream >= 0 (-1:
 * none); the work of another stream of w's device and process that ended
 * last at or before t, the likeliest recorder of an event w's stream
 * waited on (-1: none); whether w's stream waited on an event in
 * (after, upto]. */
int cp_data__last_call_before(const struct cp_data *d, int64_t tid, int64_t t);
int cp_data__released_by(const struct cp_data *d, int64_t pid, int64_t stream, int64_t after, int64_t upto);
int cp_data__other_stream_before(const struct cp_data *d, const struct gpu_work *w, int64_t t);
bool cp_data__waited_between(const struct cp_data *d, const struct gpu_work *w, int64_t after, int64_t upto);

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
};

struct cp_anchor {
	bool on_gpu;
	int work;            /* on_gpu: the work that ends the step */
	bool before_work;    /* on_gpu: the step ends where that work starts (the
			      * next step's first work), which it leaves out */
	int64_t tid, at_ns;  /* else: the thread and time the step ends at */
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

/* The changes a step is replayed with (step_replay.h), as bits: a replay
 * applies any set of them at once. */
enum replay_change {
	REPLAY_AS_MEASURED = 0,
	REPLAY_GRAPH = 1,
	REPLAY_HOST_HIDDEN = 2,
	REPLAY_NO_SYNC = 4,
	REPLAY_PINNED = 8,
	REPLAY_NO_ALLOC = 16,
	REPLAY_NSETS = 32    /* every set of them, as an index */
};


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
};

/* Step rows past this many (work plus calls) are not walked. */
#define CP_MAX_ROWS 4000000

int critical_path__analyse(struct diag_scope *ctx, struct critical_path **out, struct prof_error *err);
void critical_path__delete(struct critical_path *cp);

#endif
