/* test_nvtx_payload.c - decoding NVTX extended payloads: blobs laid out in
 * the test as nsys stores them (a 32-byte header, then the payload) with
 * the schemas NCCL registers (its AllReduce and SendRecv structs, its
 * reduction-operation enum), nested schemas, fixed-length strings,
 * implicit offsets, and blobs and schemas that lie about their sizes; and
 * loading the schemas from a store, by process and, for an nsys export
 * without globalPid, by (domain, schema). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/nvtx_payload.h"
#include "prof/store.h"
#include "testutil.h"

#define DOMAIN 7
#define PID ((int64_t)4242 << 24)
#define SID_ALLREDUCE (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 5)
#define SID_SENDRECV (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 9)
#define SID_REDOP (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 11)
#define SID_NAMED (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 20)
#define SID_OUTER (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 21)
#define SID_IMPLICIT (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + 22)

static void le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)(v & 0xFF);
}

static void schema(struct prof_payload_schemas *ps, int64_t pid, uint64_t id, const char *name,
		   uint64_t size)
{
	struct prof_payload_schema s = { .global_pid = pid, .domain_id = DOMAIN, .schema_id = id,
					 .name = name, .type = PROF_PAYLOAD_SCHEMA_STATIC,
					 .payload_size = size };

	ck_assert_int_eq(prof_payload_schemas__add_schema(ps, &s), 0);
}

static void entry(struct prof_payload_schemas *ps, int64_t pid, uint64_t id, uint64_t idx,
		  uint64_t type, const char *name, uint64_t offset, uint64_t flags, uint64_t detail)
{
	struct prof_payload_entry e = { .global_pid = pid, .domain_id = DOMAIN, .schema_id = id,
					.idx = idx, .type = type, .name = name, .offset = offset,
					.flags = flags, .array_or_union_detail = detail };

	ck_assert_int_eq(prof_payload_schemas__add_entry(ps, &e), 0);
}

static void redop(struct prof_payload_schemas *ps, int64_t pid)
{
	static const char *const names[] = { "Sum", "Product", "Max", "Min", "Avg" };

	schema(ps, pid, SID_REDOP, "NCCL reduction operation", 4);
	for (uint64_t i = 0; i < 5; i++) {
		struct prof_payload_enum_entry v = { .global_pid = pid, .domain_id = DOMAIN,
						     .schema_id = SID_REDOP, .idx = i,
						     .name = names[i], .value = i };

		ck_assert_int_eq(prof_payload_schemas__add_enum_entry(ps, &v), 0);
	}
}

/* NCCL's NcclNvtxParamsAllReduce: {uint64_t comm; size_t bytes; ncclRedOp_t op;} */
static struct prof_payload_schemas *nccl_schemas(int64_t pid)
{
	struct prof_payload_schemas *ps;

	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	redop(ps, pid);
	schema(ps, pid, SID_ALLREDUCE, "AllReduce", 24);
	entry(ps, pid, SID_ALLREDUCE, 0, PROF_PAYLOAD_TYPE_UINT64, "NCCL communicator ID", 0, 0, 0);
	entry(ps, pid, SID_ALLREDUCE, 1, PROF_PAYLOAD_TYPE_SIZE, "Message size [bytes]", 8, 0, 0);
	entry(ps, pid, SID_ALLREDUCE, 2, SID_REDOP, "Reduction operation", 16, 0, 0);
	schema(ps, pid, SID_SENDRECV, "SendRecv", 24);
	entry(ps, pid, SID_SENDRECV, 0, PROF_PAYLOAD_TYPE_UINT64, "NCCL communicator ID", 0, 0, 0);
	entry(ps, pid, SID_SENDRECV, 1, PROF_PAYLOAD_TYPE_SIZE, "Message size [bytes]", 8, 0, 0);
	entry(ps, pid, SID_SENDRECV, 2, PROF_PAYLOAD_TYPE_INT, "Peer rank", 16, 0, 0);
	return ps;
}

/* A blob of the all-reduce payload. */
static size_t allreduce_blob(unsigned char *blob, size_t cap, uint64_t comm, uint64_t bytes,
			     uint32_t op)
{
	unsigned char payload[24] = { 0 };

	le(payload, comm, 8);
	le(payload + 8, bytes, 8);
	le(payload + 16, op, 4);
	return prof_nvtx_payload__blob(blob, cap, DOMAIN, SID_ALLREDUCE, payload, sizeof payload);
}

static int64_t int_field(const struct prof_payload *p, const char *name)
{
	int64_t v = -1;

	ck_assert_msg(prof_payload_field__int(prof_payload__find(p, name), &v), "no integer %s", name);
	return v;
}

