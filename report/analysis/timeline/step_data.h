/* step_data.h - one step's rows as the critical path's walk
 * (critical_path.h) and the forward replay (step_replay.h) both read them:
 * the GPU work, the calls and the stream waits, the lookups over them
 * (critical_path_walk.c builds them), where the step ends, and the
 * changes a step is replayed with. */
#ifndef REPORT_STEP_DATA_H
#define REPORT_STEP_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/gpu_work.h"

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
	/* what every replay of the step shares (replay_plan__make), made by
	 * the caller that replays; freed by cp_data__exit. NULL: no replay */
	struct replay_plan *plan;
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

struct cp_anchor {
	bool on_gpu;
	int work;            /* on_gpu: the work that ends the step */
	bool before_work;    /* on_gpu: the step ends where that work starts (the
			      * next step's first work), which it leaves out */
	int64_t tid, at_ns;  /* else: the thread and time the step ends at */
};

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

#endif
