/* fuzz.h - what the fuzz harnesses share: turning the fuzzer's bytes into
 * the file or string a reader takes, a sink that prints nowhere, and the
 * check that turns a broken invariant into a crash the engine records.
 *
 * Every harness is one LLVMFuzzerTestOneInput in fuzz_<target>.c. The same
 * source links three ways: with libFuzzer (clang -fsanitize=fuzzer), with
 * AFL++'s driver (afl-clang-fast -fsanitize=fuzzer) and with replay_main.c
 * (any compiler), which CI uses to run the corpora and crash inputs. */
#ifndef PERFKIT_FUZZ_H
#define PERFKIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct prof_store;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Per-process setup (fuzz_util.c); replay_main.c does not call it. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Write data to a file called name in this process's scratch folder (made
 * on first use, removed at exit) and return its path, or NULL when it
 * cannot be written. SQLite's -wal, -shm and -journal files left beside it
 * by the previous input are removed first, so no input sees another's.
 * While the folder's file system is nearly full it waits (fuzz_util.c). */
const char *fuzz_file(const uint8_t *data, size_t size, const char *name);

/* data as a NUL-terminated string (malloc'd; NULL when out of memory). */
char *fuzz_string(const uint8_t *data, size_t size);

/* The name a fuzzed capture goes by (in messages, and as its file). */
#define FUZZ_CAPTURE_NAME "capture.sqlite"

/* Open data as a capture from memory: NULL when prof_store__open_memory
 * refuses it (which is what most inputs are for: the refusal must be an
 * error, not a crash). No file is written: the store reads the bytes as
 * prof_store__open reads a file holding them (fuzz_store_open checks that
 * on every input it runs). */
struct prof_store *fuzz_store(const uint8_t *data, size_t size);

/* /dev/null, opened once. Reports are written there: the harness checks
 * that rendering survives, not what it prints. */
FILE *fuzz_null(void);

/* Where a blob holding two inputs (a baseline's JSON, then a capture)
 * splits: the offset of the SQLite magic, or size when there is none. */
size_t fuzz_split_at_sqlite(const uint8_t *data, size_t size);

/* A broken invariant is a finding: abort so that every engine records it. */
#define FUZZ_CHECK(cond)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, \
				__LINE__, #cond);                               \
			fflush(stderr);                                         \
			abort();                                                \
		}                                                               \
	} while (0)

#endif
