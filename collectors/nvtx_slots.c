/* nvtx_slots.c - the NVTX function slots that hold CUPTI's handlers.
 *
 * CUPTI is NVTX's injection (inject.c hands each NVTX instance's
 * initialisation on to it), and writes its handlers into the instance's
 * function tables. When perfkit detaches CUPTI after a capture window
 * (cuptiFinalize), the handlers stay in those tables and their state is
 * gone: the program's next NVTX call crashed (H100, driver 580). So each
 * table is recorded when its instance initialises, and emptied before a
 * detach: NVTX calls nothing through an empty core slot and skips an
 * extension slot marked disabled, so the program's NVTX calls cost
 * nothing from then on. */
#include "collector.h"

#include <pthread.h>
#include <stdint.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

/* An extension slot's states below any function's address, as NVTX's
 * implementation (nvtxExtImpl.h, left out here) defines them: fresh 0,
 * disabled 1, starting 2, loaded 3. */
#define EXT_SLOT_DISABLED 1
#define EXT_SLOT_LAST_STATE 3

/* a program loads few libraries with NVTX in them */
#define MAX_TABLES 256
#define MAX_SEGMENTS 64

static struct {
	pthread_mutex_t lock;
	struct {
		NvtxFunctionTable slots; /* slots[1..n] point at the function pointers */
		unsigned n;
	} tables[MAX_TABLES];
	size_t n_tables;
	struct {
		intptr_t *slots;
		size_t n;
	} segments[MAX_SEGMENTS];
	size_t n_segments;
} ns = { .lock = PTHREAD_MUTEX_INITIALIZER };

void nvtx_slots__record(void *get_export_table)
{
	const void *(NVTX_API *get)(uint32_t);
	const NvtxExportTableCallbacks *cb;

	*(void **)&get = get_export_table;
	cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	if (!cb || !cb->GetModuleFunctionTable)
		return;
	pthread_mutex_lock(&ns.lock);
	for (int m = NVTX_CB_MODULE_CORE; m < NVTX_CB_MODULE_SIZE && ns.n_tables < MAX_TABLES; m++) {
		NvtxFunctionTable t = NULL;
		unsigned n = 0;

		if (cb->GetModuleFunctionTable((NvtxCallbackModule)m, &t, &n) && t && n) {
			ns.tables[ns.n_tables].slots = t;
			ns.tables[ns.n_tables].n = n;
			ns.n_tables++;
		}
	}
	pthread_mutex_unlock(&ns.lock);
}

void nvtx_slots__record_extension(void *module_info)
{
	const nvtxExtModuleInfo_t *info = module_info;

	if (!info || !info->segments)
		return;
	pthread_mutex_lock(&ns.lock);
	for (size_t i = 0; i < info->segmentsCount && ns.n_segments < MAX_SEGMENTS; i++) {
		if (!info->segments[i].functionSlots)
			continue;
		ns.segments[ns.n_segments].slots = info->segments[i].functionSlots;
		ns.segments[ns.n_segments].n = info->segments[i].slotCount;
		ns.n_segments++;
	}
	pthread_mutex_unlock(&ns.lock);
}

void nvtx_slots__empty(void)
{
	pthread_mutex_lock(&ns.lock);
	for (size_t t = 0; t < ns.n_tables; t++)
		for (unsigned i = 1; i <= ns.tables[t].n; i++)
			if (ns.tables[t].slots[i])
				__atomic_store_n(ns.tables[t].slots[i], (NvtxFunctionPointer)0, __ATOMIC_RELEASE);
	/* an extension's slots: a function, or its state (fresh, disabled,
	 * starting, loaded: small numbers), which stays */
	for (size_t s = 0; s < ns.n_segments; s++)
		for (size_t i = 0; i < ns.segments[s].n; i++)
			if (ns.segments[s].slots[i] > EXT_SLOT_LAST_STATE)
				__atomic_store_n(&ns.segments[s].slots[i], (intptr_t)EXT_SLOT_DISABLED,
						 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ns.lock);
}
