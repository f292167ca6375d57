/* test_nccl_calls.c - NCCL's kernels read by name (kind, operation,
 * datatype, algorithm, protocol), nccl-tests' bus bandwidth factors, and
 * NCCL kernels matched to their calls and across ranks on a store the test
 * writes through the writer API: two processes, each with NCCL's NVTX
 * ranges and payloads (a communicator init, an all-reduce, a send/recv
 * group), a kernel launched outside any NCCL range, and a kernel that is
 * not NCCL's. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "analysis/nccl.h"
#include "prof/nvtx_payload.h"
#include "prof/store.h"
#include "summary/query.h"
#include "summary/summary.h"
#include "testutil.h"

START_TEST(kernel_names_of_nccl_2_19_and_later)
{
	struct nccl_kernel_name k;

	ck_assert(nccl_kernel__parse("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", &k));
	ck_assert_int_eq(k.kind, NCCL_ALL_REDUCE);
	ck_assert_str_eq(k.op, "Sum");
	ck_assert_str_eq(k.dtype, "f32");
	ck_assert_str_eq(k.algo, "RING");
	ck_assert_str_eq(k.proto, "LL");
	ck_assert(nccl_kernel__parse("ncclDevKernel_ReduceScatter_PreMulSum_bf16_COLLNET_DIRECT_LL128", &k));
	ck_assert_int_eq(k.kind, NCCL_REDUCE_SCATTER);
	ck_assert_str_eq(k.op, "PreMulSum");
	ck_assert_str_eq(k.dtype, "bf16");
	ck_assert_str_eq(k.algo, "COLLNET_DIRECT");
	ck_assert_str_eq(k.proto, "LL128");
	ck_assert(nccl_kernel__parse("ncclDevKernel_AllGather_NVLS_TREE_SIMPLE", &k));
	ck_assert_int_eq(k.kind, NCCL_ALL_GATHER);
	ck_assert_str_eq(k.algo, "NVLS_TREE");
	ck_assert_str_eq(k.proto, "SIMPLE");
	ck_assert_str_eq(k.op, "");
	ck_assert(nccl_kernel__parse("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", &k));
	ck_assert_int_eq(k.kind, NCCL_SEND_RECV);
	ck_assert_str_eq(k.algo, "");
	ck_assert(nccl_kernel__parse("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", &k));
	ck_assert_int_eq(k.kind, NCCL_KIND_UNKNOWN);
}
END_TEST

START_TEST(kernel_names_of_older_nccl)
{
	struct nccl_kernel_name k;

	ck_assert(nccl_kernel__parse("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", &k));
	ck_assert_int_eq(k.kind, NCCL_ALL_REDUCE);
	ck_assert_str_eq(k.dtype, "f32");
	ck_assert_str_eq(k.algo, "RING");
	ck_assert_str_eq(k.proto, "LL");
	ck_assert_str_eq(k.op, "Sum");
	ck_assert(nccl_kernel__parse("ncclKernel_Broadcast_TREE_SIMPLE_Sum___nv_bfloat16(ncclDevComm*)", &k));
	ck_assert_int_eq(k.kind, NCCL_BROADCAST);
	ck_assert_str_eq(k.dtype, "bf16");
	ck_assert_str_eq(k.algo, "TREE");
	ck_assert(nccl_kernel__parse("ncclKernel_Reduce_RING_LL128_Max_int8_t", &k));
	ck_assert_int_eq(k.kind, NCCL_REDUCE);
	ck_assert_str_eq(k.dtype, "i8");
	ck_assert_str_eq(k.op, "Max");
	/* NCCL before 2.7: recognised as NCCL's, nothing more */
	ck_assert(nccl_kernel__parse("ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)", &k));
	ck_assert_int_eq(k.kind, NCCL_KIND_UNKNOWN);
	ck_assert(!nccl_kernel__parse("void at::native::vectorized_elementwise_kernel<4>(int)", &k));
	ck_assert(!nccl_kernel__parse("all_reduce_kernel", &k));
	ck_assert(!nccl_kernel__parse(NULL, &k));
}
END_TEST

