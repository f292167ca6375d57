/* python_sampler.c - Python's stacks: every Python thread's stack sampled
 * HZ times a second by a thread of the collector (--python-sampling), and
 * the calling thread's stack at each CUDA call the API selection records
 * (--python-backtrace=cuda).
 *
 * The sampler reads the interpreter's frames from its own thread
 * (python_runtime.c) without the GIL, so the program's threads are never
 * stopped and the sample is taken on the tick, whatever the program holds.
 * Whether a sampled thread is inside a CUDA call comes from CUPTI's
 * callbacks on the selected calls, which count each thread's open calls.
 * A stack is stored once (PERFKIT_PYTHON_FRAMES) and named by its id in
 * every sample and call; the writer thread writes what was queued since
 * its last look. */
#define _GNU_SOURCE /* syscall */
#include "collector.h"
#include "python_runtime.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "prof/api_select.h"
#include "prof/event.h"
#include "prof/protocol.h"
#include "prof/store.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_THREADS 256
#define TID_SLOTS 1024 /* threads counted for "inside a CUDA call" */

struct stack_slot {
	uint64_t hash;
	int64_t id;     /* 0: empty */
	size_t at;      /* its frames in st.frames */
	int depth;
};

struct sample {
	int64_t start_ns, tid, stack_id;
	int32_t state;
};

struct cuda_call {
	int64_t tid, stack_id;
	uint32_t correlation_id;
};

static struct {
	pthread_mutex_t lock;
	/* distinct stacks: a hash table over their frames */
	struct stack_slot *slots;
	size_t slots_cap, stacks;
	struct py_frame_ref *frames;
	size_t frames_used, frames_cap;
	struct stack_slot *order; /* the stacks in the order made, for the writer */
	size_t order_used, order_cap, written;
	struct sample *samples;
	size_t samples_used, samples_cap;
	struct cuda_call *calls;
	size_t calls_used, calls_cap;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct {
	long hz;
	bool backtrace;
	bool native; /* native frames under the Python ones (python_native.c) */
	bool calibrated;
	_Atomic int stop;
	/* the collector traces this process: its writer takes what is queued */
	_Atomic int collector_on;
	pthread_t thread;
	bool running;
	/* each thread's open CUDA calls, by OS thread id */
	_Atomic int64_t tid[TID_SLOTS];
	_Atomic int depth[TID_SLOTS];
} smp;

/* ---- the stacks ------------------------------------------------------------- */

static uint64_t stack_hash(const struct py_frame_ref *f, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++) {
		h = (h ^ (uint32_t)f[i].function) * 1099511628211ull;
		h = (h ^ (uint32_t)f[i].file) * 1099511628211ull;
		h = (h ^ (uint32_t)f[i].line) * 1099511628211ull;
		h = (h ^ (uint32_t)f[i].kind) * 1099511628211ull;
	}
	return h ? h : 1;
}

static int grow_slots(void)
{
	size_t cap = st.slots_cap ? st.slots_cap * 2 : 1024;
	struct stack_slot *n = calloc(cap, sizeof *n);

	if (!n)
		return -1;
	for (size_t i = 0; i < st.slots_cap; i++) {
		size_t j;

		if (!st.slots[i].id)
			continue;
		for (j = st.slots[i].hash & (cap - 1); n[j].id; j = (j + 1) & (cap - 1))
			;
		n[j] = st.slots[i];
	}
	free(st.slots);
	st.slots = n;
	st.slots_cap = cap;
	return 0;
}

/* The id of the stack f[0..n) (innermost first), made when new; 0 when
 * memory ran out. Under st.lock. */
static int64_t stack_intern(const struct py_frame_ref *f, int n)
{
	uint64_t h = stack_hash(f, n);
	size_t j;

	if ((st.stacks + 1) * 2 > st.slots_cap && grow_slots() < 0)
		return 0;
	for (j = h & (st.slots_cap - 1); st.slots[j].id; j = (j + 1) & (st.slots_cap - 1)) {
		const struct stack_slot *s = &st.slots[j];

		if (s->hash == h && s->depth == n &&
		    !memcmp(&st.frames[s->at], f, (size_t)n * sizeof *f))
			return s->id;
	}
	while (st.frames_used + (size_t)n > st.frames_cap) {
		if (collector__grow((void **)&st.frames, &st.frames_cap, st.frames_cap, sizeof *f,
				    4096) < 0)
			return 0;
	}
	if (collector__grow((void **)&st.order, &st.order_cap, st.order_used, sizeof *st.order,
			    256) < 0)
		return 0;
	memcpy(&st.frames[st.frames_used], f, (size_t)n * sizeof *f);
	st.slots[j] = (struct stack_slot){ .hash = h, .id = (int64_t)++st.stacks,
					   .at = st.frames_used, .depth = n };
	st.frames_used += (size_t)n;
	st.order[st.order_used++] = st.slots[j];
	return st.slots[j].id;
}

/* ---- inside a CUDA call ---------------------------------------------------- */

