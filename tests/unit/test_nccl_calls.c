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

#include "analysis/ranks/nccl.h"
#include "prof/nvtx_payload.h"
#include "prof/store.h"
#include "model/ranks.h"
#include "summary/summary.h"
#include "nccl_job.h"
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
	/* three NCCL kernels a rank; the elementwise kernel and the GEMM are not */
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
