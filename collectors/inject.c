/* inject.c - the injection library's entry points and process lifecycle.
 *
 * CUDA calls InitializeInjection when the program first initialises the
 * driver (CUDA_INJECTION64_PATH); NVTX calls InitializeInjectionNvtx2 when
 * the program first uses NVTX (NVTX_INJECTION64_PATH), which may come first,
 * so both start the collector and forward NVTX to CUPTI's own handler; when
 * preloaded (LD_PRELOAD) a constructor starts it. Whatever starts it, the
 * collector then owns the process's exits: atexit, fatal signals,
 * cudaDeviceReset and fork each get the capture onto disk or out of the way. */
#define _GNU_SOURCE /* dladdr */
#include "collector.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "metrics.h"
#include "thread_names.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "prof/trace_opts.h"

#define EXPORT __attribute__((visibility("default")))
#define SIGNAL_DRAIN_MS 3000u

enum collector_state {
	STATE_OFF = 0,      /* not started (yet) */
	STATE_ON,           /* tracing into the store */
	STATE_UNTRACED,     /* started, but CUPTI or the store refused: run on */
	STATE_DONE,         /* exit handling ran */
	STATE_FORKED_CHILD, /* a fork of a traced process: parent's state is not ours */
};

static const int handled_signals[] = { SIGINT, SIGTERM, SIGSEGV, SIGABRT, SIGBUS };

static struct {
	_Atomic int state;
	_Atomic int started;
	_Atomic int in_signal;
	CUpti_SubscriberHandle subscriber;
	int trace;
	/* detach CUPTI after each window (not with --metrics or
	 * --gpu-metrics, whose sessions a detach would end) */
	_Atomic int can_detach;
	_Atomic int attach_due; /* detached: the writer thread attaches again */
	int64_t detaches, detach_ns;
	struct prof_writer *writer;
	int standalone; /* no `perfkit run` around us: finish the file ourselves */
} g;

/* ---- exits ---------------------------------------------------------------- */

static void on_exit_flush(void)
{
	int expected = STATE_ON;
	struct prof_error err;
	int64_t exit_start_ns = (int64_t)collector__monotonic_ns(), flushed_ns;

	if (!atomic_compare_exchange_strong(&g.state, &expected, STATE_DONE))
		return;
	metrics__exit();
	python_sampler__exit();
	capture_window__exit();
	/* the trace on disk first: what follows talks to the GPU's counters */
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	flushed_ns = (int64_t)collector__monotonic_ns();
	drain__sync(SIGNAL_DRAIN_MS);
	gpu_metrics__exit();
	drain__stop();
	if (g.detaches) {
		prof_writer__count(g.writer, "cupti_detaches", g.detaches);
		prof_writer__count(g.writer, "cupti_detach_ns", g.detach_ns);
	}
	process_info__record_end(g.writer, (uint32_t)getpid());
	/* How long the program's exit waited for its capture (the last
	 * records, the writer's backlog): part of the time to a ready capture. */
	prof_writer__count(g.writer, "exit_wait_ns", (int64_t)collector__monotonic_ns() - exit_start_ns);
	prof_writer__count(g.writer, "exit_cupti_flush_ns", flushed_ns - exit_start_ns);
	if (g.standalone)
		prof_writer__finish(g.writer, &err);
	else
		prof_writer__delete(g.writer); /* `perfkit run` merges and finishes */
	g.writer = NULL;
}

static void on_fatal_signal(int sig)
{
	/* Only the first signal drains; a second (e.g. SIGSEGV inside the
	 * drain) goes straight to the default action. */
	if (atomic_load(&g.state) == STATE_ON && !atomic_exchange(&g.in_signal, 1) &&
	    !drain__is_writer_thread()) {
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		drain__sync(SIGNAL_DRAIN_MS);
		/* the trace is safe; then the samples since the last decode */
		gpu_metrics__on_fatal_signal();
		drain__sync(SIGNAL_DRAIN_MS);
	}
	signal(sig, SIG_DFL);
	raise(sig); /* delivered with the default action once we return */
}