static int64_t this_tid(void)
{
	static __thread int64_t tid;

	if (!tid)
		tid = (int64_t)syscall(SYS_gettid);
	return tid;
}

/* tid's slot, claimed when add is set; -1 when none. */
static int tid_slot(int64_t tid, bool add)
{
	for (unsigned i = 0, j = (unsigned)tid % TID_SLOTS; i < TID_SLOTS;
	     i++, j = (j + 1) % TID_SLOTS) {
		int64_t have = atomic_load_explicit(&smp.tid[j], memory_order_relaxed), none = 0;

		if (have == tid)
			return (int)j;
		if (have)
			continue;
		if (!add)
			return -1;
		if (atomic_compare_exchange_strong(&smp.tid[j], &none, tid) || none == tid)
			return (int)j;
	}
	return -1;
}

static bool in_cuda(int64_t tid)
{
	int s = tid_slot(tid, false);

	return s >= 0 && atomic_load_explicit(&smp.depth[s], memory_order_relaxed) > 0;
}

void python_sampler__on_callback(int domain, uint32_t cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	int64_t tid;
	int s, depth;

	if (!smp.calibrated || (domain != CUPTI_CB_DOMAIN_RUNTIME_API &&
				domain != CUPTI_CB_DOMAIN_DRIVER_API))
		return;
	(void)cbid;
	tid = this_tid();
	s = tid_slot(tid, true);
	if (s < 0)
		return;
	if (cb->callbackSite == CUPTI_API_EXIT) {
		atomic_fetch_sub_explicit(&smp.depth[s], 1, memory_order_relaxed);
		return;
	}
	depth = atomic_fetch_add_explicit(&smp.depth[s], 1, memory_order_relaxed);
	/* a driver call the runtime makes for the program is the same call */
	if (smp.backtrace && depth == 0 && capture_window__recording()) {
		struct py_frame_ref frames[PY_MAX_DEPTH];
		int n = python_runtime__own_stack(frames, PY_MAX_DEPTH);
		struct cuda_call c = { .tid = tid, .correlation_id = cb->correlationId };

		if (n <= 0)
			return;
		pthread_mutex_lock(&st.lock);
		c.stack_id = stack_intern(frames, n);
		if (c.stack_id && !collector__grow((void **)&st.calls, &st.calls_cap, st.calls_used,
						   sizeof c, 4096))
			st.calls[st.calls_used++] = c;
		pthread_mutex_unlock(&st.lock);
	}
}

/* ---- the sampler thread ------------------------------------------------------ */

static void *sampler_main(void *arg)
{
	uint64_t period_ns = 1000000000ull / (uint64_t)smp.hz;
	struct py_frame_ref py[PY_MAX_DEPTH], frames[PY_MAX_DEPTH];
	uint64_t tstates[MAX_THREADS];
	struct timespec next;

	(void)arg;
	background_thread__enter();
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&smp.stop)) {
		struct timespec now;
		uint64_t holder = 0;
		bool gil_known;
		int64_t t;
		int n;

		next.tv_nsec += (long)period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* late by more than a period (the machine was busy): the ticks
		 * missed are not made up, so samples stay one period apart */
		if (now.tv_sec > next.tv_sec + 1 ||
		    (now.tv_sec - next.tv_sec) * 1000000000L + (now.tv_nsec - next.tv_nsec) >
			    (long)period_ns)
			next = now;
		/* A Python process that never starts CUDA (a spawned worker that
		 * inherited the hook) has no writer to take samples: none are
		 * taken, so that nothing piles up in its memory. */
		if (!atomic_load_explicit(&smp.collector_on, memory_order_relaxed) ||
		    !capture_window__recording())
			continue;
		t = perfkit_py_now();
		n = python_runtime__threads(tstates, MAX_THREADS);
		gil_known = python_runtime__gil_holder(&holder) == 0;
		for (int i = 0; i < n; i++) {
			int64_t tid = python_runtime__native_tid(tstates[i]);
			int depth = python_runtime__stack(tstates[i], py, PY_MAX_DEPTH), native;
			struct sample s = { .start_ns = t, .tid = tid };

			if (depth <= 0 || tid <= 0)
				continue;
			/* the C code the innermost Python frame called into, innermost first */
			native = smp.native ? python_native__stack(tid, frames, PY_MAX_DEPTH - depth) : 0;
			memcpy(frames + native, py, (size_t)depth * sizeof *py);
			depth += native;
			/* a thread runs Python only while it holds the GIL */
			s.state = in_cuda(tid)			      ? PROF_PY_IN_CUDA
				  : gil_known && holder != tstates[i] ? PROF_PY_GIL_WAIT
								       : PROF_PY_RUNNING;
			pthread_mutex_lock(&st.lock);
			s.stack_id = stack_intern(frames, depth);
			if (s.stack_id && !collector__grow((void **)&st.samples, &st.samples_cap,
							   st.samples_used, sizeof s, 16384))
				st.samples[st.samples_used++] = s;
			pthread_mutex_unlock(&st.lock);
		}
	}
	return NULL;
}

