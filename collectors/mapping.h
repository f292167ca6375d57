/* mapping.h - pure conversions from CUPTI's numbering and records to the
 * store's.
 *
 * Kept free of CUPTI headers so the unit tests link them on machines without
 * CUDA: the arguments are the raw integers CUPTI puts in its records. */
#ifndef PERFKIT_MAPPING_H
#define PERFKIT_MAPPING_H

#include <stddef.h>
#include <stdint.h>

/* CUpti_ActivityMemoryKind (0 unknown, 1 pageable, ...) -> enum prof_mem_kind
 * (0 pageable, ..., 7 unknown). */
int mapping__mem_kind(uint32_t cupti_kind);
/* CUpti_ActivityMemcpyKind -> enum prof_copy_kind (same numbers up to PtoP;
 * anything newer is unknown). */
int mapping__copy_kind(uint32_t cupti_kind);
/* CUpti_ActivityMemoryOperationType (1 allocation, 2 release) -> the
 * memoryOperationType column (0 allocation, 1 deallocation); -1 invalid. */
int mapping__memory_operation(uint32_t cupti_op);
/* CUpti_ActivitySynchronizationType -> enum prof_sync_type. */
int mapping__sync_type(uint32_t cupti_type);

/* CUpti_ActivityUnifiedMemoryCounterKind of a migration (1 host to
 * device, 2 device to host, 8 device to device) -> its copy kind
 * (PROF_COPY_UVM_*), as nsys stores migrations among the copies; -1 for
 * the counters that are not migrations (faults, thrashing, ...). */
int mapping__um_copy_kind(uint32_t counter_kind);

/* The short name of a kernel as nsys shows it: the demangled name without
 * return type, scope, template arguments and parameter list
 * ("void ns::k<int>(float*)" -> "k"). Writes at most cap bytes, always
 * NUL-terminated; a name it cannot take apart is copied whole. */
void mapping__short_name(const char *demangled, char *dst, size_t cap);

/* The PM samples lost between two of one sampler's samples, which end at
 * prev_end_ns and end_ns, sampling every interval_ns. Only a sample's end
 * is stored, so a run of samples the hardware buffer had no room for would
 * read as one long period. Periods jitter by tens of ns about the interval,
 * so the gap counts in whole intervals, rounded: a gap of 1.5 intervals or
 * more lost one sample. prev_end_ns 0 (the sampler's first sample) loses none. */
int64_t mapping__samples_dropped(uint64_t prev_end_ns, uint64_t end_ns, uint64_t interval_ns);

/* The typeId of a device's PM sampler (GPU_METRICS): the device in the low
 * 8 bits, as readers take it, and above them how many times the process
 * opened that device's sampler before. A sampler closed with the device's
 * last context and opened again by a later one is a new series, so that
 * readers do not take the time it was closed for a sample period. */
int64_t mapping__sampler_type_id(int device, int opened_before);

#endif
