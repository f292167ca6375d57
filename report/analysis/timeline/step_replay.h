/* step_replay.h - one step replayed forward with a change applied: what
 * the step would take if the program made the change a finding names.
 *
 * The critical path (critical_path.h) walks one measured step backwards.
 * The replay runs the same step's rows forwards from its start: each host
 * thread's top-level CUDA calls in their order, the host's own work
 * between them kept as measured gaps; each piece of GPU work starting
 * when the latest of what it waits for is done (the call that launched it,
 * the previous work on its stream, the other stream's work an event wait
 * tied it to), plus the latency it showed after that wait; a
 * synchronisation returning when the work it waited for is done. Replayed
 * as measured it gives back the step's length (step_replay.c's test checks
 * how closely on every fixture); replayed with a change, the step after
 * the change. Each change keeps everything else as measured:
 *   - REPLAY_GRAPH: the step's kernels replayed as one graph: no launch
 *     calls, no host work between them, each kernel starting the GPU's
 *     measured queued latency after what it waits for;
 *   - REPLAY_HOST_HIDDEN: the host's own work between calls moved off the
 *     launching thread (a pipeline): gone from the step, which still takes
 *     at least that work's time;
 *   - REPLAY_NO_SYNC: synchronisations return without waiting;
 *   - REPLAY_PINNED: copies from or to pageable memory at the pinned
 *     bandwidth, their calls returning once issued;
 *   - REPLAY_NO_ALLOC: allocation and free calls gone.
 * Any set of them applies at once. Apart from the changes, the params'
 * record costs replay every call shorter by what perfkit's recording added
 * to it: the step as the program would run it untraced. */
#ifndef REPORT_STEP_REPLAY_H
#define REPORT_STEP_REPLAY_H

#include <stdint.h>

#include "step_data.h"


struct replay_params {
	int64_t graph_gap_ns;        /* a graph's kernel-to-kernel latency */
	double pinned_bytes_per_ns;  /* a pinned copy's bandwidth */
	int64_t issue_ns;            /* what an asynchronous call costs the host */
	/* What recording added to each call (record_cost.h), taken off every
	 * call's time on its thread; 0 replays the calls as measured. */
	int64_t record_launch_ns, record_call_ns, record_alloc_ns, record_copy_ns;
};

/* The measured parameters of d's step: the GPU's latency between queued
 * kernels (median, at most a replayed graph's), the fastest pinned copy's
 * bandwidth of a copy of at least 1 MiB (else a PCIe 4.0 link's), the
 * median launch call. Pure. */
void step_replay__params(const struct cp_data *d, struct replay_params *p);

/* The step's length replayed with the set of changes ch (enum
 * replay_change's bits), from span_start_ns to where
 * it ends as the walk's anchor a says (the end of its last work, the next
 * step's first work's start, or its range's end on its thread after the
 * host's last work); -1 when out of memory or d has no plan. d must be
 * indexed (cp_data__index) and given its plan (replay_plan__make). Pure. */
int64_t step_replay__span(const struct cp_data *d, const struct cp_anchor *a, int64_t span_start_ns,
			  unsigned ch, const struct replay_params *p);

/* What a replay of d reads of the rows alone (each work's launching call,
 * each call's works, the top-level calls by start), made once for the
 * step's replays into d->plan (one a change: their sort of the calls was
 * a twentieth of a small capture's diagnosis); NULL where memory runs out. */
struct replay_plan *replay_plan__make(const struct cp_data *d);
void replay_plan__free(struct replay_plan *plan);

#endif
