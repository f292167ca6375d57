/* collector.h - internals of the injection library shared by its files.
 *
 * Threads: application threads only call into CUPTI (and CUPTI calls our
 * buffer callbacks on them or on its own thread); one writer thread owns the
 * store, turns completed buffers into rows and flushes on a timer. The only
 * thing the two sides share is a lock-free stack of completed buffers and a
 * few atomics, so a signal handler on any application thread can ask for a
 * final drain without taking a lock another thread may hold. */
#ifndef PERFKIT_COLLECTOR_H
#define PERFKIT_COLLECTOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <stdio.h>
#include <time.h>

struct prof_writer;

/* One line to the program's stderr, as every message of the collector. */
static inline void collector__say(const char *what)
{
	fprintf(stderr, "perfkit: %s\n", what);
}

static inline uint64_t collector__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Room for one more element in a growing array: 0, or -1 when memory ran
 * out (the array is left as it was). */
static inline int collector__grow(void **arr, size_t *cap, size_t used, size_t elem,
				  size_t first_cap)
{
	size_t ncap;
	void *p;

	if (used < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first_cap;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* One completed CUPTI buffer waiting for the writer thread. The header sits
 * in front of the bytes CUPTI fills, so handing over allocates nothing. */
struct handoff_node {
	struct handoff_node *next;
	size_t valid_bytes;
	uint8_t *records;
	uint64_t pad; /* keeps the records 32-byte aligned after the header */
};

/* buffers.c: CUPTI's buffer callbacks and the hand-over stack. */
void buffers__requested(uint8_t **buffer, size_t *size, size_t *max_records);
void buffers__completed(uint8_t *buffer, size_t valid_bytes);
/* Everything handed over so far, oldest first; NULL when empty. */
struct handoff_node *buffers__take_all(void);
void buffers__free(struct handoff_node *node);

/* records.c: CUPTI records -> store rows (writer thread only). */
struct records;
int records__new(struct prof_writer *w, uint32_t pid, struct records **out);
/* Convert every record in one buffer. */
void records__buffer(struct records *r, uint8_t *buffer, size_t valid_bytes);
/* End of capture: rows held back for pairing are written or counted. */
void records__finish(struct records *r);
/* Between flushes: note threads started since the last look, with their
 * names (thread_names.c), before they can exit. */
void records__look_for_threads(struct records *r);
void records__delete(struct records *r);

/* nvtx_kinds.c: which NVTX ranges ended through nvtxRangeEnd (start/end
 * style). The callback runs on application threads, the query on the writer
 * thread; they share only an array of atomics. CUPTI's types stay out of
 * this header: domain is a CUpti_CallbackDomain, subscriber a
 * CUpti_SubscriberHandle. */
void nvtx_kinds__on_callback(int domain, uint32_t cbid, const void *data);
void nvtx_kinds__enable(void *subscriber);
int nvtx_kinds__is_start_end(uint64_t marker_id);

/* nvtx_payload.c: an NVTX extended payload of a MARKER_DATA record (a
 * CUpti_ActivityMarkerData2 of payload kind NVTX_EXTENDED_PAYLOAD) as
 * nsys's binaryData (malloc'd into *blob), its schemas written on first
 * sight; CUPTI's copy of the payload is freed either way. 1 when *blob
 * holds one. Writer thread only. */
int nvtx_payload__take(struct prof_writer *w, uint32_t pid, int64_t domain_id,
		       const void *marker_data, void **blob, size_t *len);
void nvtx_payload__exit(void);

/* demangle.c: malloc'd demangled name (a copy of the input when it is not a
 * C++ name); NULL only when mangled is NULL or memory runs out. */
char *collector__demangle(const char *mangled);

/* background_thread.c: the first call of each of the collector's own
 * threads: asynchronous signals blocked, a lower priority than the
 * program's threads. */
void background_thread__enter(void);

/* gpu_metrics.c: sampled GPU metrics (--gpu-metrics). init: 1 when on, 0
 * when off, < 0 on error; the callback comes from the subscriber for every
 * domain; write runs on the writer thread and stores what was sampled
 * since; exit (before the writer's last drain) stops the samplers and
 * decodes what they still hold. */
int gpu_metrics__init(void *subscriber, uint32_t pid);
void gpu_metrics__on_callback(int domain, uint32_t cbid, const void *data);
void gpu_metrics__write(struct prof_writer *w);
void gpu_metrics__exit(void);
/* A fatal signal: what the samplers hold is decoded and queued (the
 * process dies next, so they are not closed). */
void gpu_metrics__on_fatal_signal(void);

/* unified_memory.c: CUPTI's unified-memory counters. init asks for them;
 * the callback, from the subscriber for every domain, configures and
 * enables them once CUPTI lets it (a context made, managed memory
 * allocated); record turns one CUpti_ActivityUnifiedMemoryCounter3 into rows
 * (writer thread only). */
void unified_memory__init(void *subscriber);
/* Whether the counters were configured: then cuptiFinalize takes 2 s
 * (H100, driver 580; 3 ms without), so a run whose CUPTI is detached after
 * each window configures them at its first managed allocation only
 * (at_allocations_only, before init), not at its first context. */
int unified_memory__configured(void);
void unified_memory__at_allocations_only(void);
void unified_memory__on_callback(int domain, uint32_t cbid, const void *data);
void unified_memory__record(struct prof_writer *w, uint32_t pid, const void *record);

/* process_info.c: where this process stands in its job (host, rank, GPUs) and its
 * clock pairs, for captures of many processes and hosts. start runs before
 * the writer thread, end after it stopped. */
void process_info__record_start(struct prof_writer *w, uint32_t pid);
void process_info__record_end(struct prof_writer *w, uint32_t pid);

/* python_ranges.c: the ranges the Python hook marks (--pytorch=modules),
 * queued by the exported perfkit_py_* calls and written here as NVTX rows
 * of perfkit's domain (writer thread only). */
void python_ranges__write(struct records *rec, struct prof_writer *w, uint32_t pid);
/* records.c: the domain id of an NVTX domain name, announced with a
 * "domain create" row the first time (writer thread only). */
int64_t records__nvtx_domain(struct records *r, const char *name, int64_t tid);

/* python_sampler.c: Python's stacks (--python-sampling,
 * --python-backtrace=cuda). init reads the environment, enable_callbacks
 * then enables the callbacks of the selected API calls when either is
 * asked for; the hook
 * module's calibration starts the sampler; the callback counts each
 * thread's open CUDA calls and takes the stack at a call; write runs on
 * the writer thread; exit stops the sampler. */
void python_sampler__init(void);
void python_sampler__enable_callbacks(void *subscriber);
void python_sampler__on_callback(int domain, uint32_t cbid, const void *data);
void python_sampler__write(struct prof_writer *w, uint32_t pid);
void python_sampler__exit(void);

/* activity_kinds.c: the activity kinds of the --trace groups in trace:
 * start turns them on at the start of a capture, window on or off at a
 * capture window's opening and closing (the selected API calls switched
 * another way); always: the GPUs and contexts. */
void activity_kinds__start(int trace);
void activity_kinds__window(int trace, int on);
void activity_kinds__always(void);

/* capture_window.c: capture windows (--capture-range, --delay,
 * --duration, --start-paused, perfkit start/stop). init: 1 when the run
 * asked for windows (the kinds are then enabled only inside one, by this
 * file), 0 when the whole run is recorded. recording: whether records are
 * wanted now (always without windows). tick runs on the writer thread
 * between flushes (timers, the control file, kinds off after a closing);
 * write writes the windows opened and closed since; exit closes an open
 * window at the program's exit. */
int capture_window__init(int trace);
/* Whether the program's own calls open windows (cudaProfilerApi). */
int capture_window__program_opens(void);
/* The watching callbacks, enabled by init and again after each attach. */
void capture_window__enable_callbacks(void *subscriber);
/* 1 once after each window's closing: the injection detaches CUPTI, whose
 * hooks outlive the kinds, and attaches it again to watch (inject.c). */
int capture_window__detach_due(void);
int capture_window__recording(void);
void capture_window__on_callback(int domain, uint32_t cbid, const void *data);
void capture_window__tick(void);
void capture_window__write(struct prof_writer *w, uint32_t pid);
void capture_window__exit(void);

/* nvtx_slots.c: the NVTX function slots CUPTI's handlers were written
 * into, program library by library (each NVTX instance initialises its
 * injection once). cuptiFinalize leaves the handlers there, and an NVTX
 * call after a detach would run one whose state is gone: empty makes
 * every recorded slot a no-op (NVTX skips an empty slot). */
void nvtx_slots__record(void *get_export_table);
void nvtx_slots__record_extension(void *module_info);
void nvtx_slots__empty(void);

/* drain.c: the writer thread. */
struct drain_config {
	struct prof_writer *writer;
	uint32_t pid;
	uint64_t flush_interval_ns;
	uint64_t sync_flush_gap_ns; /* drain__flush_soon's least gap; 0: off */
};
int drain__start(const struct drain_config *cfg);
/* Ask the writer to write and commit all handed-over buffers and wait up to
 * timeout_ms; usable from a signal handler (sem_post + polling). 0 when the
 * drain completed. */
int drain__sync(unsigned timeout_ms);
/* After a synchronisation that succeeded: what it waited for is complete,
 * so the writer flushes CUPTI's buffers now rather than at the next
 * interval (at most once every sync_flush_gap_ns), lest a context failure
 * later lose the GPU times CUPTI holds on the device. */
void drain__flush_soon(void);
/* Stop the thread after a last drain; the store stays open. */
void drain__stop(void);
/* Records CUPTI reported dropped (accumulated by the buffer callback). */
void drain__add_dropped(uint64_t n);
/* True on the writer thread (a signal there cannot wait for itself). */
int drain__is_writer_thread(void);
/* Wake the writer thread now. */
void drain__wake(void);
/* Held by the writer thread while it calls CUPTI, and by the program's
 * thread that detaches CUPTI after a window: cuptiFinalize must not race
 * another thread's CUPTI call. */
void drain__cupti_lock(void);
void drain__cupti_unlock(void);
/* inject.c: on the writer thread, under drain__cupti_lock: CUPTI attached
 * again after a window's detach, with the watching callbacks. */
void collector__attach_if_due(void);

#endif
