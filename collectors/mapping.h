/* mapping.h - pure conversions from CUPTI's numbering to the store's.
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

/* The short name of a kernel as nsys shows it: the demangled name without
 * return type, scope, template arguments and parameter list
 * ("void ns::k<int>(float*)" -> "k"). Writes at most cap bytes, always
 * NUL-terminated; a name it cannot take apart is copied whole. */
void mapping__short_name(const char *demangled, char *dst, size_t cap);

#endif
