/* nvtx_kinds.c - tells start/end NVTX ranges from push/pop ones.
 *
 * CUPTI's MARKER records look the same for nvtxRangePush and nvtxRangeStart
 * (both START, both on the calling thread), but the two styles mean different
 * things to a reader: push/pop nests on one thread, start/end may cross
 * threads. The NVTX callback of nvtxRangeEnd receives the range id that the
 * END marker record later carries, so the callback notes the id here and the
 * writer thread asks when that END record arrives.
 *
 * Application threads write and the writer thread reads, without a lock: a
 * direct-mapped table of ids, indexed by the id's low bits (1 MB). Marker ids
 * count up, so an entry is overwritten only by the id SLOTS ranges later: a
 * start/end range is taken for push/pop only if 262,144 further ranges end
 * before the writer reaches its END record, several writer intervals' worth
 * at any realistic rate. CUPTI runs the callback inside nvtxRangeEnd, before
 * the END record can be in a completed buffer. */
#include "collector.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

#define SLOTS (1u << 18)

static _Atomic uint32_t ended_by_range_end[SLOTS];

void nvtx_kinds__on_callback(int domain, uint32_t cbid, const void *data)
{
	const CUpti_NvtxData *nvtx = data;
	uint64_t id;

	if (domain != (int)CUPTI_CB_DOMAIN_NVTX || !nvtx->functionParams)
		return;
	if (cbid == CUPTI_CBID_NVTX_nvtxRangeEnd)
		id = ((const nvtxRangeEnd_params *)nvtx->functionParams)->id;
	else if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd)
		id = ((const nvtxDomainRangeEnd_params *)nvtx->functionParams)->core.id;
	else
		return;
	/* Marker ids are 32-bit; stored as id + 1 so that an empty slot (0)
	 * never matches id 0. */
	atomic_store_explicit(&ended_by_range_end[id % SLOTS], (uint32_t)id + 1u, memory_order_release);
}

void nvtx_kinds__enable(void *subscriber)
{
	cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangeEnd);
	cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangeEnd);
}

int nvtx_kinds__is_start_end(uint64_t marker_id)
{
	return atomic_load_explicit(&ended_by_range_end[marker_id % SLOTS], memory_order_acquire) ==
	       (uint32_t)marker_id + 1u;
}
