/* records.c - CUPTI activity records -> store rows.
 *
 * Runs on the writer thread only, so its caches need no locks. Some rows need
 * a second record before they can be written: NVTX ranges (a start and an end
 * record paired by id), marker colours (a MARKER_DATA record after the
 * MARKER), and synchronisation rows (their thread comes from the API call
 * with the same correlation id). Those are held here until the partner
 * arrives or the capture ends. */
#include "collector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "mapping.h"
#include "metrics/metrics.h"
#include "prof/event.h"
#include "prof/store.h"
#include "thread_names.h"

#define CORR_CACHE_SIZE (1u << 16) /* recent API calls: correlation id -> thread */
#define NAME_CACHE_SIZE 4096u      /* kernel name pointers seen (grows) */

struct kernel_names {
	const char *mangled; /* CUPTI keeps these alive for the process's life */
	int64_t mangled_id, demangled_id, short_id;
};

struct open_marker {
	uint32_t id;
	int is_mark;
	struct prof_nvtx_event ev; /* ev.binary: its extended payload, ours to free */
};

struct ctx_info {
	uint32_t context_id, device_id, parent_id;
	int green;
};

struct records {
	struct prof_writer *w;
	uint32_t pid;
	int64_t runtime_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	int64_t driver_names[CUPTI_DRIVER_TRACE_CBID_SIZE];
	struct { uint32_t corr, tid; } corr_cache[CORR_CACHE_SIZE];

	struct kernel_names *names;
	size_t names_cap, names_used;

	/* Open NVTX ranges and not yet written marks (both keyed by marker id). */
	struct open_marker *markers;
	size_t markers_cap, markers_used;

	struct ctx_info *ctxs;
	size_t ctxs_used, ctxs_cap;

	struct prof_sync *pending_sync;
	size_t sync_used, sync_cap;

	struct thread_names *threads; /* OS names of the threads with rows */

	int64_t *domains; /* domain StringIds already announced */
	size_t domains_used, domains_cap;

	int64_t incomplete_kernels, incomplete_copies, replayed_kernels, unpaired_markers;
};

static int grow(void **arr, size_t *cap, size_t used, size_t elem)
{
	return collector__grow(arr, cap, used, elem, 64);
}

int records__new(struct prof_writer *w, uint32_t pid, struct records **out)
{
	struct records *r = calloc(1, sizeof(*r));

	if (!r)
		return PROF_E_NOMEM;
	r->w = w;
	r->pid = pid;
	r->names_cap = NAME_CACHE_SIZE;
	r->names = calloc(r->names_cap, sizeof(*r->names));
	if (!r->names || thread_names__new(pid, "/proc", &r->threads) < 0) {
		free(r->names);
		free(r);
		return PROF_E_NOMEM;
	}
	*out = r;
	return 0;
}

void records__delete(struct records *r)
{
	if (!r)
		return;
	free(r->names);
	free(r->markers);
	free(r->ctxs);
	free(r->pending_sync);
	free(r->domains);
	thread_names__delete(r->threads);
	free(r);
}

/* ---- names ---------------------------------------------------------------- */

static int64_t api_name(struct records *r, CUpti_CallbackDomain domain, uint32_t cbid)
{
	int64_t *slot = NULL;
	const char *name = NULL;

	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		slot = &r->runtime_names[cbid];
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		slot = &r->driver_names[cbid];
	if (slot && *slot)
		return *slot;
	if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
		char buf[48];

		snprintf(buf, sizeof(buf), "%s_cbid_%u",
			 domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda" : "cu", cbid);
		return prof_writer__string(r->w, buf);
	}
	if (!slot)
		return prof_writer__string(r->w, name);
	*slot = prof_writer__string(r->w, name);
	return *slot;
}

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static int names_grow(struct records *r)
{
	size_t ncap = r->names_cap * 2;
	struct kernel_names *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < r->names_cap; i++) {
		size_t h;

		if (!r->names[i].mangled)
			continue;
		for (h = ptr_hash(r->names[i].mangled, ncap); n[h].mangled; h = (h + 1) & (ncap - 1))
			;
		n[h] = r->names[i];
	}
	free(r->names);
	r->names = n;
	r->names_cap = ncap;
	return 0;
}

