/* gpu_idle.h - why the GPU is idle: every idle stretch of each GPU in the
 * diagnosis window (no kernel, copy or memset on any of its streams) is
 * attributed to a cause by the work that ends it. The API call that
 * launched that work (its correlation id) names the host thread that
 * submitted it; what that thread did between the GPU falling idle and the
 * call (its own work, or a CUDA call: which kind) is the cause, and so is
 * the call itself with its latency. Work launched before the stretch began
 * was held on the GPU: by an event its stream waited on (a
 * cudaStreamWaitEvent in the synchronisation rows), or by something the
 * trace does not record.
 *
 * The attribution itself (idle__attribute) and the classification of API
 * calls are pure functions over intervals; gpu_idle__analyse reads the
 * capture through cursors, one device at a time, holding only the calls
 * open during the stretch at hand, a state per stream, per-step totals and
 * the longest stretches. */
#ifndef REPORT_GPU_IDLE_H
#define REPORT_GPU_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/gpu_work.h"
#include "model/capture_windows.h"
#include "model/window.h"
#include "step_ends.h"
#include "window_calls.h"

/* ---- causes --------------------------------------------------------------- */

enum idle_cause {
	IDLE_HOST_WORK,   /* the submitting thread outside any CUDA call */
	IDLE_HOST_SYNC,   /* ... inside a synchronisation call */
	IDLE_HOST_ALLOC,  /* ... inside an allocation or a free */
	IDLE_HOST_COPY,   /* ... inside a copy or memset call: blocking, or staged
			   * through pageable memory */
	IDLE_HOST_API,    /* ... inside another CUDA call */
	IDLE_LAUNCH,      /* the call that submits the next work, and the time
			   * from it to the work's start */
	IDLE_STREAM_WAIT, /* the next work was queued; its stream waited on an event */
	IDLE_QUEUED,      /* the next work was queued, no wait recorded: a
			   * dependency or a delay the trace does not show */
	IDLE_UNKNOWN,     /* no call in the trace launched the next work, or no
			   * work followed in the window */
	IDLE_NCAUSES
};

/* "host_work", ...: the id used in the report's rows. */
const char *idle_cause__id(enum idle_cause c);
/* One line for humans: "host: own work outside CUDA calls", ... */
const char *idle_cause__title(enum idle_cause c);

/* ---- attributing one stretch (pure) --------------------------------------- */

/* An idle stretch and what ends it. */
struct idle_stretch {
	int64_t start_ns, end_ns;
	bool has_launch;            /* the work that ends it was joined to its call */
	int64_t launch_start_ns, launch_end_ns;
	enum api_kind launch_kind;  /* a copy call launches its own copy */
	bool stream_waited;         /* its stream waited on an event since the
				     * previous work on that stream was launched */
};

/* A CUDA call of the submitting thread. */
struct idle_host_call {
	int64_t start_ns, end_ns;
	enum api_kind kind;
};

/* A stretch's part in which synchronisation is at stake: the submitting
 * thread's own work from a synchronisation call's return to its next CUDA
 * call (or the launch), and which call that was. */
struct idle_sync_part {
	int64_t after_sync_ns;      /* inside by_cause[IDLE_HOST_WORK] */
	int sync_call;              /* the last synchronisation call in the stretch; -1: none */
};

/* Splits the stretch s among the causes: by_cause[c] receives the time of
 * cause c (the array is overwritten; its sum is the stretch's length).
 * calls: the submitting thread's calls that overlap the stretch, sorted by
 * start (overlaps count once, for the call that started first); call_ns,
 * when not NULL, receives each call's time in the stretch; sync, when not
 * NULL, the part after synchronisation calls. Returns the index of the
 * call with the most time in the stretch, or -1. */
int idle__attribute(const struct idle_stretch *s, const struct idle_host_call *calls, int ncalls,
		    int64_t *call_ns, int64_t by_cause[IDLE_NCAUSES], struct idle_sync_part *sync);
/* The idle time of a stretch that synchronisation caused: the thread blocked
 * in a synchronisation call while the GPU had nothing queued (host_sync),
 * and, when the thread is API-bound in the stretch (its own work no longer
 * than its time in CUDA calls and the launch), the gap from the call's
 * return to its next CUDA call. A thread that goes on to long work of its
 * own after a synchronisation would leave the GPU idle without it too: that
 * time stays the host's. */
