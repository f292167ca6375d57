/* perfetto_trace.h - a capture as a native Perfetto trace (protobuf), for
 * ui.perfetto.dev and trace_processor: several times smaller than the Chrome
 * JSON trace of the same capture and faster to load.
 *
 *   tracks      one process per captured process (named from PROCESSES)
 *               holding its CPU threads (CUDA API calls, NVTX ranges and
 *               marks) and one track per GPU stream it ran work on (kernels,
 *               copies, memsets, and NVTX ranges projected onto the stream);
 *               one group per GPU with the counters "device memory in use"
 *               (bytes) and "busy" (% of each time bin)
 *   categories  those of the Chrome trace (kernel, gpu_memcpy, cuda_runtime...)
 *   flows       from each API call to every piece of GPU work it launched
 *   metadata    an instant "capture" at the start of a "perfkit capture"
 *               track: PERFKIT_META and TARGET_INFO_GPU as its arguments
 *
 * --from/--to/--range narrow it as they narrow the Chrome trace. The writer
 * streams: memory holds the tracks, the slices still open, the interned
 * names (reset when they grow large) and one busy bin per GPU. */
#ifndef REPORT_PERFETTO_TRACE_H
#define REPORT_PERFETTO_TRACE_H

#include <stdio.h>

#include "export_window.h"
#include "prof/error.h"
#include "prof/store.h"

struct perfetto_options {
	struct export_filter filter;
};

/* 0 when this build writes Perfetto traces, else PROF_E_USAGE with the
 * reason in err (built without protobuf-c). */
int perfetto_trace__supported(struct prof_error *err);

/* Write the trace of s to out. Returns 0 or a negative PROF_E_* code. */
int perfetto_trace__write(struct prof_store *s, const struct perfetto_options *opts, FILE *out,
			  struct prof_error *err);

#endif