/* Demangling is slow next to writing a row: do it once per kernel function. */
static const struct kernel_names *kernel_names(struct records *r, const char *mangled)
{
	static const struct kernel_names none;
	struct kernel_names *e;
	char *demangled, *short_name;
	size_t h, len;

	if (!mangled)
		return &none;
	if (r->names_used * 2 >= r->names_cap && names_grow(r) < 0)
		return &none;
	for (h = ptr_hash(mangled, r->names_cap); r->names[h].mangled; h = (h + 1) & (r->names_cap - 1))
		if (r->names[h].mangled == mangled)
			return &r->names[h];
	e = &r->names[h];
	demangled = collector__demangle(mangled);
	len = demangled ? strlen(demangled) + 1 : 1;
	short_name = malloc(len);
	if (!demangled || !short_name) {
		free(demangled);
		free(short_name);
		return &none;
	}
	mapping__short_name(demangled, short_name, len);
	e->mangled = mangled;
	e->mangled_id = prof_writer__string(r->w, mangled);
	e->demangled_id = prof_writer__string(r->w, demangled);
	e->short_id = prof_writer__string(r->w, short_name);
	r->names_used++;
	free(demangled);
	free(short_name);
	return e;
}

/* ---- contexts --------------------------------------------------------------- */

static const struct ctx_info *ctx_find(struct records *r, uint32_t context_id)
{
	for (size_t i = 0; i < r->ctxs_used; i++)
		if (r->ctxs[i].context_id == context_id)
			return &r->ctxs[i];
	return NULL;
}

static void on_context(struct records *r, const CUpti_ActivityContext3 *c)
{
	struct ctx_info *e;

	if (ctx_find(r, c->contextId) ||
	    grow((void **)&r->ctxs, &r->ctxs_cap, r->ctxs_used, sizeof(*r->ctxs)) < 0)
		return;
	e = &r->ctxs[r->ctxs_used++];
	e->context_id = c->contextId;
	e->device_id = c->deviceId;
	e->parent_id = c->parentContextId;
	e->green = c->isGreenContext;
}

/* nsys keeps a green context's id apart from the context it was carved from. */
static void split_context(struct records *r, uint32_t context_id, int32_t *ctx, int32_t *green)
{
	const struct ctx_info *c = ctx_find(r, context_id);

	*ctx = (int32_t)context_id;
	*green = 0;
	if (c && c->green) {
		*ctx = (int32_t)c->parent_id;
		*green = (int32_t)context_id;
	}
}

/* ---- GPU work ----------------------------------------------------------- */

/* GPU work has times once CUPTI has read them back from the device: not
 * when a forced flush hands it over unfinished, nor when its context failed
 * first. */
static bool has_gpu_times(uint64_t start, uint64_t end)
{
	return start && end && end >= start;
}

static void on_kernel(struct records *r, const CUpti_ActivityKernel10 *k)
{
	struct prof_kernel row = { 0 };
	const struct kernel_names *n;

	/* A forced flush can hand over kernels that have not finished: a zero
	 * length row would be a lie in every duration statistic. */
	if (!has_gpu_times(k->start, k->end)) {
		/* under kernel replay such a record is a profiled launch, whose
		 * row the metrics file rebuilds: not an unfinished kernel */
		if (metrics__replaying())
			r->replayed_kernels++;
		else
			r->incomplete_kernels++;
		return;
	}
	n = kernel_names(r, k->name);
	row.start_ns = (int64_t)k->start;
	row.end_ns = (int64_t)k->end;
	row.device_id = (int32_t)k->deviceId;
	split_context(r, k->contextId, &row.context_id, &row.green_context_id);
	row.stream_id = (int32_t)k->streamId;
	row.correlation_id = (int32_t)k->correlationId;
	row.global_pid = prof_global_pid(r->pid);
	row.demangled_name = n->demangled_id;
	row.short_name = n->short_id;
	row.mangled_name = n->mangled_id;
	row.launch_type = k->launchType;
	row.cache_config = k->cacheConfig.config.executed;
	row.registers_per_thread = k->registersPerThread;
	row.grid_x = k->gridX;
	row.grid_y = k->gridY;
	row.grid_z = k->gridZ;
	row.block_x = k->blockX;
	row.block_y = k->blockY;
	row.block_z = k->blockZ;
	row.static_shared_bytes = k->staticSharedMemory;
	row.dynamic_shared_bytes = k->dynamicSharedMemory;
	row.local_memory_per_thread_bytes = (int32_t)k->localMemoryPerThread;
	row.local_memory_total_bytes = (int64_t)k->localMemoryTotal_v2;
	row.grid_id = k->gridId;
	row.shared_memory_executed_bytes = (int32_t)k->sharedMemoryExecuted;
	row.graph_node_id = (int64_t)k->graphNodeId;
	row.shared_memory_limit_config = (int32_t)k->shmemLimitConfig;
	prof_writer__kernel(r->w, &row);
}