START_TEST(call_names_and_bus_bandwidth_factors)
{
	ck_assert_int_eq(nccl_call__kind("ncclAllReduce"), NCCL_ALL_REDUCE);
	ck_assert_int_eq(nccl_call__kind("ncclSend"), NCCL_SEND_RECV);
	ck_assert_int_eq(nccl_call__kind("ncclRecv"), NCCL_SEND_RECV);
	ck_assert_int_eq(nccl_call__kind("ncclReduceScatter"), NCCL_REDUCE_SCATTER);
	ck_assert_int_eq(nccl_call__kind("ncclGroupEnd"), NCCL_KIND_UNKNOWN);
	ck_assert_int_eq(nccl_call__kind("ncclCommInitRank"), NCCL_KIND_UNKNOWN);
	ck_assert_int_eq(nccl_call__kind("AllReduce"), NCCL_KIND_UNKNOWN);
	/* nccl-tests: all-reduce 2(n-1)/n, gather/scatter (n-1)/n, the others 1 */
	ck_assert(nccl_busbw_factor(NCCL_ALL_REDUCE, 8) == 1.75);
	ck_assert(nccl_busbw_factor(NCCL_ALL_REDUCE, 2) == 1.0);
	ck_assert(nccl_busbw_factor(NCCL_ALL_GATHER, 4) == 0.75);
	ck_assert(nccl_busbw_factor(NCCL_REDUCE_SCATTER, 2) == 0.5);
	ck_assert(nccl_busbw_factor(NCCL_BROADCAST, 8) == 1.0);
	ck_assert(nccl_busbw_factor(NCCL_REDUCE, 8) == 1.0);
	ck_assert(nccl_busbw_factor(NCCL_SEND_RECV, 2) == 1.0);
	ck_assert(nccl_busbw_factor(NCCL_ALL_REDUCE, 0) == 0);
	ck_assert(nccl_busbw_factor(NCCL_KIND_UNKNOWN, 4) == 0);
	ck_assert_str_eq(nccl_kind__name(NCCL_REDUCE_SCATTER), "ReduceScatter");
	ck_assert_str_eq(nccl_kind__name((enum nccl_kind)99), "unknown");
}
END_TEST

/* ---- a job written through the writer ---------------------------------- */

#define DOMAIN 5
#define SID(n) (PROF_PAYLOAD_SCHEMA_ID_STATIC_START + (n))
#define COMM 0xABCDEF12ULL
#define T0 1000000000LL

static int32_t corr;

static void schema(struct prof_writer *w, int64_t pid, uint64_t id, const char *name, uint64_t size,
		   const char *const *names, const uint64_t *types, const uint64_t *offsets, int n)
{
	struct prof_payload_schema s = { pid, DOMAIN, id, name, PROF_PAYLOAD_SCHEMA_STATIC, 0,
					 (uint64_t)n, size, 8 };

	ck_assert_int_eq(prof_writer__payload_schema(w, &s), 0);
	for (int i = 0; i < n; i++) {
		struct prof_payload_entry e = { pid, DOMAIN, id, (uint64_t)i, 0, types[i], names[i],
						NULL, 0, offsets[i] };

		ck_assert_int_eq(prof_writer__payload_entry(w, &e), 0);
	}
}

