/* python_ranges.c - the ranges the hook module (python/, perfkit run
 * --pytorch=modules) marks: each nn.Module's forward and backward and each
 * optimizer step, stored as NVTX_EVENTS rows of perfkit's own domain
 * "perfkit.pytorch" so that every reader of NVTX ranges reads them too.
 *
 * The hook calls in through ctypes (the exported perfkit_py_* functions):
 * it takes a start time, and when the range ends hands over the whole
 * range, which is queued under a lock and written by the writer thread.
 * Going through NVTX instead would cost a CUPTI marker record per edge and
 * could not end a range on a thread other than the one that began it as a
 * push/pop range, which autograd's backward needs. */
#define _GNU_SOURCE /* syscall */
#include "collector.h"
#include "python_runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "prof/event.h"
#include "prof/protocol.h"
#include "prof/store.h"

#define EXPORT __attribute__((visibility("default")))

struct py_range {
	int64_t start_ns, end_ns;
	int64_t start_tid, end_tid;
	int32_t name, category;
};

static struct {
	pthread_mutex_t lock;
	struct py_range *q;
	size_t used, cap;
	int64_t next_range_id;
} ranges = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t this_tid(void)
{
	static __thread int64_t tid;

	if (!tid)
		tid = (int64_t)syscall(SYS_gettid);
	return tid;
}

/* The capture's clock: CUPTI's timestamps, as every other row has. */
EXPORT int64_t perfkit_py_now(void)
{
	uint64_t ts = 0;

	cuptiGetTimestamp(&ts);
	return (int64_t)ts;
}

/* A range's name, interned: its index (0 when memory ran out). */
EXPORT int32_t perfkit_py_name(const char *text)
{
	return text ? python_names__intern(text, strlen(text)) : 0;
}

/* The range name (perfkit_py_name's index) of category PROF_PY_RANGE_*,
 * begun at start_ns on thread start_tid, ends now on this thread. */
EXPORT void perfkit_py_range(int32_t name, int64_t start_ns, int32_t category, int64_t start_tid)
{
	struct py_range r = {
		.start_ns = start_ns, .end_ns = perfkit_py_now(), .start_tid = start_tid,
		.end_tid = this_tid(), .name = name, .category = category,
	};

	if (name <= 0 || !capture_window__recording())
		return;
	pthread_mutex_lock(&ranges.lock);
	if (!collector__grow((void **)&ranges.q, &ranges.cap, ranges.used, sizeof r, 4096))
		ranges.q[ranges.used++] = r;
	pthread_mutex_unlock(&ranges.lock);
}

/* The calling thread's OS id, as the ranges record it (the hook keeps it
 * with a range's start). */
EXPORT int64_t perfkit_py_tid(void)
{
	return this_tid();
}

void python_ranges__write(struct records *rec, struct prof_writer *w, uint32_t pid)
{
	struct py_range *q;
	size_t n;

	pthread_mutex_lock(&ranges.lock);
	q = ranges.q;
	n = ranges.used;
	ranges.q = NULL;
	ranges.used = ranges.cap = 0;
	pthread_mutex_unlock(&ranges.lock);
	for (size_t i = 0; i < n; i++) {
		struct prof_nvtx_event ev = { 0 };
		const struct py_range *r = &q[i];

		ev.start_ns = r->start_ns;
		ev.end_ns = r->end_ns;
		ev.global_tid = prof_global_tid(pid, (uint32_t)r->start_tid);
		ev.end_global_tid = prof_global_tid(pid, (uint32_t)r->end_tid);
		/* A forward begins and ends on its thread, nested in its
		 * parent's: a push/pop range. A backward may end on another
		 * thread: a start/end range with an id. */
		ev.event_type = r->start_tid == r->end_tid && r->category != PROF_PY_RANGE_BACKWARD
					? PROF_NVTX_PUSHPOP
					: PROF_NVTX_STARTEND;
		if (ev.event_type == PROF_NVTX_STARTEND)
			ev.range_id = ++ranges.next_range_id;
		ev.category = r->category;
		ev.text_id = python_names__string_id(w, r->name);
		ev.domain_id = records__nvtx_domain(rec, PROF_PY_RANGE_DOMAIN, ev.global_tid);
		prof_writer__nvtx(w, &ev);
	}
	free(q);
}