/* A copy or memset without GPU times: counted, not stored, like a kernel. */
static bool copy_incomplete(struct records *r, uint64_t start, uint64_t end)
{
	if (has_gpu_times(start, end))
		return false;
	r->incomplete_copies++;
	return true;
}

static void on_memcpy(struct records *r, const CUpti_ActivityMemcpy6 *m)
{
	struct prof_memcpy row = { 0 };

	if (copy_incomplete(r, m->start, m->end))
		return;
	row.start_ns = (int64_t)m->start;
	row.end_ns = (int64_t)m->end;
	row.device_id = (int32_t)m->deviceId;
	split_context(r, m->contextId, &row.context_id, &row.green_context_id);
	row.stream_id = (int32_t)m->streamId;
	row.correlation_id = (int32_t)m->correlationId;
	row.global_pid = prof_global_pid(r->pid);
	row.bytes = (int64_t)m->bytes;
	row.copy_kind = mapping__copy_kind(m->copyKind);
	row.src_kind = mapping__mem_kind(m->srcKind);
	row.dst_kind = mapping__mem_kind(m->dstKind);
	/* A copy within one device: both ends are that device. */
	row.src_device_id = row.dst_device_id = (int32_t)m->deviceId;
	row.src_context_id = row.dst_context_id = (int32_t)m->contextId;
	row.graph_node_id = (int64_t)m->graphNodeId;
	prof_writer__memcpy(r->w, &row);
}

static void on_peer_copy(struct records *r, const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct prof_memcpy row = { 0 };

	if (copy_incomplete(r, m->start, m->end))
		return;
	row.start_ns = (int64_t)m->start;
	row.end_ns = (int64_t)m->end;
	row.device_id = (int32_t)m->deviceId;
	split_context(r, m->contextId, &row.context_id, &row.green_context_id);
	row.stream_id = (int32_t)m->streamId;
	row.correlation_id = (int32_t)m->correlationId;
	row.global_pid = prof_global_pid(r->pid);
	row.bytes = (int64_t)m->bytes;
	row.copy_kind = PROF_COPY_PTOP;
	row.src_kind = mapping__mem_kind(m->srcKind);
	row.dst_kind = mapping__mem_kind(m->dstKind);
	row.src_device_id = (int32_t)m->srcDeviceId;
	row.src_context_id = (int32_t)m->srcContextId;
	row.dst_device_id = (int32_t)m->dstDeviceId;
	row.dst_context_id = (int32_t)m->dstContextId;
	row.graph_node_id = (int64_t)m->graphNodeId;
	prof_writer__memcpy(r->w, &row);
}

static void on_memset(struct records *r, const CUpti_ActivityMemset4 *m)
{
	struct prof_memset row = { 0 };

	if (copy_incomplete(r, m->start, m->end))
		return;
	row.start_ns = (int64_t)m->start;
	row.end_ns = (int64_t)m->end;
	row.device_id = (int32_t)m->deviceId;
	split_context(r, m->contextId, &row.context_id, &row.green_context_id);
	row.stream_id = (int32_t)m->streamId;
	row.correlation_id = (int32_t)m->correlationId;
	row.global_pid = prof_global_pid(r->pid);
	row.value = (int32_t)m->value;
	row.bytes = (int64_t)m->bytes;
	row.graph_node_id = (int64_t)m->graphNodeId;
	row.mem_kind = mapping__mem_kind(m->memoryKind);
	prof_writer__memset(r->w, &row);
}

