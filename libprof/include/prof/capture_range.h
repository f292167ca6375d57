/* capture_range.h - the value of `perfkit run --capture-range`, read once
 * by one grammar on both sides: the launcher checks it (capture/), the
 * collector acts on it (collectors/capture_window.c), which receives it in
 * PERFKIT_CAPTURE_RANGE (prof/protocol.h). */
#ifndef PROF_CAPTURE_RANGE_H
#define PROF_CAPTURE_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#define PROF_CAPTURE_RANGE_NAME_MAX 128

/* "nvtx:NAME[@DOMAIN][,skip=M][,count=N]": one window from the push of the
 * (skip+1)-th NAME range of DOMAIN (the default domain when domain is
 * empty) to the pop of the (skip+count)-th; "cudaProfilerApi": a window
 * from each cudaProfilerStart to the next cudaProfilerStop. */
struct prof_capture_range {
	bool profiler_api;
	char name[PROF_CAPTURE_RANGE_NAME_MAX];
	char domain[PROF_CAPTURE_RANGE_NAME_MAX];
	uint64_t skip, count;
};

/* 0, or -1 with *why saying what is wrong (a static string). */
int prof_capture_range__parse(const char *text, struct prof_capture_range *out,
			      const char **why);

#endif
