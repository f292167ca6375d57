/* names.c - display names for nsys enum values and API names: as
 * `nsys stats` prints them, and the short forms the trace, diff and
 * diagnose use (names.h). */
#include "model/names.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* One row per ENUM_CUDA_MEMCPY_OPER value: how nsys stats names the
 * direction, and the short form traces and offender lists use. */
struct copy_label {
	const char *direction, *operation, *abbrev;
};

#define COPY(kind, dir, abbr) [PROF_COPY_##kind] = { dir, "[CUDA memcpy " dir "]", abbr }
static const struct copy_label copy_labels[] = {
	COPY(UNKNOWN, "Unknown", NULL),
	COPY(HTOD, "Host-to-Device", "HtoD"), COPY(DTOH, "Device-to-Host", "DtoH"),
	COPY(HTOA, "Host-to-Array", "HtoA"), COPY(ATOH, "Array-to-Host", "AtoH"),
	COPY(ATOA, "Array-to-Array", "AtoA"), COPY(ATOD, "Array-to-Device", "AtoD"),
	COPY(DTOA, "Device-to-Array", "DtoA"), COPY(DTOD, "Device-to-Device", "DtoD"),
	COPY(HTOH, "Host-to-Host", "HtoH"), COPY(PTOP, "Peer-to-Peer", "PtoP"),
	COPY(UVM_HTOD, "Unified Host-to-Device", "UVM HtoD"),
	COPY(UVM_DTOH, "Unified Device-to-Host", "UVM DtoH"),
	COPY(UVM_DTOD, "Unified Device-to-Device", "UVM DtoD"),
};
#undef COPY

/* One row per ENUM_CUDA_MEM_KIND value: the nsys name, and the word running
 * text uses for the kinds a copy moves between in practice. */
static const struct {
	const char *name, *word;
} mem_labels[] = {
	[PROF_MEM_PAGEABLE] = { "Pageable", "pageable" },
	[PROF_MEM_PINNED] = { "Pinned", "pinned" },
	[PROF_MEM_DEVICE] = { "Device", "device" },
	[PROF_MEM_ARRAY] = { "Array", NULL },
	[PROF_MEM_MANAGED] = { "Managed", "managed" },
	[PROF_MEM_DEVICE_STATIC] = { "Device Static", NULL },
	[PROF_MEM_MANAGED_STATIC] = { "Managed Static", NULL },
	[PROF_MEM_UNKNOWN] = { "Unknown", NULL },
};

#define NELEM(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* Values outside the enum read as its "unknown" entry. */
static const struct copy_label *copy_label(int64_t copy_kind)
{
	return &copy_labels[copy_kind >= 0 && copy_kind < NELEM(copy_labels) ? copy_kind
									    : PROF_COPY_UNKNOWN];
}

const char *sum_copy_operation(int64_t copy_kind)
{
	return copy_label(copy_kind)->operation;
}

const char *sum_copy_direction(int64_t copy_kind)
{
	return copy_label(copy_kind)->direction;
}

const char *sum_copy_short(int64_t copy_kind)
{
	return copy_label(copy_kind)->abbrev;
}

const char *sum_mem_kind(int64_t mem_kind)
{
	return mem_labels[mem_kind >= 0 && mem_kind < NELEM(mem_labels) ? mem_kind : PROF_MEM_UNKNOWN]
		.name;
}

const char *sum_mem_word(int64_t mem_kind)
{
	return mem_kind >= 0 && mem_kind < NELEM(mem_labels) ? mem_labels[mem_kind].word : NULL;
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

void sum_graph_launch_name(char *buf, size_t cap, bool id_known, int64_t graph_id)
{
	if (id_known)
		snprintf(buf, cap, "CUDA graph %" PRId64 " (nodes not recorded)", graph_id);
	else
		snprintf(buf, cap, "CUDA graph (id and nodes not recorded)");
}