int64_t idle__sync_claim(const int64_t by_cause[IDLE_NCAUSES], const struct idle_sync_part *sync);
/* Where time inside a call goes: the call that launched the work ending
 * the stretch (launches_next), or another call of the submitting thread. */
enum idle_cause idle__cause_of_call(enum api_kind kind, bool launches_next);
/* The cause with the most time in by_cause (the first of equals;
 * IDLE_UNKNOWN when all are 0). */
enum idle_cause idle__dominant(const int64_t by_cause[IDLE_NCAUSES]);

/* ---- the whole window ----------------------------------------------------- */

/* Up to this many of the longest stretches are kept, with their evidence. */
#define GPU_IDLE_TOP 10

struct gpu_idle_top {
	int64_t device_id;
	int64_t start_ns, duration_ns;
	int step;                   /* 1-based; 0: before the first step */
	enum idle_cause cause;      /* the dominant one */
	char *next_work;            /* what ended it (gpu_work__label); NULL: nothing did */
	char *evidence;
};

/* A call name that took idle time under a cause. */
struct gpu_idle_call_time {
	int64_t name_id;
	int64_t time_ns;
};

struct gpu_idle_device {
	int64_t device_id;
	int64_t busy_ns, idle_ns;
	int64_t cause_ns[IDLE_NCAUSES];
	int64_t stretches[IDLE_NCAUSES]; /* stretches whose dominant cause it is */
	int64_t *step_cause_ns;          /* nsteps x IDLE_NCAUSES */
	/* the calls (by name) the time of each host-call cause went to */
	struct gpu_idle_call_time *calls[IDLE_NCAUSES];
	int ncalls[IDLE_NCAUSES], cap_calls[IDLE_NCAUSES];
	/* the idle time synchronisation caused (idle__sync_claim), in all and
	 * by the synchronisation call's name */
	int64_t sync_claim_ns;
	int64_t sync_gap_ns;             /* of it, the API-bound gaps after the calls */
	int64_t sync_host_work_ns;       /* the host's own work after synchronisation
					  * calls that idle__sync_claim leaves it */
	struct gpu_idle_call_time *sync_calls;
	int nsync_calls, cap_sync_calls;
	/* the union of its kernels and graphs launched whole, clipped to the
	 * window, and of those less NCCL's kernels */
	int64_t kernels_ns, compute_ns;
};

/* Time a stream's queued work waited on an event (the stream free, the
 * work launched, an event wait recorded on the stream before it). */
struct gpu_idle_stream_wait {
	int64_t pid, device_id, stream_id;
	int64_t waits, wait_ns;
	int64_t producer_stream;    /* the other stream whose work ended last before
				     * the waits, most often; -1: none seen (inferred) */
};

struct gpu_idle_result {
	struct sum_window window;
	struct sum_stretches stretches; /* the window's time that was recorded: idle
					 * time is only ever inside them */
	struct sum_step *steps;
	int nsteps;
	struct gpu_idle_device *dev;
	int ndev;
	struct gpu_idle_top top[GPU_IDLE_TOP];
	int ntop;
	struct gpu_idle_stream_wait *waits;
	int nwaits, cap_waits;
	bool has_api_calls;
	bool replayed;              /* captured under kernel replay: the timeline is the profiler's */
	struct api_names names;     /* of the calls in calls[] */
	/* of an NVTX loop: the latest end of the work each step launched,
	 * which the pass met on its way (the critical path's steps' spans) */
	struct step_ends step_ends;
	/* the window's calls as the first device's pass read them all, for
	 * the rules that would read them again (known: it did) */
	struct window_calls calls_seen;
};

/* Attributes every idle stretch of the window ctx holds. */
int gpu_idle__analyse(struct diag_scope *ctx, struct gpu_idle_result **out, struct prof_error *err);
void gpu_idle_result__delete(struct gpu_idle_result *r);
/* The attribution of ctx's window, made on first use into *memo, which
 * its user owns (and frees with gpu_idle_result__delete): for rules that
 * weigh their cause by it. */
int gpu_idle__of(struct diag_scope *ctx, struct gpu_idle_result **memo, const struct gpu_idle_result **out,
		 struct prof_error *err);

/* r's calls_seen where its pass read every call of ctx's window beside
 * ctx's busy union, for a rule that would read them again; NULL where r
 * is NULL or made otherwise. */
struct window_calls *gpu_idle__calls_seen(struct gpu_idle_result *r, const struct diag_scope *ctx);

/* The median of v[0..n-1] (reorders v); 0 for n = 0. */
int64_t idle__median(int64_t *v, int n);

#endif