static void schemas(struct prof_writer *w, int64_t pid)
{
	static const char *const init[] = { "NCCL communicator ID", "No. of ranks", "Rank", "CUDA device" };
	static const uint64_t init_t[] = { 18, 5, 5, 5 }, init_o[] = { 0, 8, 12, 16 };
	static const char *const ar[] = { "NCCL communicator ID", "Message size [bytes]", "Reduction operation" };
	static const uint64_t ar_t[] = { 18, 22, SID(11) }, ar_o[] = { 0, 8, 16 };
	static const char *const sr[] = { "NCCL communicator ID", "Message size [bytes]", "Peer rank" };
	static const uint64_t sr_t[] = { 18, 22, 5 }, sr_o[] = { 0, 8, 16 };
	static const char *const ops[] = { "Sum", "Product", "Max", "Min", "Avg" };
	struct prof_payload_schema redop = { pid, DOMAIN, SID(11), "redop", 0, 0, 5, 4, 4 };

	ck_assert_int_eq(prof_writer__payload_schema(w, &redop), 0);
	for (int i = 0; i < 5; i++) {
		struct prof_payload_enum_entry v = { pid, DOMAIN, SID(11), (uint64_t)i, ops[i], (uint64_t)i, 0 };

		ck_assert_int_eq(prof_writer__payload_enum_entry(w, &v), 0);
	}
	schema(w, pid, SID(0), "CommInitRank", 24, init, init_t, init_o, 4);
	schema(w, pid, SID(5), "AllReduce", 24, ar, ar_t, ar_o, 3);
	schema(w, pid, SID(9), "SendRecv", 24, sr, sr_t, sr_o, 3);
}

static void le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)(v & 0xFF);
}

/* A push/pop range of the NCCL domain on tid, with a payload (or none). */
static void range(struct prof_writer *w, int64_t tid, const char *name, int64_t start, int64_t end,
		  uint64_t schema_id, const unsigned char *payload, size_t size)
{
	unsigned char blob[128];
	struct prof_nvtx_event e = { .start_ns = start, .end_ns = end, .event_type = PROF_NVTX_PUSHPOP,
				     .global_tid = tid, .end_global_tid = tid,
				     .text_id = prof_writer__string(w, name), .domain_id = DOMAIN };

	if (payload) {
		e.binary = blob;
		e.binary_len = prof_nvtx_payload__blob(blob, sizeof blob, DOMAIN, schema_id, payload, size);
	}
	ck_assert_int_eq(prof_writer__nvtx(w, &e), 0);
}

/* A kernel of that name on the GPU and the driver call that launched it. */
static void launch(struct prof_writer *w, uint32_t pid, const char *kernel, int64_t call_ns,
		   int64_t gpu_start, int64_t gpu_end)
{
	struct prof_kernel k = { .start_ns = gpu_start, .end_ns = gpu_end, .device_id = (int32_t)pid % 2,
				 .stream_id = 13, .correlation_id = ++corr,
				 .global_pid = prof_global_pid(pid),
				 .demangled_name = prof_writer__string(w, kernel) };
	struct prof_api_call a = { .start_ns = call_ns, .end_ns = call_ns + 5,
				   .global_tid = prof_global_tid(pid, pid), .correlation_id = corr,
				   .name_id = prof_writer__string(w, "cuLaunchKernelEx") };

	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	ck_assert_int_eq(prof_writer__api(w, PROF_API_DRIVER, &a), 0);
}

/* Rank r (pid): init, an all-reduce of 1 MiB whose kernel starts at
 * ar_start, a send/recv group of 4 KiB each way, an all-gather launched
 * outside any NCCL range, and a GEMM. */