START_TEST(payload_blob_header_round_trips)
{
	unsigned char blob[64], payload[5] = { 1, 2, 3, 4, 5 };
	struct prof_nvtx_blob_header h;
	size_t n = prof_nvtx_payload__blob(blob, sizeof blob, 3, 99, payload, sizeof payload);

	ck_assert_uint_eq(n, PROF_NVTX_BLOB_HEADER + 5);
	ck_assert_int_eq(prof_nvtx_blob__header(blob, n, &h), 0);
	ck_assert_uint_eq(h.domain_id, 3);
	ck_assert_uint_eq(h.schema_id, 99);
	ck_assert_uint_eq(h.payload_size, 5);
	ck_assert_uint_eq(h.total_size, n);
	ck_assert_int_eq(memcmp(blob + PROF_NVTX_BLOB_HEADER, payload, 5), 0);
	/* too small a buffer: nothing laid out */
	ck_assert_uint_eq(prof_nvtx_payload__blob(blob, 36, 3, 99, payload, sizeof payload), 0);
}
END_TEST

START_TEST(payload_decodes_nccl_allreduce_with_enum_name)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	struct prof_payload p;
	struct prof_error err = { 0 };
	unsigned char blob[64];
	size_t n = allreduce_blob(blob, sizeof blob, 0xC0FFEE1234ULL, 25165824, 2);

	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_str_eq(p.schema_name, "AllReduce");
	ck_assert_int_eq(p.nfields, 3);
	ck_assert_int_eq(int_field(&p, "NCCL communicator ID"), 0xC0FFEE1234LL);
	ck_assert_int_eq(int_field(&p, "Message size [bytes]"), 25165824);
	ck_assert_int_eq(prof_payload__find(&p, "Reduction operation")->kind, PROF_PAYLOAD_ENUM);
	ck_assert_str_eq(prof_payload__find(&p, "Reduction operation")->text, "Max");
	ck_assert_ptr_null(prof_payload__find(&p, "Peer rank"));
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_signed_int_keeps_its_sign)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	unsigned char payload[24] = { 0 }, blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	le(payload + 8, 4096, 8);
	le(payload + 16, (uint32_t)-1, 4); /* peer -1 */
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_SENDRECV, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_int_eq(prof_payload__find(&p, "Peer rank")->kind, PROF_PAYLOAD_INT);
	ck_assert_int_eq(int_field(&p, "Peer rank"), -1);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_enum_value_without_name_keeps_number)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	struct prof_payload p;
	struct prof_error err = { 0 };
	unsigned char blob[64];
	size_t n = allreduce_blob(blob, sizeof blob, 1, 2, 17);

	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_ptr_null(prof_payload__find(&p, "Reduction operation")->text);
	ck_assert_int_eq(int_field(&p, "Reduction operation"), 17);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_schema_of_another_process_is_not_used)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	struct prof_payload p;
	struct prof_error err = { 0 };
	unsigned char blob[64];
	size_t n = allreduce_blob(blob, sizeof blob, 1, 2, 0);

	/* domain ids are per process: another process's domain 7 is another domain */
	ck_assert_int_eq(prof_payload__decode(ps, (int64_t)77 << 24, blob, n, &p, &err), 1);
	ck_assert_int_eq(p.nfields, 0);
	prof_payload__exit(&p);
	/* a blob whose process is unknown takes the only schema of its key */
	ck_assert_int_eq(prof_payload__decode(ps, -1, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "Message size [bytes]"), 2);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_unknown_schema_is_not_an_error)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	unsigned char blob[64], payload[8] = { 0 };
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, 12345, payload, 8);

	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 1);
	ck_assert_int_eq(err.code, 0);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_header_that_lies_is_refused)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	struct prof_payload p;
	struct prof_error err = { 0 };
	unsigned char blob[64];
	size_t n = allreduce_blob(blob, sizeof blob, 1, 2, 0);

	/* shorter than a header */
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, 31, &p, &err), PROF_E_CORRUPT);
	ck_assert(err.msg[0]);
	prof_payload__exit(&p);
	/* a payload size past the blob's end */
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n - 1, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	/* a total size that disagrees with the payload size */
	le(blob + 24, 1000, 8);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	/* a payload size so large that header + size wraps */
	le(blob + 16, UINT64_MAX - 8, 8);
	le(blob + 24, 23, 8);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_entry_past_payload_end_is_refused)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	unsigned char payload[24] = { 0 }, blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	/* the payload stops inside the message size: 12 of its 24 bytes */
	size_t n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_ALLREDUCE, payload, 12);

	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	ck_assert_msg(strstr(err.msg, "Message size") != NULL, "%s", err.msg);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_offset_near_uint64_max_does_not_wrap)
{
	struct prof_payload_schemas *ps;
	unsigned char payload[16] = { 0 }, blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_NAMED, "far", 16);
	entry(ps, PID, SID_NAMED, 0, PROF_PAYLOAD_TYPE_UINT64, "a", UINT64_MAX - 3, 0, 0);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_NAMED, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	/* a fixed string whose length overflows when multiplied */
	prof_payload_schemas__delete(ps);
	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_NAMED, "far", 16);
	entry(ps, PID, SID_NAMED, 0, PROF_PAYLOAD_TYPE_CHAR, "s", 8,
	      PROF_PAYLOAD_FLAG_ARRAY_FIXED_SIZE, UINT64_MAX);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_fixed_string_stops_at_nul_or_its_length)
{
	struct prof_payload_schemas *ps;
	unsigned char payload[24], blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_NAMED, "named", 24);
	entry(ps, PID, SID_NAMED, 0, PROF_PAYLOAD_TYPE_CHAR, "tag", 0,
	      PROF_PAYLOAD_FLAG_ARRAY_FIXED_SIZE, 8);
	entry(ps, PID, SID_NAMED, 1, PROF_PAYLOAD_TYPE_CSTRING_UTF8, "label", 8,
	      PROF_PAYLOAD_FLAG_ARRAY_FIXED_SIZE, 16);
	memcpy(payload, "bucket_7", 8);         /* all 8 bytes used: no NUL */
	memcpy(payload + 8, "grad\0junk-junk!", 16);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_NAMED, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_str_eq(prof_payload__find(&p, "tag")->text, "bucket_7");
	ck_assert_str_eq(prof_payload__find(&p, "label")->text, "grad");
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_nested_schema_names_fields_by_path)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	unsigned char payload[32] = { 0 }, blob[80];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	schema(ps, PID, SID_OUTER, "outer", 32);
	entry(ps, PID, SID_OUTER, 0, PROF_PAYLOAD_TYPE_INT, "step", 0, 0, 0);
	entry(ps, PID, SID_OUTER, 1, SID_ALLREDUCE, "call", 8, 0, 0);
	le(payload, 12, 4);
	le(payload + 8, 99, 8);
	le(payload + 16, 1 << 20, 8);
	le(payload + 24, 0, 4);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_OUTER, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "step"), 12);
	ck_assert_int_eq(int_field(&p, "call.NCCL communicator ID"), 99);
	ck_assert_int_eq(int_field(&p, "call.Message size [bytes]"), 1 << 20);
	ck_assert_str_eq(prof_payload__find(&p, "call.Reduction operation")->text, "Sum");
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_nested_schema_that_does_not_fit_is_refused)
{
	struct prof_payload_schemas *ps = nccl_schemas(PID);
	unsigned char payload[16] = { 0 }, blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	/* the all-reduce struct takes 24 bytes from offset 8 of 16 */
	schema(ps, PID, SID_OUTER, "outer", 16);
	entry(ps, PID, SID_OUTER, 0, PROF_PAYLOAD_TYPE_INT, "step", 0, 0, 0);
	entry(ps, PID, SID_OUTER, 1, SID_ALLREDUCE, "call", 8, 0, 0);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_OUTER, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), PROF_E_CORRUPT);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_schema_nesting_itself_stops_at_the_depth_limit)
{
	struct prof_payload_schemas *ps;
	unsigned char payload[64] = { 0 }, blob[128];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	/* no size: each level takes the rest of the one around it */
	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_OUTER, "loop", 0);
	entry(ps, PID, SID_OUTER, 0, PROF_PAYLOAD_TYPE_INT, "x", 0, 0, 0);
	entry(ps, PID, SID_OUTER, 1, SID_OUTER, "self", 4, 0, 0);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_OUTER, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert(p.fields_left_out);
	ck_assert_int_le(p.nfields, PROF_PAYLOAD_MAX_DEPTH);
	ck_assert_ptr_nonnull(prof_payload__find(&p, "self.x"));
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_implicit_offsets_follow_alignment)
{
	struct prof_payload_schemas *ps;
	unsigned char payload[24] = { 0 }, blob[64];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	/* {char c; double d; float f; uint16 half;} registered without offsets */
	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_IMPLICIT, "implicit", 24);
	entry(ps, PID, SID_IMPLICIT, 0, PROF_PAYLOAD_TYPE_CHAR, "c", 0, 0, 0);
	entry(ps, PID, SID_IMPLICIT, 1, PROF_PAYLOAD_TYPE_DOUBLE, "d", 0, 0, 0);
	entry(ps, PID, SID_IMPLICIT, 2, PROF_PAYLOAD_TYPE_FLOAT, "f", 0, 0, 0);
	entry(ps, PID, SID_IMPLICIT, 3, PROF_PAYLOAD_TYPE_FLOAT16, "h", 0, 0, 0);
	entry(ps, PID, SID_IMPLICIT, 4, PROF_PAYLOAD_TYPE_BF16, "b", 0, 0, 0);
	payload[0] = 'x';
	{
		double d = 2.5;
		float f = -0.75f;
		uint64_t bits;
		uint32_t fb;

		memcpy(&bits, &d, 8);
		le(payload + 8, bits, 8);
		memcpy(&fb, &f, 4);
		le(payload + 16, fb, 4);
	}
	le(payload + 20, 0x3C00, 2); /* half 1.0 */
	le(payload + 22, 0xC040, 2); /* bf16 -3.0 */
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_IMPLICIT, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "c"), 'x');
	ck_assert(prof_payload__find(&p, "d")->d == 2.5);
	ck_assert(prof_payload__find(&p, "f")->d == -0.75);
	ck_assert(prof_payload__find(&p, "h")->d == 1.0);
	ck_assert(prof_payload__find(&p, "b")->d == -3.0);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

