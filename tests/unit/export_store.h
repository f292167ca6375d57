/* export_store.h - the small capture the export tests write through the
 * writer API, with its known values exposed so that the tests derive every
 * expectation from the inputs rather than from the code under test.
 *
 * One process (pid 100, thread 101 named "main"), device 0:
 *   NVTX "outer" range holding two kernel launches and one async copy,
 *   NVTX "second" range holding a driver-API launch of a kernel named
 *   <script>alert(1)</script> and a memset, a mark, a synchronize call
 *   with no GPU work, a kernel with no launching call, and three device
 *   memory events. */
#ifndef PERFKIT_EXPORT_STORE_H
#define PERFKIT_EXPORT_STORE_H

#include <check.h>
#include <stdint.h>

#include "prof/store.h"

#define XS_T0 1000000000LL
#define XS_PID 100
#define XS_TID 101
#define XS_OUTER "outer \"q\" & <b>"
#define XS_SECOND "second"
#define XS_EVIL "<script>alert(1)</script>"
#define XS_PROCESS "app;x"

/* One API call and the GPU work it launched (gpu_kind 0: none). */
enum xs_gpu { XS_NONE, XS_KERNEL, XS_MEMCPY, XS_MEMSET };
struct xs_launch {
	enum prof_api_domain domain;
	const char *api;
	int64_t api_start, api_end; /* relative to XS_T0 */
	enum xs_gpu gpu;
	const char *kernel;
	int32_t stream;
	int64_t gpu_start, gpu_end;
	int range; /* 0 outer, 1 second, -1 none */
};

static const struct xs_launch xs_launches[] = {
	{ PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 1000, 3000, XS_KERNEL, "kernelA", 7, 10000, 20000, 0 },
	{ PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 4000, 5000, XS_KERNEL, "kernel;B\nx", 7, 20000, 25000, 0 },
	{ PROF_API_RUNTIME, "cudaMemcpyAsync_v3020", 6000, 7000, XS_MEMCPY, NULL, 8, 30000, 40000, 0 },
	{ PROF_API_DRIVER, "cuLaunchKernel", 210000, 211000, XS_KERNEL, XS_EVIL, 7, 220000, 221234, 1 },
	{ PROF_API_RUNTIME, "cudaMemsetAsync_v3020", 230000, 231000, XS_MEMSET, NULL, 7, 240000, 241000, 1 },
	{ PROF_API_RUNTIME, "cudaDeviceSynchronize_v3020", 400000, 500000, XS_NONE, NULL, 0, 0, 0, -1 },
};
#define XS_NLAUNCH (int)(sizeof xs_launches / sizeof xs_launches[0])
/* NVTX ranges (relative), index = xs_launch.range */
static const int64_t xs_range[2][2] = { { 0, 100000 }, { 200000, 300000 } };
static const char *const xs_range_name[2] = { XS_OUTER, XS_SECOND };
#define XS_MARK_AT 50000
/* a kernel nobody launched (no API call has its correlation id) */
#define XS_ORPHAN_START 600000
#define XS_ORPHAN_END 601000
#define XS_ORPHAN_STREAM 9
/* device memory: +1000 at 500, +24 at 600, -1000 at 450000 */
static const int64_t xs_mem[3][3] = { { 500, 1000, 0 }, { 600, 24, 0 }, { 450000, 1000, 1 } };
#define XS_MEMCPY_BYTES 1048576