static void on_memory(struct records *r, const CUpti_ActivityMemory4 *m)
{
	struct prof_memory_event row = { 0 };
	int op = mapping__memory_operation(m->memoryOperationType);

	if (op < 0)
		return;
	row.start_ns = (int64_t)m->timestamp;
	row.global_pid = prof_global_pid(m->processId ? m->processId : r->pid);
	row.device_id = (int32_t)m->deviceId;
	row.context_id = (int32_t)m->contextId;
	row.address = m->address;
	row.pc = m->PC;
	row.bytes = (int64_t)m->bytes;
	row.mem_kind = mapping__mem_kind(m->memoryKind);
	row.operation = op;
	row.name_id = m->name ? prof_writer__string(r->w, m->name) : 0;
	row.correlation_id = (int32_t)m->correlationId;
	row.stream_id = (int32_t)m->streamId;
	prof_writer__memory(r->w, &row);
}

/* ---- API calls and synchronisation ---------------------------------------- */

/* A row of thread tid: its OS name is read the first time (thread_names.c). */
static void note_thread(struct records *r, uint32_t pid, uint32_t tid)
{
	if (!pid || pid == r->pid)
		thread_names__seen(r->threads, tid);
}

static void on_api(struct records *r, const CUpti_ActivityAPI *a, int driver)
{
	struct prof_api_call row = { 0 };
	uint32_t slot = a->correlationId & (CORR_CACHE_SIZE - 1);

	r->corr_cache[slot].corr = a->correlationId;
	r->corr_cache[slot].tid = a->threadId;
	row.start_ns = (int64_t)a->start;
	row.end_ns = (int64_t)a->end;
	row.event_class = 0;
	row.global_tid = prof_global_tid(a->processId ? a->processId : r->pid, a->threadId);
	note_thread(r, a->processId, a->threadId);
	row.correlation_id = (int32_t)a->correlationId;
	row.name_id = api_name(r, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
			       a->cbid);
	row.return_value = (int32_t)a->returnValue;
	prof_writer__api(r->w, driver ? PROF_API_DRIVER : PROF_API_RUNTIME, &row);
}

/* The thread of a sync row is that of its API call; 0 when not (yet) seen. */
static int sync_thread(struct records *r, struct prof_sync *s)
{
	uint32_t corr = (uint32_t)s->correlation_id;
	uint32_t slot = corr & (CORR_CACHE_SIZE - 1);

	if (r->corr_cache[slot].corr != corr || corr == 0)
		return 0;
	s->global_tid = prof_global_tid(r->pid, r->corr_cache[slot].tid);
	return 1;
}

static void on_sync(struct records *r, const CUpti_ActivitySynchronization2 *s)
{
	struct prof_sync row = { 0 };
	const struct ctx_info *c = ctx_find(r, s->contextId);

	row.start_ns = (int64_t)s->start;
	row.end_ns = (int64_t)s->end;
	row.device_id = c ? (int32_t)c->device_id : -1;
	row.context_id = (int32_t)s->contextId;
	row.stream_id = (int32_t)s->streamId;
	row.correlation_id = (int32_t)s->correlationId;
	row.global_tid = prof_global_pid(r->pid);
	row.event_id = (int64_t)s->cudaEventId;
	row.sync_type = mapping__sync_type(s->type);
	if (sync_thread(r, &row) ||
	    grow((void **)&r->pending_sync, &r->sync_cap, r->sync_used, sizeof(row)) < 0) {
		prof_writer__sync(r->w, &row);
		return;
	}
	r->pending_sync[r->sync_used++] = row;
}

/* After each buffer: sync rows whose API call has now been seen go out. */
static void retry_pending_sync(struct records *r, int final)
{
	size_t keep = 0;

	for (size_t i = 0; i < r->sync_used; i++) {
		struct prof_sync *s = &r->pending_sync[i];

		if (sync_thread(r, s) || final)
			prof_writer__sync(r->w, s);
		else
			r->pending_sync[keep++] = *s;
	}
	r->sync_used = keep;
}

/* ---- NVTX ------------------------------------------------------------------ */