START_TEST(payload_pointers_and_wide_numbers_are_undecoded)
{
	struct prof_payload_schemas *ps;
	unsigned char payload[40] = { 0 }, blob[80];
	struct prof_payload p;
	struct prof_error err = { 0 };
	size_t n;

	ck_assert_int_eq(prof_payload_schemas__new(&ps), 0);
	schema(ps, PID, SID_NAMED, "odd", 40);
	entry(ps, PID, SID_NAMED, 0, PROF_PAYLOAD_TYPE_CSTRING, "name", 0, 0, 0);
	entry(ps, PID, SID_NAMED, 1, 34 /* UINT128 */, "wide", 8, 0, 0);
	entry(ps, PID, SID_NAMED, 2, PROF_PAYLOAD_TYPE_INT, "after", 24, 0, 0);
	entry(ps, PID, SID_NAMED, 3, 9999 /* no such type or schema */, "odd", 28, 0, 0);
	le(payload + 24, 5, 4);
	n = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, SID_NAMED, payload, sizeof payload);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_int_eq(prof_payload__find(&p, "name")->kind, PROF_PAYLOAD_UNDECODED);
	ck_assert_int_eq(prof_payload__find(&p, "wide")->kind, PROF_PAYLOAD_UNDECODED);
	ck_assert_int_eq(prof_payload__find(&p, "odd")->kind, PROF_PAYLOAD_UNDECODED);
	ck_assert_int_eq(int_field(&p, "after"), 5);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
}
END_TEST

