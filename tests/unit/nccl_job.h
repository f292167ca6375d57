/* nccl_job.h - a job of two ranks written through the writer API for the
 * NCCL and per-rank tests: each process has NCCL's NVTX domain, its
 * payload schemas (NCCL 2.23's: communicator init, all-reduce with the
 * reduction enum, send/recv), a communicator init, an all-reduce of 1 MiB
 * (rank 1's kernel starting 600 ns after rank 0's), a send/recv group of
 * 4 KiB each way, an all-gather launched outside any NCCL range, an
 * elementwise kernel overlapping the all-reduce by 500 ns (rank 0) or
 * 400 ns (rank 1), and a GEMM. Times are nanoseconds after T0. */
#ifndef PERFKIT_NCCL_JOB_H
#define PERFKIT_NCCL_JOB_H

#include <check.h>
#include <string.h>

#include "prof/nvtx_payload.h"
#include "prof/store.h"
#include "testutil.h"

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
 * outside any NCCL range, an elementwise kernel and a GEMM. */
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
	launch(w, pid, "elementwise_kernel", T0 + 1020, T0 + 2500, T0 + 3500);
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

#endif
