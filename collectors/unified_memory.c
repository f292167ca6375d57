/* unified_memory.c - CUPTI's unified-memory counters: migrations between
 * host and GPU, CPU and GPU page faults, thrashing, throttling and remote
 * mapping of managed memory.
 *
 * Configured before a context exists, the counters are accepted and then
 * lost: enabling their activity kind answers CUPTI_ERROR_NOT_READY, then
 * and later (the H100, driver 580). Configured and enabled in the callback
 * of the first context, they work, so both happen there (enable_point). The records become rows as nsys stores
 * them: migrations are memcpy rows of the unified copy kinds with their
 * cause and pages' address, faults go to CUDA_UM_CPU_PAGE_FAULT_EVENTS and
 * CUDA_UM_GPU_PAGE_FAULT_EVENTS, and what nsys has no table for (thrashing,
 * throttling, remote maps) is counted. */
#define _GNU_SOURCE /* dladdr */
#include "collector.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "mapping.h"
#include "prof/event.h"
#include "prof/store.h"

/* A host fault's pc -> the function and module it lies in. dladdr walks
 * symbol tables, and a program faults from few places many times. */
#define PC_CACHE_SIZE 1024u

static struct {
	_Atomic int wanted, enabled, warned, configured;
	bool at_allocations_only; /* not at a context's creation */
	struct { uint64_t pc; int64_t function, module; int32_t unresolved; } pcs[PC_CACHE_SIZE];
} um;

static const CUpti_ActivityUnifiedMemoryCounterKind all_counters[] = {
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
	CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
};
static const size_t counter_lists[] = { 8, 4, 2 }; /* prefixes of all_counters */

/* Configure the counters, most first: a device or driver that refuses a
 * counter refuses the whole list, so the next one leaves the rarer ones
 * out. 0, or -1 when every list was refused. */
static int configure(void)
{
	CUpti_ActivityUnifiedMemoryCounterConfig config[8];

	for (size_t l = 0; l < sizeof counter_lists / sizeof *counter_lists; l++) {
		size_t n = counter_lists[l];

		for (size_t i = 0; i < n; i++) {
			/* scope and device are ignored since CUDA 7.0: every device */
			config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
			config[i].kind = all_counters[i];
			config[i].deviceId = 0;
			config[i].enable = 1;
		}
		if (cuptiActivityConfigureUnifiedMemoryCounter(config, (uint32_t)n) == CUPTI_SUCCESS)
			return 0;
	}
	return -1;
}

void unified_memory__at_allocations_only(void)
{
	um.at_allocations_only = true;
}

void unified_memory__init(void *subscriber)
{
	CUpti_SubscriberHandle sub = (CUpti_SubscriberHandle)subscriber;

	atomic_store(&um.wanted, 1);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
}

int unified_memory__configured(void)
{
	return atomic_load(&um.configured);
}

/* Where configuring and enabling are tried: a new context, then the return
 * of each managed allocation until they succeed. Pages only move once
 * something touches an allocation, so nothing is missed. */
static int enable_point(int domain, uint32_t cbid, const void *data, bool *allocation)
{
	const CUpti_CallbackData *cb = data;

	*allocation = false;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE)
		return cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED;
	if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000) ||
	    (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged)) {
		*allocation = true;
		return cb->callbackSite == CUPTI_API_EXIT;
	}
	return 0;
}

void unified_memory__on_callback(int domain, uint32_t cbid, const void *data)
{
	const char *why = NULL;
	bool allocation;
	CUptiResult res = CUPTI_ERROR_NOT_SUPPORTED;

	if (!atomic_load(&um.wanted) || atomic_load(&um.enabled) ||
	    !enable_point(domain, cbid, data, &allocation) ||
	    (um.at_allocations_only && !allocation))
		return;
	atomic_store(&um.configured, 1);
	if (configure() == 0)
		res = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
	if (res == CUPTI_SUCCESS) {
		atomic_store(&um.enabled, 1);
		return;
	}
	/* only a refusal once managed memory exists matters, said once */
	if (!allocation || atomic_exchange(&um.warned, 1))
		return;
	cuptiGetResultString(res, &why);
	fprintf(stderr, "perfkit: no unified-memory counters on this device (%s); tracing without them\n",
		why ? why : "unknown error");
}

