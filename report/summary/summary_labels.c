/* summary_labels.c - display names for nsys enum values and API names, as
 * `nsys stats` prints them. */
#include "summary_impl.h"

#include <ctype.h>
#include <string.h>

static const char *const copy_directions[] = {
	[PROF_COPY_UNKNOWN] = "Unknown",
	[PROF_COPY_HTOD] = "Host-to-Device",
	[PROF_COPY_DTOH] = "Device-to-Host",
	[PROF_COPY_HTOA] = "Host-to-Array",
	[PROF_COPY_ATOH] = "Array-to-Host",
	[PROF_COPY_ATOA] = "Array-to-Array",
	[PROF_COPY_ATOD] = "Array-to-Device",
	[PROF_COPY_DTOA] = "Device-to-Array",
	[PROF_COPY_DTOD] = "Device-to-Device",
	[PROF_COPY_HTOH] = "Host-to-Host",
	[PROF_COPY_PTOP] = "Peer-to-Peer",
	[PROF_COPY_UVM_HTOD] = "Unified Host-to-Device",
	[PROF_COPY_UVM_DTOH] = "Unified Device-to-Host",
	[PROF_COPY_UVM_DTOD] = "Unified Device-to-Device",
};

static const char *const copy_operations[] = {
	[PROF_COPY_UNKNOWN] = "[CUDA memcpy Unknown]",
	[PROF_COPY_HTOD] = "[CUDA memcpy Host-to-Device]",
	[PROF_COPY_DTOH] = "[CUDA memcpy Device-to-Host]",
	[PROF_COPY_HTOA] = "[CUDA memcpy Host-to-Array]",
	[PROF_COPY_ATOH] = "[CUDA memcpy Array-to-Host]",
	[PROF_COPY_ATOA] = "[CUDA memcpy Array-to-Array]",
	[PROF_COPY_ATOD] = "[CUDA memcpy Array-to-Device]",
	[PROF_COPY_DTOA] = "[CUDA memcpy Device-to-Array]",
	[PROF_COPY_DTOD] = "[CUDA memcpy Device-to-Device]",
	[PROF_COPY_HTOH] = "[CUDA memcpy Host-to-Host]",
	[PROF_COPY_PTOP] = "[CUDA memcpy Peer-to-Peer]",
	[PROF_COPY_UVM_HTOD] = "[CUDA memcpy Unified Host-to-Device]",
	[PROF_COPY_UVM_DTOH] = "[CUDA memcpy Unified Device-to-Host]",
	[PROF_COPY_UVM_DTOD] = "[CUDA memcpy Unified Device-to-Device]",
};

static const char *const mem_kinds[] = {
	[PROF_MEM_PAGEABLE] = "Pageable",
	[PROF_MEM_PINNED] = "Pinned",
	[PROF_MEM_DEVICE] = "Device",
	[PROF_MEM_ARRAY] = "Array",
	[PROF_MEM_MANAGED] = "Managed",
	[PROF_MEM_DEVICE_STATIC] = "Device Static",
	[PROF_MEM_MANAGED_STATIC] = "Managed Static",
	[PROF_MEM_UNKNOWN] = "Unknown",
};

#define NELEM(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

const char *sum_copy_operation(int64_t copy_kind)
{
	return copy_kind >= 0 && copy_kind < NELEM(copy_operations) ? copy_operations[copy_kind]
								   : copy_operations[0];
}

const char *sum_copy_direction(int64_t copy_kind)
{
	return copy_kind >= 0 && copy_kind < NELEM(copy_directions) ? copy_directions[copy_kind]
								   : copy_directions[0];
}

const char *sum_mem_kind(int64_t mem_kind)
{
	return mem_kind >= 0 && mem_kind < NELEM(mem_kinds) ? mem_kinds[mem_kind]
							     : mem_kinds[PROF_MEM_UNKNOWN];
}

size_t sum_api_name_len(const char *name)
{
	size_t len = strlen(name), i = len;

	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i < len && i >= 3 && name[i - 1] == 'v' && name[i - 2] == '_')
		return i - 2;
	return len;
}
