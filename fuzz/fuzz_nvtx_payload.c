/* fuzz_nvtx_payload.c - the NVTX payload decoder (prof/nvtx_payload.h) on
 * schemas and blobs made of the input: the schema rows a capture's three
 * NVTX_PAYLOAD_* tables could hold, then one NVTX_EVENTS.binaryData blob.
 * The decoder must never read past the blob (ASan sees it), and what it
 * yields stays inside its limits.
 *
 * The input is records, each led by a byte whose value mod 4 says what
 * follows, until that value is 3 or the input ends:
 *
 *   0 schema   id, type, payload size (2 bytes, little-endian)
 *   1 entry    id, idx, type, flags, offset (2 bytes), array length (2 bytes)
 *   2 enum     id, value
 *   3 blob     flag, then the rest: with an even flag the harness writes
 *              the header for the rest as payload of the next byte's schema
 *              id; with an odd one the rest is the whole blob, header and all
 *
 * An id byte is the schema id NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + id; an
 * entry's type byte below 128 is a predefined type, from 128 the schema
 * STATIC_START + (type - 128). Everything is in domain 7 of one process. */
#include <string.h>

#include "fuzz.h"
#include "prof/nvtx_payload.h"

#define DOMAIN 7
#define PID ((int64_t)1234 << 24)

static const char *const names[] = {
	"NCCL communicator ID", "Message size [bytes]", "Reduction operation", "Peer rank",
	"Rank", "No. of ranks", NULL, "",
};

struct input {
	const uint8_t *p;
	size_t n;
};

static bool take(struct input *in, size_t n, const uint8_t **out)
{
	if (in->n < n)
		return false;
	*out = in->p;
	in->p += n;
	in->n -= n;
	return true;
}

static uint64_t schema_id(uint8_t b)
{
	return PROF_PAYLOAD_SCHEMA_ID_STATIC_START + b;
}

/* Add the record at in; false at the blob or the input's end. */
static bool add_record(struct prof_payload_schemas *ps, struct input *in, int *blob_kind)
{
	const uint8_t *r, *k;

	if (!take(in, 1, &k))
		return false;
	switch (k[0] % 4) {
	case 0:
		if (!take(in, 4, &r))
			return false;
		{
			struct prof_payload_schema s = { .global_pid = PID, .domain_id = DOMAIN,
							 .schema_id = schema_id(r[0]), .type = r[1] % 4,
							 .payload_size = (uint64_t)r[2] | (uint64_t)r[3] << 8,
							 .name = names[r[1] % 8] };
			FUZZ_CHECK(prof_payload_schemas__add_schema(ps, &s) == 0);
		}
		return true;
	case 1:
		if (!take(in, 8, &r))
			return false;
		{
			struct prof_payload_entry e = {
				.global_pid = PID, .domain_id = DOMAIN, .schema_id = schema_id(r[0]),
				.idx = r[1], .type = r[2] < 128 ? r[2] : schema_id((uint8_t)(r[2] - 128)),
				.flags = r[3], .offset = (uint64_t)r[4] | (uint64_t)r[5] << 8,
				.array_or_union_detail = (uint64_t)r[6] | (uint64_t)r[7] << 8,
				.name = names[r[1] % 8],
			};
			/* an offset near the top of 64 bits now and then */
			if (r[5] == 0xFF)
				e.offset = UINT64_MAX - r[4];
			FUZZ_CHECK(prof_payload_schemas__add_entry(ps, &e) == 0);
		}
		return true;
	case 2:
		if (!take(in, 2, &r))
			return false;
		{
			struct prof_payload_enum_entry v = { .global_pid = PID, .domain_id = DOMAIN,
							     .schema_id = schema_id(r[0]), .idx = r[1],
							     .value = r[1], .name = names[r[1] % 8] };
			FUZZ_CHECK(prof_payload_schemas__add_enum_entry(ps, &v) == 0);
		}
		return true;
	default:
		if (!take(in, 1, &r))
			return false;
		*blob_kind = r[0];
		return false;
	}
}

static void check(const struct prof_payload *p)
{
	FUZZ_CHECK(p->nfields >= 0 && p->nfields <= PROF_PAYLOAD_MAX_FIELDS);
	for (int i = 0; i < p->nfields; i++) {
		const struct prof_payload_field *f = &p->fields[i];

		FUZZ_CHECK(memchr(f->name, '\0', sizeof f->name) != NULL);
		if (f->kind == PROF_PAYLOAD_STRING)
			FUZZ_CHECK(f->text && strlen(f->text) <= PROF_PAYLOAD_TEXT_MAX);
		FUZZ_CHECK(prof_payload__find(p, f->name) != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct prof_payload_schemas *ps;
	struct prof_payload p;
	struct prof_error err = { 0 };
	int blob_kind = -1, rc;
	uint8_t *blob = NULL;
	size_t len = 0;

	FUZZ_CHECK(prof_payload_schemas__new(&ps) == 0);
	while (add_record(ps, &in, &blob_kind))
		;
	if (blob_kind < 0 || (blob_kind % 2 == 0 && in.n < 1))
		goto out;
	if (blob_kind % 2 == 0) {
		uint64_t id = schema_id(in.p[0]);

		/* exactly the bytes, so that ASan sees a read past them */
		blob = malloc(PROF_NVTX_BLOB_HEADER + in.n - 1);
		FUZZ_CHECK(blob != NULL);
		len = prof_nvtx_payload__blob(blob, PROF_NVTX_BLOB_HEADER + in.n - 1, DOMAIN, id,
					      in.p + 1, in.n - 1);
		FUZZ_CHECK(len == PROF_NVTX_BLOB_HEADER + in.n - 1);
	} else {
		blob = malloc(in.n ? in.n : 1);
		FUZZ_CHECK(blob != NULL);
		memcpy(blob, in.p, in.n);
		len = in.n;
	}
	rc = prof_payload__decode(ps, PID, blob, len, &p, &err);
	FUZZ_CHECK(rc == 0 || rc == 1 || (rc == PROF_E_CORRUPT && err.msg[0]) || rc == PROF_E_NOMEM);
	if (rc == 0)
		check(&p);
	prof_payload__exit(&p);
out:
	free(blob);
	prof_payload_schemas__delete(ps);
	return 0;
}