static void rank_process(struct prof_writer *w, uint32_t pid, int r, int64_t ar_start)
{
	int64_t tid = prof_global_tid(pid, pid);
	unsigned char p[24];
	struct prof_nvtx_event domain = { .start_ns = T0, .end_ns = -1,
					  .event_type = PROF_NVTX_DOMAIN_CREATE, .global_tid = tid,
					  .end_global_tid = tid, .text_id = prof_writer__string(w, "NCCL"),
					  .domain_id = DOMAIN };

	ck_assert_int_eq(prof_writer__process(w, pid, "python3"), 0);
	ck_assert_int_eq(prof_writer__nvtx(w, &domain), 0);
	schemas(w, prof_global_pid(pid));
	memset(p, 0, sizeof p);
	le(p, COMM, 8);
	le(p + 8, 2, 4);
	le(p + 12, (uint64_t)r, 4);
	range(w, tid, "ncclCommInitRank", T0 + 100, T0 + 900, SID(0), p, 24);
	memset(p, 0, sizeof p);
	le(p, COMM, 8);
	le(p + 8, 1 << 20, 8);
	le(p + 16, 0, 4);
	range(w, tid, "ncclAllReduce", T0 + 1000, T0 + 1050, SID(5), p, 24);
	launch(w, pid, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	       T0 + 1010, ar_start, T0 + 3000);
	range(w, tid, "ncclGroupStart", T0 + 4000, T0 + 4005, 0, NULL, 0);
	memset(p, 0, sizeof p);
	le(p, COMM, 8);
	le(p + 8, 4096, 8);
	le(p + 16, (uint64_t)(1 - r), 4);
	range(w, tid, "ncclSend", T0 + 4010, T0 + 4020, SID(9), p, 24);
	range(w, tid, "ncclRecv", T0 + 4030, T0 + 4040, SID(9), p, 24);
	range(w, tid, "ncclGroupEnd", T0 + 4050, T0 + 4100, 0, NULL, 0);
	launch(w, pid, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", T0 + 4060,
	       T0 + 5000 + r * 100, T0 + 5500);
	launch(w, pid, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", T0 + 6000,
	       T0 + 6500, T0 + 6800);
	launch(w, pid, "sm90_xmma_gemm_bf16bf16_bf16f32", T0 + 7000, T0 + 7100, T0 + 9000);
}

static const char *write_job(void)
{
	const char *path = testutil_tmp_path("nccl_job.sqlite");
	struct prof_error err = { 0 };
	struct prof_writer *w;

	corr = 0;
	ck_assert_int_eq(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err), 0);
	rank_process(w, 300, 0, T0 + 2000);
	rank_process(w, 301, 1, T0 + 2600); /* rank 1 arrives 600 ns late */
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	return path;
}

static const struct nccl_call *call_of(const struct nccl_calls *c, int rank, enum nccl_kind kind)
{
	for (int i = 0; i < c->n; i++)
		if (c->v[i].rank == rank && c->v[i].kind == kind)
			return &c->v[i];
	return NULL;
}

