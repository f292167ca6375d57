/* api_select.h - the CUDA API calls perfkit records by default (`--trace=api`):
 * those a report or a rule reads. Launches, copies, memsets, allocation and
 * free, synchronisation, event record and wait, stream and graph calls; not
 * the device queries, error checks and attribute calls a framework makes
 * around every operation, which cost as much to record as the rest together
 * and answer no question (`--trace=api-all` records them too).
 *
 * Chosen by name, so that every version of a call (`_v3020`, `_ptsz`,
 * `_v13000`) and both the runtime and the driver spelling come along.
 * Header-only and pure, in libprof with the rest of the capture protocol:
 * the injection library enables these calls by callback id, the benchmark's
 * counting consumer does the same for its floor, and the tests check that
 * every call the rules query is here. */
#ifndef PROF_API_SELECT_H
#define PROF_API_SELECT_H

#include <stdbool.h>
#include <string.h>

/* Name prefixes of the selected calls (runtime, then driver). */
static const char *const prof_api_select_prefixes[] = {
	/* launches and graphs */
	"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", "cudaGraphInstantiate",
	"cudaStreamBeginCapture", "cudaStreamEndCapture",
	"cuLaunch", "cuGraphLaunch", "cuGraphInstantiate", "cuStreamBeginCapture",
	"cuStreamEndCapture",
	/* copies and memsets */
	"cudaMemcpy", "cudaMemset", "cudaMemPrefetch", "cuMemcpy", "cuMemsetD", "cuMemPrefetch",
	/* allocation and free */
	"cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
	"cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemHostRegister", "cuMemHostUnregister",
	"cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap",
	/* synchronisation, events, streams */
	"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
	"cudaEventRecord", "cudaStreamWaitEvent", "cudaStreamCreate", "cudaStreamDestroy",
	"cudaEventCreate", "cudaEventDestroy",
	"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuEventRecord",
	"cuStreamWaitEvent", "cuStreamCreate", "cuStreamDestroy", "cuEventCreate", "cuEventDestroy",
	/* whole-device events the rules explain */
	"cudaDeviceReset", "cuDevicePrimaryCtxReset",
};

/* Whether the call named name (as CUPTI names it, e.g.
 * "cudaMemcpyAsync_v3020") is recorded by `--trace=api`. A prefix matches
 * only up to a word boundary of the API's own name: "cudaFree" matches
 * "cudaFree_v3020" and "cudaFreeAsync", "cudaEventRecord" matches
 * "cudaEventRecordWithFlags", but "cudaStreamCreate" does not match
 * "cudaStreamCreatedBy..." style names that merely start alike. */
static inline bool prof_api_select__wanted(const char *name)
{
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(prof_api_select_prefixes) / sizeof(prof_api_select_prefixes[0]);
	     i++) {
		size_t len = strlen(prof_api_select_prefixes[i]);
		char next;

		if (strncmp(name, prof_api_select_prefixes[i], len))
			continue;
		next = name[len];
		/* end, version suffix, or the next word of a camel-case name */
		if (next == '\0' || next == '_' || (next >= 'A' && next <= 'Z') ||
		    (next >= '0' && next <= '9'))
			return true;
	}
	return false;
}

#endif