static struct open_marker *marker_find(struct records *r, uint32_t id)
{
	for (size_t i = r->markers_used; i-- > 0;)
		if (r->markers[i].id == id)
			return &r->markers[i];
	return NULL;
}

static void marker_remove(struct records *r, struct open_marker *m)
{
	free((void *)m->ev.binary);
	*m = r->markers[--r->markers_used];
}

static int64_t domain_id(struct records *r, const char *domain, int64_t tid)
{
	struct prof_nvtx_event ev = { 0 };
	int64_t id;

	if (!domain)
		return 0;
	id = prof_writer__string(r->w, domain);
	for (size_t i = 0; i < r->domains_used; i++)
		if (r->domains[i] == id)
			return id;
	if (grow((void **)&r->domains, &r->domains_cap, r->domains_used, sizeof(id)) < 0)
		return id;
	r->domains[r->domains_used++] = id;
	/* nsys announces each domain once with a "domain create" row. */
	ev.event_type = PROF_NVTX_DOMAIN_CREATE;
	ev.start_ns = 0;
	ev.end_ns = -1;
	ev.global_tid = ev.end_global_tid = tid;
	ev.text_id = id;
	ev.domain_id = id;
	prof_writer__nvtx(r->w, &ev);
	return id;
}

int64_t records__nvtx_domain(struct records *r, const char *name, int64_t tid)
{
	return domain_id(r, name, tid);
}

static int64_t marker_tid(struct records *r, const CUpti_ActivityMarker2 *m)
{
	if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
		note_thread(r, m->objectId.pt.processId, m->objectId.pt.threadId);
		return prof_global_tid(m->objectId.pt.processId ? m->objectId.pt.processId : r->pid,
				       m->objectId.pt.threadId);
	}
	return prof_global_pid(r->pid);
}

static void on_marker(struct records *r, const CUpti_ActivityMarker2 *m)
{
	int64_t tid = marker_tid(r, m);
	struct open_marker *o;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		o = marker_find(r, m->id);
		if (!o || o->is_mark) {
			r->unpaired_markers++;
			return;
		}
		o->ev.end_ns = (int64_t)m->timestamp;
		o->ev.end_global_tid = tid;
		if (nvtx_kinds__is_start_end(m->id))
			o->ev.event_type = PROF_NVTX_STARTEND;
		prof_writer__nvtx(r->w, &o->ev);
		marker_remove(r, o);
		return;
	}
	if (!(m->flags & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)))
		return;
	if (grow((void **)&r->markers, &r->markers_cap, r->markers_used, sizeof(*r->markers)) < 0)
		return;
	o = &r->markers[r->markers_used++];
	memset(o, 0, sizeof(*o));
	o->id = m->id;
	/* Marks are written at the end of the buffer, after their colour. */
	o->is_mark = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
	o->ev.start_ns = (int64_t)m->timestamp;
	o->ev.end_ns = -1;
	/* A range is taken for push/pop until its END record shows it ended
	 * through nvtxRangeEnd (nvtx_kinds.c); the START record cannot tell. */
	o->ev.event_type = o->is_mark ? PROF_NVTX_MARK : PROF_NVTX_PUSHPOP;
	o->ev.range_id = m->id;
	o->ev.global_tid = o->ev.end_global_tid = tid;
	o->ev.text_id = m->name ? prof_writer__string(r->w, m->name) : 0;
	o->ev.domain_id = domain_id(r, m->domain, tid);
}

static void on_marker_data(struct records *r, const CUpti_ActivityMarkerData2 *d)
{
	struct open_marker *o = marker_find(r, d->id);

	if (d->payloadKind == CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD) {
		void *blob;
		size_t len;

		/* taken even without its marker: CUPTI's copy is ours to free */
		nvtx_payload__take(r->w, r->pid, o ? o->ev.domain_id : 0, d, &blob, &len);
		if (o && !o->ev.binary) {
			o->ev.binary = blob;
			o->ev.binary_len = len;
		} else {
			free(blob);
		}
	}
	if (!o)
		return;
	if (d->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB)
		o->ev.color = (int32_t)d->color;
	o->ev.category = (int32_t)d->category;
}