static inline void xs_write(const char *path, bool with_gpu_info)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	int64_t gt = prof_global_tid(XS_PID, XS_TID), gp = prof_global_pid(XS_PID);
	int rc = 0;

	ck_assert_msg(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err) == 0, "%s", err.msg);
	rc |= prof_writer__process(w, XS_PID, XS_PROCESS);
	rc |= prof_writer__thread_name(w, gt, "main");
	for (int i = 0; i < 2; i++) {
		struct prof_nvtx_event n = {
			.start_ns = XS_T0 + xs_range[i][0], .end_ns = XS_T0 + xs_range[i][1],
			.event_type = PROF_NVTX_PUSHPOP, .global_tid = gt, .end_global_tid = gt,
			.text_id = prof_writer__string(w, xs_range_name[i]),
		};
		rc |= prof_writer__nvtx(w, &n);
	}
	struct prof_nvtx_event mark = {
		.start_ns = XS_T0 + XS_MARK_AT, .end_ns = -1, .event_type = PROF_NVTX_MARK,
		.global_tid = gt, .text_id = prof_writer__string(w, "mark"),
	};
	rc |= prof_writer__nvtx(w, &mark);
	for (int i = 0; i < XS_NLAUNCH; i++) {
		const struct xs_launch *l = &xs_launches[i];
		struct prof_api_call a = {
			.start_ns = XS_T0 + l->api_start, .end_ns = XS_T0 + l->api_end, .global_tid = gt,
			.correlation_id = i + 1, .name_id = prof_writer__string(w, l->api),
		};
		rc |= prof_writer__api(w, l->domain, &a);
		if (l->gpu == XS_KERNEL) {
			struct prof_kernel k = {
				.start_ns = XS_T0 + l->gpu_start, .end_ns = XS_T0 + l->gpu_end,
				.stream_id = l->stream, .correlation_id = i + 1, .global_pid = gp,
				.demangled_name = prof_writer__string(w, l->kernel),
				.grid_x = 4, .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1,
				.block_z = 1, .registers_per_thread = 32,
			};
			k.short_name = k.demangled_name;
			rc |= prof_writer__kernel(w, &k);
		} else if (l->gpu == XS_MEMCPY) {
			struct prof_memcpy m = {
				.start_ns = XS_T0 + l->gpu_start, .end_ns = XS_T0 + l->gpu_end,
				.stream_id = l->stream, .correlation_id = i + 1, .global_pid = gp,
				.bytes = XS_MEMCPY_BYTES, .copy_kind = PROF_COPY_HTOD,
				.src_kind = PROF_MEM_PINNED, .dst_kind = PROF_MEM_DEVICE,
			};
			rc |= prof_writer__memcpy(w, &m);
		} else if (l->gpu == XS_MEMSET) {
			struct prof_memset m = {
				.start_ns = XS_T0 + l->gpu_start, .end_ns = XS_T0 + l->gpu_end,
				.stream_id = l->stream, .correlation_id = i + 1, .global_pid = gp,
				.bytes = 4096, .mem_kind = PROF_MEM_DEVICE,
			};
			rc |= prof_writer__memset(w, &m);
		}
	}
	struct prof_kernel orphan = {
		.start_ns = XS_T0 + XS_ORPHAN_START, .end_ns = XS_T0 + XS_ORPHAN_END,
		.stream_id = XS_ORPHAN_STREAM, .correlation_id = 999, .global_pid = gp,
		.demangled_name = prof_writer__string(w, "orphan"), .grid_x = 1, .grid_y = 1,
		.grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1, .registers_per_thread = 16,
	};
	rc |= prof_writer__kernel(w, &orphan);
	for (int i = 0; i < 3; i++) {
		struct prof_memory_event e = {
			.start_ns = XS_T0 + xs_mem[i][0], .global_pid = gp, .bytes = xs_mem[i][1],
			.operation = (int32_t)xs_mem[i][2], .mem_kind = PROF_MEM_DEVICE,
			.address = 0x1000,
		};
		rc |= prof_writer__memory(w, &e);
	}
	if (with_gpu_info) {
		/* H100 SXM limits */
		struct prof_gpu_info g = {
			.id = 0, .name = "Test GPU", .compute_major = 9, .compute_minor = 0,
			.sm_count = 132, .max_warps_per_sm = 64, .threads_per_warp = 32,
			.max_blocks_per_sm = 32, .max_registers_per_sm = 65536,
			.max_registers_per_block = 65536, .max_shared_per_sm_bytes = 233472,
			.max_shared_per_block_bytes = 232448, .max_threads_per_block = 1024,
			.total_memory_bytes = 80LL << 30,
		};
		rc |= prof_writer__gpu(w, &g);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
}

static inline int64_t xs_kernel_total_ns(void)
{
	int64_t t = XS_ORPHAN_END - XS_ORPHAN_START;

	for (int i = 0; i < XS_NLAUNCH; i++)
		if (xs_launches[i].gpu == XS_KERNEL)
			t += xs_launches[i].gpu_end - xs_launches[i].gpu_start;
	return t;
}

#endif
