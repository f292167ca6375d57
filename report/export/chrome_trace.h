/* chrome_trace.h - a capture as a Chrome Trace Event Format file (JSON) for
 * Perfetto and chrome://tracing, following the PyTorch profiler's
 * conventions so that tools made for those traces read it:
 *
 *   categories  kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver,
 *               user_annotation (NVTX on CPU threads), gpu_user_annotation
 *               (an NVTX range projected onto each GPU stream it launched work
 *               on: from the first to the last GPU activity launched inside it)
 *   tracks      pid/tid of the CPU thread; pid = device id, tid = stream id
 *               for the GPU ("GPU 0" / "stream 7" from M events)
 *   flows       ph s (API call) -> ph f with "bp":"e" (GPU work), cat ac2g
 *   counter     ph C "device memory in use" per GPU
 *   time        ts/dur in microseconds with three decimals, relative to the
 *               top-level "baseTimeNanoseconds" so every value is exact.
 *
 * Kernel args carry "est. achieved occupancy %" under the name PyTorch's
 * tools read; the value is the theoretical occupancy of the launch
 * (registers, shared memory and block size against the GPU's limits), and
 * the arg "occupancy basis" says so.
 *
 * The writer streams: one SQL cursor per table, each ordered by start, merged
 * on the fly, so memory does not grow with the calls or the GPU work. Only
 * the projected NVTX ranges (one span per range and stream, computed in one
 * pass over the launches before the merge) are held. */
#ifndef REPORT_CHROME_TRACE_H
#define REPORT_CHROME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "export_window.h"
#include "prof/error.h"
#include "prof/store.h"

/* Size above which browsers struggle to load a trace. */
#define CHROME_TRACE_WARN_BYTES (500ull * 1000 * 1000)

struct chrome_options {
	struct export_filter filter;
	uint64_t warn_bytes;  /* 0: CHROME_TRACE_WARN_BYTES */
	FILE *warn;           /* where the size warning goes; NULL: stderr */
};

/* Write the trace of s to out. Returns 0 or a negative PROF_E_* code. */
int chrome_trace__write(struct prof_store *s, const struct chrome_options *opts, FILE *out,
			struct prof_error *err);

/* The estimated size in bytes of the trace of the window (what the warning
 * compares against the limit). */
int chrome_trace__estimate(struct prof_store *s, const struct export_window *w,
			   uint64_t *bytes, struct prof_error *err);

#endif