static void write_marks(struct records *r)
{
	for (size_t i = r->markers_used; i-- > 0;) {
		if (!r->markers[i].is_mark)
			continue;
		prof_writer__nvtx(r->w, &r->markers[i].ev);
		marker_remove(r, &r->markers[i]);
	}
}

static void on_name(struct records *r, const CUpti_ActivityName *n)
{
	if (n->objectKind != CUPTI_ACTIVITY_OBJECT_THREAD || !n->name)
		return;
	if (!n->objectId.pt.processId || n->objectId.pt.processId == r->pid)
		thread_names__nvtx(r->threads, n->objectId.pt.threadId);
	prof_writer__thread_name(r->w,
				 prof_global_tid(n->objectId.pt.processId ? n->objectId.pt.processId : r->pid,
						 n->objectId.pt.threadId),
				 n->name);
}

/* ---- device and overhead ----------------------------------------------------- */

static const char *chip_name(uint32_t major, uint32_t minor)
{
	static const struct { uint32_t major, minor; const char *chip; } chips[] = {
		{ 7, 0, "GV100" }, { 7, 5, "TU10x" }, { 8, 0, "GA100" }, { 8, 6, "GA10x" },
		{ 8, 7, "GA10B" }, { 8, 9, "AD10x" }, { 9, 0, "GH100" }, { 10, 0, "GB100" },
		{ 10, 3, "GB10x" }, { 12, 0, "GB20x" },
	};
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		if (chips[i].major == major && chips[i].minor == minor)
			return chips[i].chip;
	return NULL;
}