/* ---- records -> rows (writer thread) ------------------------------------- */

static size_t pc_slot(uint64_t pc)
{
	pc ^= pc >> 29;
	pc *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(pc >> 40) & (PC_CACHE_SIZE - 1);
}

/* The function (or the pc in hex) and module a host fault's pc lies in. */
static void resolve_pc(struct prof_writer *w, uint64_t pc, struct prof_um_cpu_fault *f)
{
	size_t slot = pc_slot(pc);
	Dl_info info;
	char hex[24];

	if (um.pcs[slot].pc == pc && um.pcs[slot].function) {
		f->function = um.pcs[slot].function;
		f->module = um.pcs[slot].module;
		f->unresolved = um.pcs[slot].unresolved;
		return;
	}
	snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)pc);
	memset(&info, 0, sizeof info);
	if (!pc || !dladdr((void *)(uintptr_t)pc, &info))
		memset(&info, 0, sizeof info);
	f->unresolved = !info.dli_sname;
	f->function = prof_writer__string(w, info.dli_sname ? info.dli_sname : hex);
	f->module = prof_writer__string(w, info.dli_fname ? info.dli_fname : "[unknown]");
	um.pcs[slot].pc = pc;
	um.pcs[slot].function = f->function;
	um.pcs[slot].module = f->module;
	um.pcs[slot].unresolved = f->unresolved;
}

static void migration(struct prof_writer *w, uint32_t pid, const CUpti_ActivityUnifiedMemoryCounter3 *c,
		      int copy_kind)
{
	struct prof_memcpy row = { 0 };

	row.start_ns = (int64_t)c->start;
	row.end_ns = (int64_t)c->end;
	/* the GPU the pages moved to or from (the CPU's id is all ones) */
	row.device_id = (int32_t)(copy_kind == PROF_COPY_UVM_DTOH ? c->srcId : c->dstId);
	row.global_pid = prof_global_pid(c->processId ? c->processId : pid);
	row.bytes = (int64_t)c->value;
	row.copy_kind = copy_kind;
	/* the counter names no memory kinds: both ends are managed memory */
	row.src_kind = row.dst_kind = PROF_MEM_MANAGED;
	row.src_device_id = (int32_t)c->srcId;
	row.dst_device_id = (int32_t)c->dstId;
	row.migration_cause = (int32_t)c->flags;
	row.virtual_address = c->address;
	prof_writer__memcpy(w, &row);
}

void unified_memory__record(struct prof_writer *w, uint32_t pid, const void *record)
{
	const CUpti_ActivityUnifiedMemoryCounter3 *c = record;
	int copy_kind = mapping__um_copy_kind(c->counterKind);

	if (copy_kind >= 0) {
		if (c->start && c->end >= c->start)
			migration(w, pid, c, copy_kind);
		else
			prof_writer__count(w, "incomplete_copies", 1);
		return;
	}
	switch (c->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT: {
		struct prof_um_cpu_fault f = { 0 };

		f.start_ns = (int64_t)c->start;
		f.global_pid = prof_global_pid(c->processId ? c->processId : pid);
		f.address = c->address;
		f.pc = c->value; /* for this counter, the faulting instruction */
		resolve_pc(w, f.pc, &f);
		prof_writer__um_cpu_fault(w, &f);
		break;
	}
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: {
		struct prof_um_gpu_fault f = { 0 };

		f.start_ns = (int64_t)c->start;
		f.end_ns = (int64_t)(c->end >= c->start ? c->end : c->start);
		f.global_pid = prof_global_pid(c->processId ? c->processId : pid);
		f.device_id = (int32_t)c->srcId;
		f.address = c->address;
		f.faults = (int64_t)c->value;
		f.access_type = (int32_t)c->flags;
		prof_writer__um_gpu_fault(w, &f);
		break;
	}
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
		prof_writer__count(w, "um_thrashing", 1);
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
		prof_writer__count(w, "um_throttling", 1);
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
		prof_writer__count(w, "um_remote_map", 1);
		break;
	default:
		break;
	}
}
