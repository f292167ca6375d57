/* fuzz_store_open.c - opening and validating a capture: any bytes as a file
 * handed to prof_store__open, then the questions every command asks of an
 * open store (what it is, which tables and columns it has, its metadata).
 * Seeds are perfkit captures and nsys exports, so both dialects are fuzzed.
 *
 * The same bytes are also opened from memory (prof_store__open_memory, what
 * every other capture harness uses so that none writes a file): both must
 * give the same refusal with the same message, or the same answers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "prof/store.h"

static const char *const tables[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", "NVTX_EVENTS", "StringIds",
	"TARGET_INFO_GPU", "PERFKIT_META", "PERFKIT_COUNTERS", "PERFKIT_KERNEL_METRICS",
};

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Ask both stores everything a command asks first; the answers must agree. */
static void ask_both(struct prof_store *file, struct prof_store *mem)
{
	char *fmeta, *mmeta;

	FUZZ_CHECK(prof_store__kind(file) == PROF_STORE_PERFKIT ||
		   prof_store__kind(file) == PROF_STORE_NSYS);
	FUZZ_CHECK(prof_store__kind(mem) == prof_store__kind(file));
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		int64_t n = prof_store__count(file, tables[i]);
		bool in_file = prof_store__has_table(file, tables[i]);
		bool start_in_file = prof_store__has_column(file, tables[i], "start");

		FUZZ_CHECK(n >= 0);
		FUZZ_CHECK(in_file || n == 0);
		FUZZ_CHECK(prof_store__count(mem, tables[i]) == n);
		FUZZ_CHECK(prof_store__has_table(mem, tables[i]) == in_file);
		FUZZ_CHECK(prof_store__has_column(mem, tables[i], "start") == start_in_file);
	}
	FUZZ_CHECK(prof_store__is_finished(mem) == prof_store__is_finished(file));
	FUZZ_CHECK(prof_store__counter(mem, "dropped_records") ==
		   prof_store__counter(file, "dropped_records"));
	fmeta = prof_store__meta(file, "command");
	mmeta = prof_store__meta(mem, "command");
	FUZZ_CHECK(same_text(fmeta, mmeta));
	free(fmeta);
	free(mmeta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, FUZZ_CAPTURE_NAME);
	struct prof_error ferr = { 0 }, merr = { 0 };
	struct prof_store *file = NULL, *mem = NULL;
	int frc, mrc;

	if (!path)
		return 0;
	frc = prof_store__open(path, &file, &ferr);
	/* Named as the file is, so that the messages can be compared whole. */
	mrc = prof_store__open_memory(data, size, path, &mem, &merr);
	/* SQLite itself may meet a damaged b-tree at the open from memory and
	 * not from the file, or the other way round: which one does depends on
	 * the allocator and on what earlier inputs left in the page buffers it
	 * recycles (fuzz/crashes/store_open/sqlite-damage-seen-by-allocator:
	 * both opens accept it with glibc's malloc; with AddressSanitizer's, the
	 * memory open refuses it, perfkit's own code built without the sanitizer
	 * and linked with its runtime alone). So where one open refuses the file
	 * as damaged, the other may accept it, or refuse it as damaged in
	 * SQLite's other words ("malformed database schema"), or read on past
	 * the damage to another ground (a schema version from a row the other
	 * found malformed): SQLite's, not a divergence of perfkit's two opens.
	 * Each open must still keep its own contract. */
	if (frc == PROF_E_CORRUPT || mrc == PROF_E_CORRUPT) {
		FUZZ_CHECK(frc ? !file && ferr.code == frc && ferr.msg[0] : file != NULL);
		FUZZ_CHECK(mrc ? !mem && merr.code == mrc && merr.msg[0] : mem != NULL);
		prof_store__close(file);
		prof_store__close(mem);
		return 0;
	}
	if (frc != mrc || (frc && strcmp(ferr.msg, merr.msg)))
		fprintf(stderr, "file: %d %s\nmemory: %d %s\n", frc, ferr.msg, mrc, merr.msg);
	FUZZ_CHECK(frc == mrc);
	if (frc) {
		/* A refusal says why, naming the file; an open store has none. */
		FUZZ_CHECK(!file && !mem && ferr.code == frc && ferr.msg[0]);
		FUZZ_CHECK(!strcmp(ferr.msg, merr.msg));
		return 0;
	}
	FUZZ_CHECK(file && mem);
	ask_both(file, mem);
	prof_store__close(file);
	prof_store__close(mem);
	return 0;
}