static void on_device(struct records *r, const CUpti_ActivityDevice5 *d)
{
	struct prof_gpu_info g = { 0 };
	const unsigned char *u = (const unsigned char *)d->uuid.bytes;
	char uuid[64];

	snprintf(uuid, sizeof(uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	g.id = (int32_t)d->id;
	g.name = d->name;
	g.bus_location = NULL; /* not in the DEVICE record */
	g.uuid = uuid;
	g.chip_name = chip_name(d->computeCapabilityMajor, d->computeCapabilityMinor);
	g.l2_cache_bytes = d->l2CacheSize;
	g.total_memory_bytes = (int64_t)d->globalMemorySize;
	g.memory_bandwidth_bytes_per_s = (int64_t)d->globalMemoryBandwidth * 1000; /* kB/s */
	g.clock_rate_hz = (int64_t)d->coreClockRate * 1000;                       /* kHz */
	g.sm_count = (int32_t)d->numMultiprocessors;
	g.compute_major = (int32_t)d->computeCapabilityMajor;
	g.compute_minor = (int32_t)d->computeCapabilityMinor;
	g.max_warps_per_sm = (int32_t)d->maxWarpsPerMultiprocessor;
	g.threads_per_warp = (int32_t)d->numThreadsPerWarp;
	g.max_blocks_per_sm = (int32_t)d->maxBlocksPerMultiprocessor;
	g.max_registers_per_sm = (int32_t)d->maxRegistersPerMultiprocessor;
	g.max_registers_per_block = (int32_t)d->maxRegistersPerBlock;
	g.max_shared_per_sm_bytes = d->maxSharedMemoryPerMultiprocessor;
	g.max_shared_per_block_bytes = d->maxSharedMemoryPerBlock;
	g.max_threads_per_block = (int32_t)d->maxThreadsPerBlock;
	prof_writer__gpu(r->w, &g);
	prof_writer__process_gpu(r->w, prof_global_pid(r->pid), g.id, uuid);
}

static const char *overhead_name(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI buffer flush";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI instrumentation";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resource";
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "module loading";
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy function loading";
	case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command buffer full";
	case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity buffer request";
	case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM activity init";
	default: return "unknown";
	}
}

static void on_overhead(struct records *r, const CUpti_ActivityOverhead3 *o)
{
	struct prof_overhead row = { 0 };

	row.start_ns = (int64_t)o->start;
	row.end_ns = (int64_t)o->end;
	row.global_tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
				 ? prof_global_tid(o->objectId.pt.processId ? o->objectId.pt.processId : r->pid,
						   o->objectId.pt.threadId)
				 : prof_global_pid(r->pid);
	row.name_id = prof_writer__string(r->w, overhead_name(o->overheadKind));
	prof_writer__overhead(r->w, &row);
}

/* A CUDA graph's launch (--cuda-graph-trace=graph): one row, its nodes
 * not recorded apart. Without GPU times it is counted, as a kernel is. */
static void on_graph_trace(struct records *r, const CUpti_ActivityGraphTrace2 *g)
{
	struct prof_graph_trace row = { 0 };
	int32_t green;

	if (!has_gpu_times(g->start, g->end)) {
		r->incomplete_kernels++;
		return;
	}
	row.start_ns = (int64_t)g->start;
	row.end_ns = (int64_t)g->end;
	row.device_id = (int32_t)g->deviceId;
	split_context(r, g->contextId, &row.context_id, &green);
	row.stream_id = (int32_t)g->streamId;
	row.correlation_id = (int32_t)g->correlationId;
	row.global_pid = prof_global_pid(r->pid);
	row.graph_id = (int32_t)g->graphId;
	prof_writer__graph_trace(r->w, &row);
}

/* ---- dispatch ----------------------------------------------------------------- */

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void records__buffer(struct records *r, uint8_t *buffer, size_t valid_bytes)
{
	CUpti_Activity *rec = NULL;

	if (!valid_bytes)
		return;
	while (cuptiActivityGetNextRecord(buffer, valid_bytes, &rec) == CUPTI_SUCCESS) {
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			on_kernel(r, (const CUpti_ActivityKernel10 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			on_memcpy(r, (const CUpti_ActivityMemcpy6 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			on_peer_copy(r, (const CUpti_ActivityMemcpyPtoP4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			on_memset(r, (const CUpti_ActivityMemset4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			on_memory(r, (const CUpti_ActivityMemory4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			on_api(r, (const CUpti_ActivityAPI *)rec, 0);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			on_api(r, (const CUpti_ActivityAPI *)rec, 1);
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			on_sync(r, (const CUpti_ActivitySynchronization2 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER:
			on_marker(r, (const CUpti_ActivityMarker2 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER_DATA:
			on_marker_data(r, (const CUpti_ActivityMarkerData2 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_NAME:
			on_name(r, (const CUpti_ActivityName *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			on_device(r, (const CUpti_ActivityDevice5 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_CONTEXT:
			on_context(r, (const CUpti_ActivityContext3 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_OVERHEAD:
			on_overhead(r, (const CUpti_ActivityOverhead3 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
			on_graph_trace(r, (const CUpti_ActivityGraphTrace2 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
			unified_memory__record(r->w, r->pid, rec);
			break;
		default:
			break;
		}
	}
	write_marks(r);
	retry_pending_sync(r, 0);
	thread_names__scan(r->threads, monotonic_ns());
	if (r->incomplete_kernels) {
		prof_writer__count(r->w, "incomplete_kernels", r->incomplete_kernels);
		r->incomplete_kernels = 0;
	}
	if (r->incomplete_copies) {
		prof_writer__count(r->w, "incomplete_copies", r->incomplete_copies);
		r->incomplete_copies = 0;
	}
	if (r->replayed_kernels) {
		prof_writer__count(r->w, "replayed_kernels", r->replayed_kernels);
		r->replayed_kernels = 0;
	}
}

void records__look_for_threads(struct records *r)
{
	thread_names__scan(r->threads, monotonic_ns());
}

void records__finish(struct records *r)
{
	size_t open_ranges = 0;

	write_marks(r);
	retry_pending_sync(r, 1);
	thread_names__write(r->threads, r->w);
	/* Ranges never closed (the program died inside them) have no end to
	 * store; they are counted so that a report can say so. */
	for (size_t i = 0; i < r->markers_used; i++) {
		if (!r->markers[i].is_mark)
			open_ranges++;
		free((void *)r->markers[i].ev.binary);
	}
	r->markers_used = 0;
	nvtx_payload__exit();
	if (open_ranges)
		prof_writer__count(r->w, "unclosed_nvtx_ranges", (int64_t)open_ranges);
	if (r->unpaired_markers)
		prof_writer__count(r->w, "unpaired_nvtx_ends", r->unpaired_markers);
	r->unpaired_markers = 0;
}