START_TEST(nccl_kernels_get_their_calls_payloads_and_communicator)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct sum_ranks r;
	struct nccl_calls c;
	const struct nccl_call *ar, *sr, *ag;

	ck_assert_msg(prof_store__open_capture(write_job(), &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(nccl_calls__load(s, &r, &c, &err) == 0, "%s", err.msg);
	/* three NCCL kernels a rank; the GEMM is not one */
	ck_assert_int_eq(c.n, 6);
	ck_assert_int_eq(c.with_payload, 4);
	ck_assert_int_eq(c.without_call, 2);
	ck_assert_int_eq(c.payloads_unreadable, 0);

	ar = call_of(&c, 1, NCCL_ALL_REDUCE);
	ck_assert_ptr_nonnull(ar);
	ck_assert(ar->has_payload);
	ck_assert_int_eq(ar->bytes, 1 << 20);
	ck_assert_uint_eq(ar->comm, COMM);
	ck_assert_int_eq(ar->comm_ranks, 2);
	ck_assert_int_eq(ar->comm_rank, 1);
	ck_assert_str_eq(ar->op, "Sum");
	ck_assert_str_eq(ar->name.dtype, "f32");
	ck_assert_str_eq(ar->name.algo, "RING");
	ck_assert_int_eq(ar->call_start_ns, T0 + 1000);
	ck_assert_int_eq(ar->launch_ns, T0 + 1010);
	ck_assert_int_eq(ar->start_ns, T0 + 2600);
	ck_assert_int_eq(ar->seq, 0);

	/* the group's kernel carries its send and its recv; its bytes are those sent */
	sr = call_of(&c, 0, NCCL_SEND_RECV);
	ck_assert_ptr_nonnull(sr);
	ck_assert_int_eq(sr->ncalls, 2);
	ck_assert_int_eq(sr->bytes, 4096);
	ck_assert_int_eq(sr->peer, 1);
	ck_assert_int_eq(sr->call_start_ns, T0 + 4050);
	ck_assert_int_eq(sr->seq, 1);

	/* outside any NCCL range: the name's kind, the size unknown */
	ag = call_of(&c, 0, NCCL_ALL_GATHER);
	ck_assert_ptr_nonnull(ag);
	ck_assert(!ag->has_payload);
	ck_assert_int_eq(ag->bytes, -1);
	ck_assert_int_eq(ag->call_start_ns, -1);
	ck_assert_int_eq(ag->comm_ranks, -1);
	nccl_calls__exit(&c);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(nccl_collectives_match_calls_across_ranks_with_arrivals)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct sum_ranks r;
	struct nccl_calls c;
	struct nccl_collectives cs;
	const struct nccl_collective *ar = NULL;

	ck_assert_msg(prof_store__open_capture(write_job(), &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(nccl_calls__load(s, &r, &c, &err) == 0, "%s", err.msg);
	ck_assert_msg(nccl_collectives__match(&c, &cs, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cs.n, 3);
	for (int i = 0; i < cs.n; i++) {
		ck_assert_int_eq(cs.v[i].ncalls, 2);
		ck_assert_int_ne(c.v[cs.v[i].calls[0]].rank, c.v[cs.v[i].calls[1]].rank);
		if (cs.v[i].kind == NCCL_ALL_REDUCE)
			ar = &cs.v[i];
	}
	ck_assert_ptr_nonnull(ar);
	ck_assert_int_eq(ar->first_arrival_ns, T0 + 2000);
	ck_assert_int_eq(ar->last_arrival_ns, T0 + 2600);
	ck_assert_int_eq(ar->last_rank, 1);
	ck_assert_int_eq(ar->bytes, 1 << 20);
	nccl_collectives__exit(&cs);
	nccl_calls__exit(&c);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(nccl_calls_of_one_rank_under_rank_filter)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct sum_ranks r;
	struct nccl_calls c;

	ck_assert_msg(prof_store__open_capture(write_job(), &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(summary__select_ranks(s, "1", &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(nccl_calls__load(s, &r, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(c.n, 3);
	for (int i = 0; i < c.n; i++)
		ck_assert_int_eq(c.v[i].rank, 1);
	/* the communicator's init is rank 1's own */
	ck_assert_int_eq(call_of(&c, 1, NCCL_ALL_REDUCE)->comm_rank, 1);
	nccl_calls__exit(&c);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(nccl_calls_of_capture_without_nccl_are_none)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct sum_ranks r;
	struct nccl_calls c;

	ck_assert_msg(prof_store__open_capture(testutil_data_path("torch_train.sqlite"), &s, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(nccl_calls__load(s, &r, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(c.n, 0);
	nccl_calls__exit(&c);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nccl_calls");
	TCase *tc = tcase_create("nccl");

	tcase_add_test(tc, kernel_names_of_nccl_2_19_and_later);
	tcase_add_test(tc, kernel_names_of_older_nccl);
	tcase_add_test(tc, call_names_and_bus_bandwidth_factors);
	tcase_add_test(tc, nccl_kernels_get_their_calls_payloads_and_communicator);
	tcase_add_test(tc, nccl_collectives_match_calls_across_ranks_with_arrivals);
	tcase_add_test(tc, nccl_calls_of_one_rank_under_rank_filter);
	tcase_add_test(tc, nccl_calls_of_capture_without_nccl_are_none);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
