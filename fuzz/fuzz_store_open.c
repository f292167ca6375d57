/* fuzz_store_open.c - opening and validating a capture: any bytes as a file
 * handed to prof_store__open, then the questions every command asks of an
 * open store (what it is, which tables and columns it has, its metadata).
 * Seeds are perfkit captures and nsys exports, so both dialects are fuzzed. */
#include <stdlib.h>

#include "fuzz.h"
#include "prof/store.h"

static const char *const tables[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", "NVTX_EVENTS", "StringIds",
	"TARGET_INFO_GPU", "PERFKIT_META", "PERFKIT_COUNTERS", "PERFKIT_KERNEL_METRICS",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_store *s = fuzz_store(data, size);
	char *meta;

	if (!s)
		return 0;
	FUZZ_CHECK(prof_store__kind(s) == PROF_STORE_PERFKIT || prof_store__kind(s) == PROF_STORE_NSYS);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		int64_t n = prof_store__count(s, tables[i]);

		FUZZ_CHECK(n >= 0);
		FUZZ_CHECK(prof_store__has_table(s, tables[i]) || n == 0);
		prof_store__has_column(s, tables[i], "start");
	}
	prof_store__is_finished(s);
	prof_store__counter(s, "dropped_records");
	meta = prof_store__meta(s, "command");
	free(meta);
	prof_store__close(s);
	return 0;
}