static void install_signal_handlers(void)
{
	for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++) {
		struct sigaction sa, old;

		/* A program's own handler (Python's SIGINT -> KeyboardInterrupt)
		 * stays: its exit path reaches atexit anyway. */
		if (sigaction(handled_signals[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(handled_signals[i], &sa, NULL);
	}
}

static void on_fork_child(void)
{
	/* The child has no writer thread, and the store's connection belongs
	 * to the parent: touch neither. An exec re-injects through the
	 * environment and writes its own file. */
	atomic_store(&g.state, STATE_FORKED_CHILD);
	g.writer = NULL;
}

/* The synchronisations after which the writer flushes (drain__flush_soon). */
static const struct {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
} syncs[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize },
};

static bool is_sync(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof syncs / sizeof *syncs; i++)
		if (syncs[i].domain == domain && syncs[i].cbid == cbid)
			return true;
	return false;
}

static void enable_sync_callbacks(CUpti_SubscriberHandle subscriber)
{
	for (size_t i = 0; i < sizeof syncs / sizeof *syncs; i++)
		cuptiEnableCallback(1, subscriber, syncs[i].domain, syncs[i].cbid);
}

/* A synchronisation that succeeded: what it waited for has its GPU times. */
static bool sync_succeeded(CUpti_CallbackDomain domain, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue)
		return false;
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API
		       ? *(const cudaError_t *)cb->functionReturnValue == cudaSuccess
		       : *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS;
}

static void detach(void);

/* Enabled runtime calls in progress on this thread: CUPTI is detached only
 * at the return of an outermost call. */
static _Thread_local int runtime_depth;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	const bool sync = is_sync(domain, cbid);

	(void)userdata;
	metrics__on_callback(domain, cbid, data);
	gpu_metrics__on_callback(domain, cbid, data);
	nvtx_kinds__on_callback(domain, cbid, data);
	unified_memory__on_callback(domain, cbid, data);
	python_sampler__on_callback(domain, cbid, data);
	capture_window__on_callback(domain, cbid, data);
	if (sync) {
		thread_names__hint_self();
		if (sync_succeeded(domain, cb) && atomic_load(&g.state) == STATE_ON &&
		    capture_window__recording())
			drain__flush_soon();
	}
	/* cudaDeviceReset discards CUPTI's pending records with the context. */
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
	    cb->callbackSite == CUPTI_API_ENTER && atomic_load(&g.state) == STATE_ON) {
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		drain__sync(SIGNAL_DRAIN_MS);
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		runtime_depth += cb->callbackSite == CUPTI_API_ENTER ? 1 : runtime_depth > 0 ? -1 : 0;
	/* last: the subscriber that called us is gone after this */
	if (sync && cb->callbackSite == CUPTI_API_EXIT && runtime_depth == 0 &&
	    atomic_load(&g.can_detach) && atomic_load(&g.state) == STATE_ON &&
	    capture_window__detach_due())
		detach();
}

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	buffers__requested(buffer, size, max_records);
}

static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
					 size_t size, size_t valid_bytes)
{
	size_t dropped = 0;

	(void)size;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
		drain__add_dropped(dropped);
	buffers__completed(buffer, valid_bytes);
}

/* ---- start ------------------------------------------------------------------ */

static void process_name(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/self/comm", "r");

	snprintf(buf, cap, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)cap, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int open_store(pid_t pid, const char *comm)
{
	const char *dir = getenv(PROF_ENV_OUTPUT_DIR);
	char path[PATH_MAX], msg[PATH_MAX + 600];
	struct prof_error err;
	int rc;

	g.standalone = !dir || !*dir;
	if (g.standalone)
		snprintf(path, sizeof(path), "perfkit-%s-%d.sqlite", comm, (int)pid);
	else
		prof_proc_file__path(path, sizeof(path), dir, (int)pid);
	rc = prof_writer__create(path, PROF_WRITER_OVERWRITE, &g.writer, &err);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "%s; running untraced", err.msg);
		collector__say(msg);
		return rc;
	}
	prof_writer__process(g.writer, (uint32_t)pid, comm);
	process_info__record_start(g.writer, (uint32_t)pid);
	return 0;
}

/* A number of ms from the environment, within [least, PROF_FLUSH_MS_MAX];
 * otherwise the default. */
