/* nvtx_payload.c - NVTX extended payloads (NVTX v3.2 payload extension,
 * what NCCL attaches to each of its calls) as nsys stores them: each
 * payload as NVTX_EVENTS.binaryData, and the schemas that describe it in
 * NVTX_PAYLOAD_SCHEMAS / _SCHEMA_ENTRIES / _ENUM_ENTRIES, written once per
 * domain and schema.
 *
 * CUPTI does the NVTX side (cuptiNvtxExtensionInitialize, through our
 * InitializeInjectionNvtxExtension): a MARKER_DATA record of payload kind
 * NVTX_EXTENDED_PAYLOAD carries a copy of the nvtxPayloadData_t and its
 * bytes, malloc'd by CUPTI for us to free, and cuptiActivityGetNvtxExtPayloadAttr
 * gives a schema's attributes by CUPTI's domain id. Entries whose offset
 * the program left for the tool to compute (0 after the first) are laid out
 * here with the C ABI's sizes and alignments, as NVTX specifies, so readers
 * find every offset in the table. Writer thread only. */
#include "collector.h"

#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "prof/event.h"
#include "prof/store.h"

/* In libcupti 13.0 but not yet in its headers. */
CUptiResult CUPTIAPI cuptiActivityGetNvtxExtPayloadAttr(uint32_t cuptiDomainId, uint64_t schemaId,
							CUpti_NvtxExtPayloadAttr *pPayloadAttributes);
const nvtxPayloadEntryTypeInfo_t *CUPTIAPI cuptiActivityGetNvtxExtPayloadEntryTypeInfo(void);

/* Nested schemas are followed this deep (and no deeper: a schema that
 * names itself must not loop). */
#define MAX_DEPTH 6
_Static_assert(sizeof(struct prof_nvtx_blob_header) == PROF_NVTX_BLOB_HEADER,
	       "the blob header is four 64-bit words");
#define SIZE_UNKNOWN ((uint64_t)-1)

struct known {
	int64_t domain_id;
	uint64_t schema_id;
	uint64_t size, align; /* SIZE_UNKNOWN when not static */
};

static struct {
	struct known *k;
	size_t used, cap;
	const nvtxPayloadEntryTypeInfo_t *types; /* types[0].size is the array's length */
} np;

static struct known *known_find(int64_t domain_id, uint64_t schema_id)
{
	for (size_t i = 0; i < np.used; i++)
		if (np.k[i].domain_id == domain_id && np.k[i].schema_id == schema_id)
			return &np.k[i];
	return NULL;
}

static struct known *known_add(int64_t domain_id, uint64_t schema_id)
{
	if (np.used == np.cap) {
		size_t ncap = np.cap ? np.cap * 2 : 32;
		struct known *p = realloc(np.k, ncap * sizeof(*p));

		if (!p)
			return NULL;
		np.k = p;
		np.cap = ncap;
	}
	np.k[np.used] = (struct known){ domain_id, schema_id, SIZE_UNKNOWN, SIZE_UNKNOWN };
	return &np.k[np.used++];
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

static void write_schema(struct prof_writer *w, int64_t gpid, uint32_t cupti_domain,
			 int64_t domain_id, uint64_t schema_id, int depth);

/* Size and alignment of one entry's type; SIZE_UNKNOWN for what has none
 * (variable-length data, unknown types). */
static void entry_layout(struct prof_writer *w, int64_t gpid, uint32_t cupti_domain,
			 int64_t domain_id, const nvtxPayloadSchemaEntry_t *e, int depth,
			 uint64_t *size, uint64_t *align)
{
	uint64_t t = e->type;

	*size = *align = SIZE_UNKNOWN;
	if (e->flags)
		return; /* arrays, pointers, deep copies: not laid out here */
	if (t < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START) {
		if (!np.types)
			np.types = cuptiActivityGetNvtxExtPayloadEntryTypeInfo();
		if (np.types && t > 0 && t < NVTX_PAYLOAD_ENTRY_TYPE_INFO_ARRAY_SIZE &&
		    t < np.types[0].size && np.types[t].size) {
			*size = np.types[t].size;
			*align = np.types[t].align;
		} else if (t >= NVTX_PAYLOAD_ENTRY_TYPE_CSTRING &&
			   t <= NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32 && e->arrayOrUnionDetail) {
			uint64_t unit = t == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF16 ? 2
					: t == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32 ? 4 : 1;

			*size = unit * e->arrayOrUnionDetail; /* a fixed-size string */
			*align = unit;
		} else if (t == NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE) {
			*size = *align = sizeof(void *);
		}
		return;
	}
	write_schema(w, gpid, cupti_domain, domain_id, t, depth + 1);
	{
		const struct known *k = known_find(domain_id, t);

		if (k) {
			*size = k->size;
			*align = k->align;
		}
	}
}

static void write_enum(struct prof_writer *w, int64_t gpid, int64_t domain_id, uint64_t id,
		       const nvtxPayloadEnumAttr_t *a, struct known *k)
{
	struct prof_payload_schema row = { .global_pid = gpid, .domain_id = (uint64_t)domain_id,
					   .schema_id = id, .name = a->name, .type = 0,
					   .num_entries = a->numEntries,
					   .payload_size = a->sizeOfEnum };

	prof_writer__payload_schema(w, &row);
	for (size_t i = 0; a->entries && i < a->numEntries; i++) {
		struct prof_payload_enum_entry e = { .global_pid = gpid,
						     .domain_id = (uint64_t)domain_id,
						     .schema_id = id, .idx = i,
						     .name = a->entries[i].name,
						     .value = a->entries[i].value,
						     .is_flag = a->entries[i].isFlag };

		prof_writer__payload_enum_entry(w, &e);
	}
	k->size = k->align = a->sizeOfEnum ? a->sizeOfEnum : SIZE_UNKNOWN;
}

static void write_struct(struct prof_writer *w, int64_t gpid, uint32_t cupti_domain,
			 int64_t domain_id, uint64_t id, const nvtxPayloadSchemaAttr_t *a,
			 struct known *k, int depth)
{
	struct prof_payload_schema row = { .global_pid = gpid, .domain_id = (uint64_t)domain_id,
					   .schema_id = id, .name = a->name, .type = a->type,
					   .flags = a->flags, .num_entries = a->numEntries,
					   .payload_size = a->payloadStaticSize,
					   .align_to = a->packAlign };
	uint64_t at = 0, max_align = 1;
	int laid_out = a->type == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;

