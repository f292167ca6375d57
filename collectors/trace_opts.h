/* trace_opts.h - what `--trace=` / PERFKIT_TRACE selects.
 *
 * Header-only so that the injection library and `perfkit run` (which
 * validates the option before starting the program) parse the list the same
 * way without linking each other. Pure: no CUPTI types. */
#ifndef PERFKIT_TRACE_OPTS_H
#define PERFKIT_TRACE_OPTS_H

#include <string.h>

enum trace_group {
	TRACE_CUDA = 1 << 0,   /* kernels, copies, memsets, synchronisation */
	TRACE_NVTX = 1 << 1,   /* NVTX ranges, marks, names */
	TRACE_MEMORY = 1 << 2, /* allocations and frees */
	TRACE_API = 1 << 3,    /* runtime and driver API calls */
	TRACE_ALL = TRACE_CUDA | TRACE_NVTX | TRACE_MEMORY | TRACE_API,
};

/* Parse a comma-separated list ("cuda,nvtx"). NULL or "" selects everything.
 * Returns the mask, or -1 when a word is unknown (its offset in *bad_at). */
static inline int trace_opts__parse(const char *list, size_t *bad_at)
{
	static const struct { const char *word; int bit; } words[] = {
		{ "cuda", TRACE_CUDA }, { "nvtx", TRACE_NVTX },
		{ "memory", TRACE_MEMORY }, { "api", TRACE_API }, { "all", TRACE_ALL },
	};
	const char *p = list;
	int mask = 0;

	if (!list || !*list)
		return TRACE_ALL;
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