static unsigned env_ms(const char *name, unsigned least, unsigned fallback)
{
	const char *env = getenv(name);
	char *end;
	unsigned long ms;

	if (!env || !*env)
		return fallback;
	ms = strtoul(env, &end, 10);
	if (*end || ms < least || ms > PROF_FLUSH_MS_MAX)
		return fallback;
	return (unsigned)ms;
}

/* The callbacks every attach enables (the kinds wait for a window). */
static void enable_callbacks(void)
{
	capture_window__enable_callbacks(g.subscriber);
	if (g.trace & PROF_TRACE_NVTX)
		nvtx_kinds__enable(g.subscriber);
	if (g.trace & PROF_TRACE_UM)
		unified_memory__init(g.subscriber);
	cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
	enable_sync_callbacks(g.subscriber);
	python_sampler__enable_callbacks(g.subscriber);
}

/* After a window's closing, at the return of the program's next
 * synchronisation (CUPTI's advice for cuptiFinalize: the exit of an API
 * callback; a synchronisation's own record was not started inside the
 * window, and the window's work is done): the window's records out of
 * CUPTI, and CUPTI detached, which takes away the hooks the disabled
 * kinds left in every launch. The writer thread attaches it again with
 * the watching callbacks alone, as before the first window
 * (collector__attach_if_due), and makes no CUPTI call meanwhile
 * (drain__cupti_lock). Attaching on the program's thread, inside the
 * callback or waiting there for the writer, crashed the program (H100,
 * driver 580): CUPTI's own sample attaches from another thread too. */
static void detach(void)
{
	int64_t t0 = (int64_t)collector__monotonic_ns();

	/* configured unified-memory counters hold cuptiFinalize up 2 s */
	if (unified_memory__configured()) {
		atomic_store(&g.can_detach, 0);
		return;
	}
	drain__cupti_lock();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* CUPTI's NVTX handlers outlive it: NVTX calls are no-ops from here */
	nvtx_slots__empty();
	if (cuptiFinalize() == CUPTI_SUCCESS) {
		atomic_store(&g.attach_due, 1);
		g.detaches++;
	} else {
		atomic_store(&g.can_detach, 0);
	}
	g.detach_ns += (int64_t)collector__monotonic_ns() - t0;
	drain__cupti_unlock();
	drain__wake();
}

void collector__attach_if_due(void)
{
	if (!atomic_load(&g.attach_due))
		return;
	if (cuptiSubscribe(&g.subscriber, on_callback, NULL) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed) != CUPTI_SUCCESS) {
		atomic_store(&g.can_detach, 0);
		collector__say("CUPTI would not attach again after a capture window; later windows "
			       "record nothing");
	} else {
		cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		enable_callbacks();
	}
	atomic_store(&g.attach_due, 0);
}

