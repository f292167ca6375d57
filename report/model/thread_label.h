/* thread_label.h - the name every reader shows for a thread: what it is,
 * for people ("main", "autograd (GPU 0)", "NCCL proxy (GPU 1)", the name
 * the program gave it), not "thread 741".
 *
 * One rule for every reader that names threads (the HTML report, the
 * Chrome and Perfetto traces, the folded stacks, perfkit top), so a thread
 * reads the same everywhere. perfkit's captures and nsys exports both keep
 * a thread's name in ThreadNames (the OS name, or the NVTX name where the
 * program gave one) and are read the same way. */
#ifndef REPORT_MODEL_THREAD_LABEL_H
#define REPORT_MODEL_THREAD_LABEL_H

#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* Room for any label sum_thread__label writes, its NUL included. */
#define SUM_THREAD_LABEL_MAX 96

/* What a thread without a name of its own does, as its CUDA calls say. */
enum sum_thread_role {
	SUM_THREAD_ROLE_UNKNOWN,
	SUM_THREAD_ROLE_PIN_MEMORY, /* only pinned host allocations (a DataLoader's pin_memory) */
	SUM_THREAD_ROLE_EVENT_POLL, /* only event queries (a watchdog polling work) */
};

/* The label of thread global_tid into out (size bytes, NUL-terminated,
 * cut short to fit). name: its ThreadNames name or NULL; process_name: its
 * process's name or NULL (a thread's OS name is its process's until the
 * program sets one, so that name says nothing); role: from its calls, for
 * a thread without a name. Pure: no store, no allocation. */
void sum_thread__label(int64_t global_tid, const char *name, const char *process_name,
		       enum sum_thread_role role, char *out, size_t size);

/* Every thread of a capture with its label, read once. */
struct sum_thread_labels;

/* Reads the threads of s (those with API calls, NVTX rows or a name), their
 * names and, for those without one, their calls. 0, or a negative
 * PROF_E_* code with err filled. */
int sum_thread_labels__load(struct prof_store *s, struct sum_thread_labels **out,
			    struct prof_error *err);
/* Where the threads and their calls are read from, where a reader has
 * them already (the timeline exports' passes): each of threads a table or
 * a subquery with a globalTid column (NULL ends the list), each of calls
 * one with (globalTid, nameId) per call, or NULL for none. */
struct sum_thread_tables {
	const char *threads[5];
	const char *calls[2];
};
/* sum_thread_labels__load, reading t's tables in place of the capture's
 * (the API calls, NVTX rows and ThreadNames). */
int sum_thread_labels__load_from(struct prof_store *s, const struct sum_thread_tables *t,
				 struct sum_thread_labels **out, struct prof_error *err);
/* The label of global_tid; "thread TID" for one the capture does not know.
 * Valid until the next call or sum_thread_labels__delete. */
const char *sum_thread_labels__get(struct sum_thread_labels *l, int64_t global_tid);
void sum_thread_labels__delete(struct sum_thread_labels *l);

#endif
