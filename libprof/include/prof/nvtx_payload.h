/* nvtx_payload.h - NVTX extended payloads (the NVTX v3 payload extension)
 * as Nsight Systems exports them and perfkit's collector stores them.
 *
 * NVTX_EVENTS.binaryData holds a 32-byte header of four little-endian
 * 64-bit words (domain id, schema id, payload size, total size = 32 +
 * payload size) and then the payload's bytes, laid out as a schema of
 * NVTX_PAYLOAD_SCHEMAS says: its entries (NVTX_PAYLOAD_SCHEMA_ENTRIES:
 * name, type, offset) and, for an entry whose type is an enum registered as
 * a schema, the enum's names (NVTX_PAYLOAD_ENUM_ENTRIES). NCCL annotates
 * each of its calls this way ("NCCL communicator ID", "Message size
 * [bytes]", "Reduction operation", ...).
 *
 * A schema belongs to one domain of one process: perfkit keys it by
 * (globalPid, domainId, schemaId); an nsys export has no globalPid column,
 * and its schemas are keyed by (domainId, schemaId).
 *
 * Everything decoded here comes from a capture, which may be damaged or
 * written to harm: every read is checked against the blob's length and the
 * sizes the schema gives, nesting and field counts are bounded, and nothing
 * is read outside the blob. What cannot be decoded (pointers, variable
 * arrays, 128-bit numbers, unions) becomes a field of kind
 * PROF_PAYLOAD_UNDECODED, never a guess. */
#ifndef PROF_NVTX_PAYLOAD_H
#define PROF_NVTX_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/event.h"
#include "prof/store.h"

/* The NVTX_PAYLOAD_ENTRY_TYPE_* numbers of nvtx3/nvToolsExtPayload.h that
 * callers name (the decoder knows them all). A type at or above
 * PROF_PAYLOAD_SCHEMA_ID_STATIC_START is another schema's id: a nested
 * struct, or an enum. */
enum prof_payload_entry_type {
	PROF_PAYLOAD_TYPE_CHAR = 1,
	PROF_PAYLOAD_TYPE_INT = 5,
	PROF_PAYLOAD_TYPE_UINT64 = 18,
	PROF_PAYLOAD_TYPE_FLOAT = 19,
	PROF_PAYLOAD_TYPE_DOUBLE = 20,
	PROF_PAYLOAD_TYPE_SIZE = 22,
	PROF_PAYLOAD_TYPE_FLOAT16 = 42,
	PROF_PAYLOAD_TYPE_BF16 = 50,
	PROF_PAYLOAD_TYPE_CSTRING = 75,
	PROF_PAYLOAD_TYPE_CSTRING_UTF8 = 76,
};
#define PROF_PAYLOAD_SCHEMA_ID_STATIC_START ((uint64_t)1 << 24)
/* NVTX_PAYLOAD_ENTRY_FLAG_*: the ones the decoder reads. */
#define PROF_PAYLOAD_FLAG_POINTER (1u << 1)
#define PROF_PAYLOAD_FLAG_ARRAY_FIXED_SIZE (1u << 4)
#define PROF_PAYLOAD_FLAG_ARRAY_ZERO_TERMINATED (2u << 4)
/* NVTX_PAYLOAD_SCHEMA_TYPE_*: static (fixed layout) and dynamic. */
#define PROF_PAYLOAD_SCHEMA_STATIC 1
#define PROF_PAYLOAD_SCHEMA_DYNAMIC 2

/* Limits on what one blob may expand to. */
#define PROF_PAYLOAD_MAX_FIELDS 128
#define PROF_PAYLOAD_MAX_DEPTH 4
#define PROF_PAYLOAD_NAME_MAX 96
#define PROF_PAYLOAD_TEXT_MAX 256

/* Read a blob's header: 0, or PROF_E_CORRUPT when the blob is shorter than
 * a header or its sizes disagree with its length. */
