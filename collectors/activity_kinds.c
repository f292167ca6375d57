/* activity_kinds.c - the CUPTI activity kinds each --trace group records,
 * turned on at the start of a capture, or at each capture window's opening
 * and off again at its close (capture_window.c). */
#include "collector.h"

#include <cupti.h>

#include "api_enable.h"
#include "prof/trace_opts.h"

static const struct {
	int group;
	CUpti_ActivityKind kind;
} kinds[] = {
	{ PROF_TRACE_KERNELS, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
	{ PROF_TRACE_GRAPH_LEVEL, CUPTI_ACTIVITY_KIND_GRAPH_TRACE },
	{ PROF_TRACE_COPIES, CUPTI_ACTIVITY_KIND_MEMCPY },
	{ PROF_TRACE_COPIES, CUPTI_ACTIVITY_KIND_MEMCPY2 },
	{ PROF_TRACE_COPIES, CUPTI_ACTIVITY_KIND_MEMSET },
	{ PROF_TRACE_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
	{ PROF_TRACE_OVERHEAD, CUPTI_ACTIVITY_KIND_OVERHEAD },
	{ PROF_TRACE_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2 },
	{ PROF_TRACE_API_ALL, CUPTI_ACTIVITY_KIND_RUNTIME },
	{ PROF_TRACE_API_ALL, CUPTI_ACTIVITY_KIND_DRIVER },
	{ PROF_TRACE_NVTX, CUPTI_ACTIVITY_KIND_MARKER },
	{ PROF_TRACE_NVTX, CUPTI_ACTIVITY_KIND_MARKER_DATA },
	{ PROF_TRACE_NVTX, CUPTI_ACTIVITY_KIND_NAME },
};

void activity_kinds__always(void)
{
	/* the GPUs and contexts: a handful of records, which every window's
	 * rows need to be read */
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
}

static void set_kinds(int trace, int on)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].group & trace)
			(on ? cuptiActivityEnable : cuptiActivityDisable)(kinds[i].kind);
}

void activity_kinds__start(int trace)
{
	set_kinds(trace, 1);
	if ((trace & PROF_TRACE_API) && !(trace & PROF_TRACE_API_ALL))
		api_enable__selected();
}

/* A window's opening or closing. CUPTI ignores a call's own activity
 * switch (cuptiActivityEnableRuntimeApi) turned on after the runtime
 * started with it off: six windowed captures on the H100 held no API call
 * that way. So a window turns on the whole runtime and driver kinds and
 * then every call that is not selected off again, which gives the same
 * rows as the start's per-call switches (310 calls in 10 PyTorch steps,
 * 31 a step in a capture of the whole run). */
void activity_kinds__window(int trace, int on)
{
	set_kinds(trace, on);
	if ((trace & PROF_TRACE_API) && !(trace & PROF_TRACE_API_ALL))
		api_enable__selected_by_kind((uint8_t)on);
}
