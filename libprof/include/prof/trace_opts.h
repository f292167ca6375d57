/* trace_opts.h - what `--trace=` / PERFKIT_TRACE selects.
 *
 * Part of the capture protocol (prof/protocol.h), in libprof for the same
 * reason: the injection library, which may depend on libprof only, and
 * `perfkit run` (which validates the option before starting the program)
 * parse the list the same way. Header-only and pure: no CUPTI types, nothing
 * of a store. */
#ifndef PROF_TRACE_OPTS_H
#define PROF_TRACE_OPTS_H

#include <string.h>

enum prof_trace_group {
	/* `cuda` is four groups, each its own word so that what each costs
	 * can be measured alone (bench/gpu_overhead.sh's kind settings) */
	PROF_TRACE_KERNELS = 1 << 0,  /* kernels */
	PROF_TRACE_COPIES = 1 << 6,   /* copies (peer copies too) and memsets */
	PROF_TRACE_SYNC = 1 << 7,     /* synchronisation */
	PROF_TRACE_OVERHEAD = 1 << 8, /* CUPTI's own overhead records */
	PROF_TRACE_CUDA = PROF_TRACE_KERNELS | PROF_TRACE_COPIES | PROF_TRACE_SYNC |
			  PROF_TRACE_OVERHEAD,
	PROF_TRACE_NVTX = 1 << 1,   /* NVTX ranges, marks, names */
	PROF_TRACE_MEMORY = 1 << 2, /* allocations and frees */
	PROF_TRACE_API = 1 << 3,    /* the API calls reports and rules read (prof/api_select.h) */
	PROF_TRACE_API_ALL = 1 << 4, /* every runtime and driver API call */
	PROF_TRACE_UM = 1 << 5,     /* unified-memory migrations and page faults */
	/* a CUDA graph's launch as one record (CUPTI's graph trace), its
	 * nodes' kernels and copies not one by one: --cuda-graph-trace=graph */
	PROF_TRACE_GRAPH_LEVEL = 1 << 9,
	PROF_TRACE_ALL = PROF_TRACE_CUDA | PROF_TRACE_NVTX | PROF_TRACE_MEMORY | PROF_TRACE_API |
			 PROF_TRACE_API_ALL | PROF_TRACE_UM,
	/* What an empty list records: everything but the API calls no report
	 * or rule reads (the device queries and error checks a framework makes
	 * around every operation, and the driver calls CUDA's runtime makes
	 * for the program). `api-all` adds them. */
	PROF_TRACE_DEFAULT = PROF_TRACE_CUDA | PROF_TRACE_NVTX | PROF_TRACE_MEMORY | PROF_TRACE_API |
			     PROF_TRACE_UM,
};

/* The default as a list: what an empty --trace records. */
#define PROF_TRACE_DEFAULT_LIST "cuda,nvtx,memory,api,um"

/* Parse a comma-separated list ("cuda,nvtx"). NULL or "" selects PROF_TRACE_DEFAULT.
 * Returns the mask, or -1 when a word is unknown (its offset in *bad_at). */
static inline int prof_trace_opts__parse(const char *list, size_t *bad_at)
{
	static const struct { const char *word; int bit; } words[] = {
		{ "cuda", PROF_TRACE_CUDA }, { "kernels", PROF_TRACE_KERNELS },
		{ "copies", PROF_TRACE_COPIES }, { "sync", PROF_TRACE_SYNC },
		{ "overhead", PROF_TRACE_OVERHEAD }, { "graphs", PROF_TRACE_GRAPH_LEVEL },
		{ "nvtx", PROF_TRACE_NVTX },
		{ "memory", PROF_TRACE_MEMORY }, { "api", PROF_TRACE_API },
		{ "api-all", PROF_TRACE_API | PROF_TRACE_API_ALL }, { "um", PROF_TRACE_UM },
		{ "all", PROF_TRACE_ALL },
	};
	const char *p = list;
	int mask = 0;

	if (!list || !*list)
		return PROF_TRACE_DEFAULT;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			if (strlen(words[i].word) == len && strncmp(words[i].word, p, len) == 0) {
				mask |= words[i].bit;
				break;
			}
		}
		if (i == sizeof(words) / sizeof(words[0])) {
			if (bad_at)
				*bad_at = (size_t)(p - list);
			return -1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return mask ? mask : -1;
}

#endif
