/* count_consumer.c - the benchmark's floors: a CUPTI injection library that
 * enables activity kinds and only counts the records it gets back (no
 * conversion, no disk). COUNT_CONSUMER_FLOOR chooses what it enables:
 *   kernels   kernels only: what any tracer of GPU time pays
 *   gpu       kernels, copies, memsets and synchronisation: no API calls
 *   selected  gpu plus the API calls perfkit's default records
 *             (collectors/api_enable.h), as activity records enabled per
 *             callback id: the floor of `perfkit run --trace=cuda,api`
 *   rtkind    gpu plus every runtime call (the whole RUNTIME kind) and the
 *             selected driver calls per callback id
 *   callback  gpu plus the selected API calls taken through CUPTI's
 *             callback API instead of activity records: entry and exit
 *             timestamps and the correlation id written to a per-thread
 *             buffer (what a collector that records them itself pays)
 *   callback_all  gpu plus every runtime and driver call through the
 *             callback API (the callback way of `--trace=api-all`)
 *   kinds:K+K...  only the activity kinds named (kernel, memcpy, memcpy2,
 *             memset, sync, overhead, memory, nvtx (marker, marker data and
 *             names), graph (a graph launch as one record), runtime, driver)
 *             and api (the selected API calls): which of them costs what,
 *             each the floor of a `perfkit run --trace=` word
 *   all       (default) every kind perfkit's collector enables with every
 *             API call: the floor of `--trace=api-all`
 * It also holds CUPTI's one subscriber slot (COUNT_CONSUMER_SUBSCRIBE), which
 * tests/gpu/run.sh uses to check that the collector gives way to another
 * profiler. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "api_enable.h"

#define BUF_BYTES (8u << 20)

static uint64_t records;
static CUpti_SubscriberHandle subscriber;
static int started;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = aligned_alloc(32, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			       size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		__atomic_add_fetch(&records, 1, __ATOMIC_RELAXED);
	free(buf);
}

/* The callback floor's record of one API call, written where a collector
 * would write it: a per-thread buffer (wrapping; only counted). */
struct api_call {
	uint64_t start, end;
	uint32_t correlation_id, cbid;
	uint32_t domain, tid;
};
#define CALLS_PER_THREAD 4096u
static _Thread_local struct api_call calls[CALLS_PER_THREAD];
static _Thread_local uint32_t calls_used;
static uint64_t api_calls;

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
	const CUpti_CallbackData *cb = p;
	uint64_t ts;

	(void)u;
	if (d != CUPTI_CB_DOMAIN_RUNTIME_API && d != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	cuptiGetTimestamp(&ts);
	if (cb->callbackSite == CUPTI_API_ENTER) {
		*cb->correlationData = ts;
	} else {
		struct api_call *c = &calls[calls_used++ % CALLS_PER_THREAD];

		c->start = *cb->correlationData;
		c->end = ts;
		c->correlation_id = cb->correlationId;
		c->cbid = id;
		c->domain = d;
		__atomic_add_fetch(&api_calls, 1, __ATOMIC_RELAXED);
	}
}

static void enable_callbacks(CUpti_CallbackDomain domain, CUpti_CallbackId size)
{
	for (CUpti_CallbackId cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS &&
		    prof_api_select__wanted(name))
			cuptiEnableCallback(1, subscriber, domain, cbid);
	}
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "count_consumer: %llu records, %llu API callbacks\n",
		(unsigned long long)records, (unsigned long long)api_calls);
}

static void enable_floor(const char *floor)
{
	static const CUpti_ActivityKind gpu[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};

	if (!strcmp(floor, "kernels")) {
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		return;
	}
	if (!strncmp(floor, "kinds:", 6)) {
		static const struct { const char *name; CUpti_ActivityKind kind; } names[] = {
			{ "kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
			{ "memcpy", CUPTI_ACTIVITY_KIND_MEMCPY }, { "memset", CUPTI_ACTIVITY_KIND_MEMSET },
			{ "sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
			{ "overhead", CUPTI_ACTIVITY_KIND_OVERHEAD },
			{ "runtime", CUPTI_ACTIVITY_KIND_RUNTIME }, { "driver", CUPTI_ACTIVITY_KIND_DRIVER },
			{ "memcpy2", CUPTI_ACTIVITY_KIND_MEMCPY2 }, { "memory", CUPTI_ACTIVITY_KIND_MEMORY2 },
			{ "nvtx", CUPTI_ACTIVITY_KIND_MARKER }, { "nvtx", CUPTI_ACTIVITY_KIND_MARKER_DATA },
			{ "nvtx", CUPTI_ACTIVITY_KIND_NAME }, { "graph", CUPTI_ACTIVITY_KIND_GRAPH_TRACE },
		};

		for (const char *p = floor + 6; *p;) {
			size_t len = strcspn(p, "+");

			if (len == 3 && !strncmp(p, "api", 3))
				api_enable__selected();
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (strlen(names[i].name) == len && !strncmp(names[i].name, p, len))
					cuptiActivityEnable(names[i].kind);
			p += len + (p[len] == '+');
		}
		return;
	}
	for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++)
		cuptiActivityEnable(gpu[i]);
	if (!strcmp(floor, "selected")) {
		api_enable__selected();
	} else if (!strcmp(floor, "rtkind")) {
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
		api_enable__domain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
				   cuptiActivityEnableDriverApi);
	} else if (!strcmp(floor, "callback")) {
		if (!subscriber)
			cuptiSubscribe(&subscriber, on_callback, NULL);
		enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
		enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	} else if (!strcmp(floor, "callback_all")) {
		if (!subscriber)
			cuptiSubscribe(&subscriber, on_callback, NULL);
		cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
		cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
	}
}

static void start(void)
{
	const char *floor = getenv("COUNT_CONSUMER_FLOOR");
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
		CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_RUNTIME,
		CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
		CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_NAME,
	};

	if (__atomic_exchange_n(&started, 1, __ATOMIC_SEQ_CST))
		return;
	if (getenv("COUNT_CONSUMER_SUBSCRIBE"))
		cuptiSubscribe(&subscriber, on_callback, NULL);
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	cuptiActivityRegisterCallbacks(requested, completed);
	if (floor && *floor && strcmp(floor, "all"))
		enable_floor(floor);
	else
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			cuptiActivityEnable(kinds[i]);
	atexit(at_exit);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	start();
	return 1;
}

__attribute__((constructor)) static void preloaded(void)
{
	const char *p = getenv("LD_PRELOAD");

	if (p && strstr(p, "libcount_consumer"))
		start();
}