	for (size_t i = 0; a->entries && i < a->numEntries; i++) {
		const nvtxPayloadSchemaEntry_t *src = &a->entries[i];
		struct prof_payload_entry e = { .global_pid = gpid, .domain_id = (uint64_t)domain_id,
						.schema_id = id, .idx = i, .flags = src->flags,
						.type = src->type, .name = src->name,
						.description = src->description,
						.array_or_union_detail = src->arrayOrUnionDetail,
						.offset = src->offset };
		uint64_t size, align;

		entry_layout(w, gpid, cupti_domain, domain_id, src, depth, &size, &align);
		if (laid_out && size != SIZE_UNKNOWN) {
			/* an offset given is kept; 0 after the first means "next" */
			e.offset = (i && !src->offset) ? align_up(at, align) : src->offset;
			at = e.offset + size;
			if (align > max_align)
				max_align = align;
		} else {
			laid_out = 0;
		}
		prof_writer__payload_entry(w, &e);
	}
	if (laid_out) {
		if (!row.payload_size)
			row.payload_size = align_up(at, a->packAlign ? a->packAlign : max_align);
		if (!row.align_to)
			row.align_to = max_align;
		k->size = row.payload_size;
		k->align = row.align_to;
	}
	prof_writer__payload_schema(w, &row);
}

/* Write a schema (or enum) the first time it is seen, and those its
 * entries name. */
static void write_schema(struct prof_writer *w, int64_t gpid, uint32_t cupti_domain,
			 int64_t domain_id, uint64_t schema_id, int depth)
{
	CUpti_NvtxExtPayloadAttr attr = { .structSize = sizeof(attr) };
	struct known *k;

	if (depth > MAX_DEPTH || schema_id < NVTX_PAYLOAD_SCHEMA_ID_STATIC_START ||
	    known_find(domain_id, schema_id))
		return;
	k = known_add(domain_id, schema_id);
	if (!k || cuptiActivityGetNvtxExtPayloadAttr(cupti_domain, schema_id, &attr) != CUPTI_SUCCESS ||
	    !attr.attributes)
		return;
	if (attr.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_SCHEMA) {
		nvtxPayloadSchemaAttr_t *a = attr.attributes;

		write_struct(w, gpid, cupti_domain, domain_id, schema_id, a, k, depth);
		free((void *)a->entries);
	} else if (attr.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_ENUM) {
		nvtxPayloadEnumAttr_t *a = attr.attributes;

		write_enum(w, gpid, domain_id, schema_id, a, k);
		free((void *)a->entries);
	}
	free(attr.attributes);
}

int nvtx_payload__take(struct prof_writer *w, uint32_t pid, int64_t domain_id,
		       const void *marker_data, void **blob, size_t *len)
{
	const CUpti_ActivityMarkerData2 *d = marker_data;
	nvtxPayloadData_t *p = (nvtxPayloadData_t *)(uintptr_t)d->payload.metricValueNvtxExtendedPayload;
	struct prof_nvtx_blob_header h;
	uint8_t *out = NULL;

	*blob = NULL;
	*len = 0;
	if (!p)
		return 0;
	if (p->payload && p->size && p->size < (1u << 30) && (out = malloc(PROF_NVTX_BLOB_HEADER + p->size))) {
		h.domain_id = (uint64_t)domain_id;
		h.schema_id = p->schemaId;
		h.payload_size = p->size;
		h.total_size = PROF_NVTX_BLOB_HEADER + p->size;
		/* little-endian words, as nsys writes them (this is x86-64/aarch64) */
		memcpy(out, &h, sizeof h);
		memcpy(out + PROF_NVTX_BLOB_HEADER, p->payload, p->size);
		*blob = out;
		*len = PROF_NVTX_BLOB_HEADER + p->size;
		write_schema(w, prof_global_pid(pid), d->cuptiDomainId, domain_id, p->schemaId, 0);
	}
	free((void *)p->payload);
	free(p);
	return out ? 1 : 0;
}

void nvtx_payload__exit(void)
{
	free(np.k);
	np.k = NULL;
	np.used = np.cap = 0;
}