/* The store's three tables, written through the writer by process; read
 * back, and read again after the globalPid columns are dropped (an nsys
 * export's shape). */
START_TEST(payload_schemas_load_from_store_by_process_and_without_pid)
{
	const char *path = testutil_tmp_path("payload.sqlite");
	const int64_t pid_b = (int64_t)77 << 24;
	struct prof_writer *w;
	struct prof_store *s;
	struct prof_payload_schemas *ps;
	struct prof_payload p;
	struct prof_error err = { 0 };
	unsigned char blob[64];
	size_t n = allreduce_blob(blob, sizeof blob, 5, 1024, 4);
	static const char *const redop_names[] = { "Sum", "Product", "Max", "Min", "Avg" };

	ck_assert_int_eq(prof_writer__create(path, 0, &w, &err), 0);
	for (int proc = 0; proc < 2; proc++) {
		int64_t pid = proc ? pid_b : PID;
		struct prof_payload_schema sr = { .global_pid = pid, .domain_id = DOMAIN,
						  .schema_id = SID_REDOP, .name = "redop",
						  .payload_size = 4 };
		struct prof_payload_schema sa = { .global_pid = pid, .domain_id = DOMAIN,
						  .schema_id = SID_ALLREDUCE, .name = "AllReduce",
						  .type = PROF_PAYLOAD_SCHEMA_STATIC, .num_entries = 3,
						  .payload_size = 24 };
		/* process B laid its struct out differently: size first */
		struct prof_payload_entry ea[] = {
			{ pid, DOMAIN, SID_ALLREDUCE, 0, 0, PROF_PAYLOAD_TYPE_UINT64,
			  proc ? "Message size [bytes]" : "NCCL communicator ID", NULL, 0, 0 },
			{ pid, DOMAIN, SID_ALLREDUCE, 1, 0, PROF_PAYLOAD_TYPE_SIZE,
			  proc ? "NCCL communicator ID" : "Message size [bytes]", NULL, 0, 8 },
			{ pid, DOMAIN, SID_ALLREDUCE, 2, 0, SID_REDOP, "Reduction operation", NULL, 0, 16 },
		};

		ck_assert_int_eq(prof_writer__payload_schema(w, &sr), 0);
		ck_assert_int_eq(prof_writer__payload_schema(w, &sa), 0);
		for (int i = 0; i < 3; i++)
			ck_assert_int_eq(prof_writer__payload_entry(w, &ea[i]), 0);
		for (uint64_t i = 0; i < 5; i++) {
			struct prof_payload_enum_entry v = { pid, DOMAIN, SID_REDOP, i, redop_names[i], i, 0 };

			ck_assert_int_eq(prof_writer__payload_enum_entry(w, &v), 0);
		}
	}
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_payload_schemas__load(s, &ps, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(prof_payload_schemas__count(ps), 4);
	ck_assert_int_eq(prof_payload__decode(ps, PID, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "Message size [bytes]"), 1024);
	ck_assert_str_eq(prof_payload__find(&p, "Reduction operation")->text, "Avg");
	prof_payload__exit(&p);
	ck_assert_int_eq(prof_payload__decode(ps, pid_b, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "Message size [bytes]"), 5);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
	prof_store__close(s);

	/* as an nsys export: no globalPid columns, one process's rows */
	testutil_sqlite3(path, "DELETE FROM NVTX_PAYLOAD_SCHEMAS WHERE globalPid <> 71168950272;"
			 "DELETE FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE globalPid <> 71168950272;"
			 "DELETE FROM NVTX_PAYLOAD_ENUM_ENTRIES WHERE globalPid <> 71168950272;"
			 "ALTER TABLE NVTX_PAYLOAD_SCHEMAS DROP COLUMN globalPid;"
			 "ALTER TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES DROP COLUMN globalPid;"
			 "ALTER TABLE NVTX_PAYLOAD_ENUM_ENTRIES DROP COLUMN globalPid;");
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_payload_schemas__load(s, &ps, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(prof_payload_schemas__count(ps), 2);
	ck_assert_int_eq(prof_payload__decode(ps, pid_b, blob, n, &p, &err), 0);
	ck_assert_int_eq(int_field(&p, "Message size [bytes]"), 1024);
	prof_payload__exit(&p);
	prof_payload_schemas__delete(ps);
	prof_store__close(s);
}
END_TEST

START_TEST(payload_schemas_of_store_without_tables_are_empty)
{
	struct prof_store *s;
	struct prof_payload_schemas *ps;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(testutil_data_path("clean_loop.sqlite"), &s, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(prof_payload_schemas__load(s, &ps, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(prof_payload_schemas__count(ps), 0);
	prof_payload_schemas__delete(ps);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nvtx_payload");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, payload_blob_header_round_trips);
	tcase_add_test(tc, payload_decodes_nccl_allreduce_with_enum_name);
	tcase_add_test(tc, payload_signed_int_keeps_its_sign);
	tcase_add_test(tc, payload_enum_value_without_name_keeps_number);
	tcase_add_test(tc, payload_schema_of_another_process_is_not_used);
	tcase_add_test(tc, payload_unknown_schema_is_not_an_error);
	tcase_add_test(tc, payload_header_that_lies_is_refused);
	tcase_add_test(tc, payload_entry_past_payload_end_is_refused);
	tcase_add_test(tc, payload_offset_near_uint64_max_does_not_wrap);
	tcase_add_test(tc, payload_fixed_string_stops_at_nul_or_its_length);
	tcase_add_test(tc, payload_nested_schema_names_fields_by_path);
	tcase_add_test(tc, payload_nested_schema_that_does_not_fit_is_refused);
	tcase_add_test(tc, payload_schema_nesting_itself_stops_at_the_depth_limit);
	tcase_add_test(tc, payload_implicit_offsets_follow_alignment);
	tcase_add_test(tc, payload_pointers_and_wide_numbers_are_undecoded);
	tcase_add_test(tc, payload_schemas_load_from_store_by_process_and_without_pid);
	tcase_add_test(tc, payload_schemas_of_store_without_tables_are_empty);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