/* ---- start: the hook module's calibration ----------------------------------- */

static void enable_api_callbacks(CUpti_SubscriberHandle sub)
{
	static const struct { CUpti_CallbackDomain domain; CUpti_CallbackId size; } doms[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE },
		{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE },
	};

	for (size_t d = 0; d < sizeof doms / sizeof *doms; d++)
		for (CUpti_CallbackId cbid = 1; cbid < doms[d].size; cbid++) {
			const char *name = NULL;

			if (cuptiGetCallbackName(doms[d].domain, cbid, &name) == CUPTI_SUCCESS &&
			    prof_api_select__wanted(name))
				cuptiEnableCallback(1, sub, doms[d].domain, cbid);
		}
}

/* Native frames come with the samples unless turned off. */
static bool native_wanted(void)
{
	const char *v = getenv(PROF_ENV_PYTHON_NATIVE);

	return !v || strcmp(v, "off");
}

/* What was asked for: the hook may calibrate before CUDA starts the
 * collector, so both read it. */
static void read_env(void)
{
	const char *hz = getenv(PROF_ENV_PYTHON_SAMPLING), *bt = getenv(PROF_ENV_PYTHON_BACKTRACE);

	smp.hz = hz ? strtol(hz, NULL, 10) : 0;
	if (smp.hz < 0 || smp.hz > PROF_PYTHON_SAMPLING_HZ_MAX)
		smp.hz = 0;
	smp.backtrace = bt && !strcmp(bt, "cuda");
}

void python_sampler__init(void)
{
	read_env();
	atomic_store(&smp.collector_on, 1);
}

void python_sampler__enable_callbacks(void *subscriber)
{
	if (smp.hz || smp.backtrace)
		enable_api_callbacks(subscriber);
}

/* Called by the hook module once, with the GIL held: find the
 * interpreter's layout and start what was asked for. 0, or -1 (said). */
EXPORT int perfkit_py_calibrate(const struct perfkit_py_calibration *c)
{
	const char *why = NULL;

	if (smp.calibrated)
		return 0;
	read_env();
	if (!c || python_runtime__calibrate(c, &why) < 0) {
		fprintf(stderr, "perfkit: Python stacks are not recorded: %s\n",
			why ? why : "no calibration");
		return -1;
	}
	smp.calibrated = true;
	if (smp.hz > 0 && native_wanted()) {
		if (python_native__start(c->code_type, &why) == 0)
			smp.native = true;
		else
			fprintf(stderr, "perfkit: native frames are not recorded: %s\n", why);
	}
	if (smp.hz > 0 && pthread_create(&smp.thread, NULL, sampler_main, NULL) == 0)
		smp.running = true;
	return 0;
}

/* ---- the writer thread -------------------------------------------------------- */

void python_sampler__write(struct prof_writer *w, uint32_t pid)
{
	struct sample *samples;
	struct cuda_call *calls;
	size_t nsamples, ncalls;
	int64_t gpid = prof_global_pid(pid);

	pthread_mutex_lock(&st.lock);
	for (; st.written < st.order_used; st.written++) {
		const struct stack_slot *s = &st.order[st.written];

		for (int d = 0; d < s->depth; d++) {
			const struct py_frame_ref *f = &st.frames[s->at + (size_t)d];
			struct prof_py_frame row = {
				.global_pid = gpid, .stack_id = s->id, .depth = d,
				.function = python_names__string_id(w, f->function),
				.file = python_names__string_id(w, f->file), .line = f->line,
				.kind = f->kind,
			};

			prof_writer__py_frame(w, &row);
		}
	}
	samples = st.samples;
	nsamples = st.samples_used;
	calls = st.calls;
	ncalls = st.calls_used;
	st.samples = NULL;
	st.samples_used = st.samples_cap = 0;
	st.calls = NULL;
	st.calls_used = st.calls_cap = 0;
	pthread_mutex_unlock(&st.lock);
	for (size_t i = 0; i < nsamples; i++) {
		struct prof_py_sample row = {
			.start_ns = samples[i].start_ns,
			.global_tid = prof_global_tid(pid, (uint32_t)samples[i].tid),
			.global_pid = gpid, .stack_id = samples[i].stack_id, .state = samples[i].state,
		};

		prof_writer__py_sample(w, &row);
	}
	for (size_t i = 0; i < ncalls; i++) {
		struct prof_py_cuda_call row = {
			.global_tid = prof_global_tid(pid, (uint32_t)calls[i].tid), .global_pid = gpid,
			.correlation_id = (int32_t)calls[i].correlation_id,
			.stack_id = calls[i].stack_id,
		};

		prof_writer__py_cuda_call(w, &row);
	}
	free(samples);
	free(calls);
}

void python_sampler__exit(void)
{
	if (!smp.running)
		return;
	atomic_store(&smp.stop, 1);
	pthread_join(smp.thread, NULL);
	smp.running = false;
}