int prof_nvtx_blob__header(const void *blob, size_t len, struct prof_nvtx_blob_header *h);
/* Lay out a blob in buf: the header, then payload_size bytes of payload.
 * Returns its length (PROF_NVTX_BLOB_HEADER + payload_size), or 0 when it
 * does not fit in cap. */
size_t prof_nvtx_payload__blob(void *buf, size_t cap, uint64_t domain_id, uint64_t schema_id,
			       const void *payload, size_t payload_size);

/* ---- schemas ------------------------------------------------------------ */

struct prof_payload_schemas;

/* An empty set, filled row by row with the writer's structs (the loader
 * does that; so do the tests and the fuzz harness). global_pid < 0: the
 * row belongs to no process (an nsys export). */
int prof_payload_schemas__new(struct prof_payload_schemas **out);
int prof_payload_schemas__add_schema(struct prof_payload_schemas *ps,
				     const struct prof_payload_schema *s);
int prof_payload_schemas__add_entry(struct prof_payload_schemas *ps,
				    const struct prof_payload_entry *e);
int prof_payload_schemas__add_enum_entry(struct prof_payload_schemas *ps,
					 const struct prof_payload_enum_entry *e);
/* Every schema, entry and enum value of the store (an empty set when it has
 * none: captures older than these tables, exports of programs without
 * payloads). */
int prof_payload_schemas__load(struct prof_store *s, struct prof_payload_schemas **out,
			       struct prof_error *err);
/* Schemas (and enums) in the set. */
size_t prof_payload_schemas__count(const struct prof_payload_schemas *ps);
void prof_payload_schemas__delete(struct prof_payload_schemas *ps);

/* ---- decoding ------------------------------------------------------------ */

enum prof_payload_kind {
	PROF_PAYLOAD_INT,       /* i */
	PROF_PAYLOAD_UINT,      /* u */
	PROF_PAYLOAD_FLOAT,     /* d */
	PROF_PAYLOAD_STRING,    /* text: a fixed-length or zero-terminated char array */
	PROF_PAYLOAD_ENUM,      /* u (and i), text: the value's name, NULL when the enum lacks it */
	PROF_PAYLOAD_UNDECODED, /* a pointer, a variable array, a 128-bit number, a union */
};

struct prof_payload_field {
	char name[PROF_PAYLOAD_NAME_MAX]; /* the entry's name; nested: "outer.inner" */
	enum prof_payload_kind kind;
	int64_t i;
	uint64_t u;
	double d;
	char *text; /* malloc'd; the bytes as they are (escape for the sink) */
};

struct prof_payload {
	uint64_t domain_id, schema_id;
	char *schema_name;               /* malloc'd; NULL when the schema has none */
	struct prof_payload_field *fields;
	int nfields;
	bool fields_left_out;            /* past PROF_PAYLOAD_MAX_FIELDS or the nesting depth */
};

/* Decode blob (NVTX_EVENTS.binaryData of a process, global_pid; < 0 when
 * unknown) with the set's schema for it. Returns 0 with *out filled, 1 when
 * the set has no schema for the blob (out empty: not an error), or a
 * negative code: PROF_E_CORRUPT (message in err) for a blob whose header
 * cannot be read or whose schema does not fit it, PROF_E_NOMEM. *out is
 * always safe to pass to prof_payload__exit. */
int prof_payload__decode(const struct prof_payload_schemas *ps, int64_t global_pid,
			 const void *blob, size_t len, struct prof_payload *out,
			 struct prof_error *err);
void prof_payload__exit(struct prof_payload *p);
/* The field called name, or NULL. */
const struct prof_payload_field *prof_payload__find(const struct prof_payload *p,
						    const char *name);
/* A field's value as a signed integer (INT, UINT up to INT64_MAX, ENUM);
 * false for the other kinds or a value that does not fit. */
bool prof_payload_field__int(const struct prof_payload_field *f, int64_t *v);

#endif