static void collector_start(void)
{
	struct drain_config cfg;
	uint32_t version = 0;
	char comm[64];
	CUptiResult res;
	int trace, windowed, detach_wanted, metrics_on, gpu_metrics_on;
	pid_t pid;

	if (atomic_exchange(&g.started, 1))
		return;
	atomic_store(&g.state, STATE_UNTRACED);
	trace = prof_trace_opts__parse(getenv(PROF_ENV_TRACE), NULL);
	if (trace < 0) {
		collector__say(PROF_ENV_TRACE " is not a list of cuda,nvtx,memory,api,api-all,um; tracing the default");
		trace = PROF_TRACE_DEFAULT;
	}
	/* Record layouts are fixed within a CUPTI major version (13.x); another
	 * major would have us read its records with the wrong structs. */
	if (cuptiGetVersion(&version) != CUPTI_SUCCESS ||
	    version / 10000 != CUPTI_API_VERSION / 10000) {
		collector__say("this CUPTI is not the major version perfkit was built for; running untraced");
		return;
	}
	res = cuptiSubscribe(&g.subscriber, on_callback, NULL);
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		collector__say("another profiler (CUPTI subscriber) holds this process; running untraced");
		return;
	}
	if (res != CUPTI_SUCCESS) {
		const char *why = NULL;

		cuptiGetResultString(res, &why);
		fprintf(stderr, "perfkit: CUPTI cannot start (%s); running untraced\n",
			why ? why : "unknown error");
		return;
	}
	pid = getpid();
	process_name(comm, sizeof(comm));
	if (open_store(pid, comm) < 0) {
		cuptiUnsubscribe(g.subscriber);
		return;
	}
	/* OS thread ids, as nsys and every other tool on the machine shows. */
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed) != CUPTI_SUCCESS) {
		collector__say("CUPTI refused the activity buffers; running untraced");
		goto fail;
	}
	cfg.writer = g.writer;
	cfg.pid = (uint32_t)pid;
	cfg.flush_interval_ns = (uint64_t)env_ms(PROF_ENV_FLUSH_MS, 1, PROF_FLUSH_MS_DEFAULT) * 1000000u;
	cfg.sync_flush_gap_ns =
		(uint64_t)env_ms(PROF_ENV_SYNC_FLUSH_MS, 0, PROF_SYNC_FLUSH_MS_DEFAULT) * 1000000u;
	if (drain__start(&cfg) < 0) {
		collector__say("cannot start the writer thread; running untraced");
		goto fail;
	}
	activity_kinds__always();
	g.trace = trace;
	/* with capture windows the kinds wait for a window's opening */
	windowed = capture_window__init(trace);
	if (!windowed)
		activity_kinds__start(trace);
	/* cudaProfilerStart can follow cudaProfilerStop by microseconds, before
	 * the writer's attach: those windows keep CUPTI attached */
	detach_wanted = windowed && !capture_window__program_opens() &&
			!(getenv(PROF_ENV_WINDOW_DETACH) && !strcmp(getenv(PROF_ENV_WINDOW_DETACH), "0"));
	if (detach_wanted)
		unified_memory__at_allocations_only();
	python_sampler__init();
	enable_callbacks();
	metrics_on = metrics__init(g.subscriber) != 0;
	gpu_metrics_on = gpu_metrics__init(g.subscriber, (uint32_t)pid);
	if (gpu_metrics_on < 0)
		collector__say("cannot start the GPU metrics sampler; tracing without it");
	atomic_store(&g.can_detach, detach_wanted && !metrics_on && !gpu_metrics_on);
	atomic_store(&g.state, STATE_ON);
	atexit(on_exit_flush);
	install_signal_handlers();
	pthread_atfork(NULL, NULL, on_fork_child);
	return;
fail:
	prof_writer__delete(g.writer);
	g.writer = NULL;
	cuptiUnsubscribe(g.subscriber);
}

EXPORT int InitializeInjection(void)
{
	collector_start();
	return 1;
}

/* Preloaded: start before main so NVTX and CUDA find CUPTI ready. A library
 * CUDA or NVTX loads on demand waits for their entry points instead. */
__attribute__((constructor)) static void collector_preloaded(void)
{
	const char *preload = getenv("LD_PRELOAD");

	if (preload && strstr(preload, "libperfkit-inject"))
		collector_start();
}

/* ---- NVTX -------------------------------------------------------------------- */

/* CUPTI implements NVTX tracing itself; we are only the library NVTX loads,
 * so hand each NVTX entry point on to CUPTI's. */
static void *cupti_symbol(const char *name)
{
	Dl_info info;
	void *lib;

	if (!dladdr((void *)cuptiSubscribe, &info) || !info.dli_fname)
		return NULL;
	lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	return lib ? dlsym(lib, name) : NULL;
}

typedef int (*nvtx_init_fn)(void *);

static int forward_nvtx(const char *name, void *arg)
{
	nvtx_init_fn fn;

	collector_start();
	*(void **)&fn = cupti_symbol(name);
	return fn ? fn(arg) : 0;
}

EXPORT int InitializeInjectionNvtx(void *get_export_table)
{
	return forward_nvtx("InitializeInjectionNvtx", get_export_table);
}

EXPORT int InitializeInjectionNvtx2(void *get_export_table)
{
	int ok = forward_nvtx("InitializeInjectionNvtx2", get_export_table);

	if (ok)
		nvtx_slots__record(get_export_table);
	return ok;
}

EXPORT int InitializeInjectionNvtxExtension(void *module_info)
{
	int ok = forward_nvtx("InitializeInjectionNvtxExtension", module_info);

	if (ok)
		nvtx_slots__record_extension(module_info);
	return ok;
}
