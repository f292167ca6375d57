/* count_consumer.c - the benchmark's floors: a CUPTI injection library that
 * enables activity kinds and only counts the records it gets back (no
 * conversion, no disk). COUNT_CONSUMER_FLOOR chooses what it enables:
 *   kernels   kernels only: what any tracer of GPU time pays
 *   selected  kernels, copies, memsets, synchronisation and the API calls
 *             perfkit's default records (collectors/api_enable.h): the floor
 *             of `perfkit run --trace=cuda,api`
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

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
	(void)u; (void)d; (void)id; (void)p;
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "count_consumer: %llu records\n", (unsigned long long)records);
}

static void enable_floor(const char *floor)
{
	static const CUpti_ActivityKind selected[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};

	if (!strcmp(floor, "kernels")) {
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		return;
	}
	for (size_t i = 0; i < sizeof(selected) / sizeof(selected[0]); i++)
		cuptiActivityEnable(selected[i]);
	api_enable__selected();
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
