/* test_store_roundtrip.c - every event kind written through the writer reads
 * back field by field; strings intern to one id; counters add up; meta keys
 * are replaced. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "testutil.h"

/* A writer on a fresh temporary file; its path is copied into path. */
static struct prof_writer *new_writer(const char *name, char *path, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_writer *w = NULL;

	snprintf(path, cap, "%s", testutil_tmp_path(name));
	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	return w;
}

static struct prof_store *finish_and_open(struct prof_writer *w, const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	char copy[512];

	snprintf(copy, sizeof copy, "%s", path);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open(copy, &s, &err) == 0, "%s", err.msg);
	return s;
}

/* Run sql, expect exactly one row, leave the cursor on it. */
static struct prof_cursor *one_row(struct prof_store *s, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	return c;
}

static void expect_end(struct prof_cursor *c)
{
	struct prof_error err = { 0 };

	ck_assert_int_eq(prof_cursor__next(c, &err), 0);
	prof_cursor__close(c);
}

static const char *string_of(struct prof_store *s, int64_t id, char *buf, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT value FROM StringIds WHERE id = ?1", &c, &err), 0);
	prof_cursor__bind_int64(c, 1, id);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	snprintf(buf, cap, "%s", prof_cursor__text(c, 0));
	prof_cursor__close(c);
	return buf;
}

START_TEST(store_kernel_round_trips_every_field)
{
	char path[512], buf[64];
	struct prof_writer *w = new_writer("kernel.sqlite", path, sizeof path);
	struct prof_kernel k = {
		.start_ns = 1700000000123456789LL, .end_ns = 1700000000123466789LL,
		.device_id = 1, .context_id = 2, .green_context_id = 3, .stream_id = 7,
		.correlation_id = 4242, .global_pid = prof_global_pid(31337),
		.launch_type = 1, .cache_config = 2, .registers_per_thread = 40,
		.grid_x = 1024, .grid_y = 2, .grid_z = 3, .block_x = 256, .block_y = 4, .block_z = 1,
		.static_shared_bytes = 4096, .dynamic_shared_bytes = 8192,
		.local_memory_per_thread_bytes = 16, .local_memory_total_bytes = 123456789,
		.grid_id = 99, .shared_memory_executed_bytes = 65536, .graph_node_id = 5,
		.shared_memory_limit_config = 1,
	};
	struct prof_store *s;
	struct prof_cursor *c;

	k.demangled_name = prof_writer__string(w, "void gemm<float>(float*, int)");
	k.short_name = prof_writer__string(w, "gemm");
	k.mangled_name = prof_writer__string(w, "_Z4gemmIfEvPfi");
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT start, end, deviceId, contextId, greenContextId, streamId,"
		    " correlationId, globalPid, demangledName, shortName, mangledName, launchType,"
		    " cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,"
		    " staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
		    " localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId,"
		    " sharedMemoryLimitConfig FROM CUPTI_ACTIVITY_KIND_KERNEL");
	ck_assert_int_eq(prof_cursor__int64(c, 0), k.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), k.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), k.device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 3), k.context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 4), k.green_context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 5), k.stream_id);
	ck_assert_int_eq(prof_cursor__int64(c, 6), k.correlation_id);
	ck_assert_int_eq(prof_cursor__int64(c, 7), k.global_pid);
	ck_assert_int_eq(prof_cursor__int64(c, 8), k.demangled_name);
	ck_assert_int_eq(prof_cursor__int64(c, 9), k.short_name);
	ck_assert_int_eq(prof_cursor__int64(c, 10), k.mangled_name);
	ck_assert_int_eq(prof_cursor__int64(c, 11), k.launch_type);
	ck_assert_int_eq(prof_cursor__int64(c, 12), k.cache_config);
	ck_assert_int_eq(prof_cursor__int64(c, 13), k.registers_per_thread);
	ck_assert_int_eq(prof_cursor__int64(c, 14), k.grid_x);
	ck_assert_int_eq(prof_cursor__int64(c, 15), k.grid_y);
	ck_assert_int_eq(prof_cursor__int64(c, 16), k.grid_z);
	ck_assert_int_eq(prof_cursor__int64(c, 17), k.block_x);
	ck_assert_int_eq(prof_cursor__int64(c, 18), k.block_y);
	ck_assert_int_eq(prof_cursor__int64(c, 19), k.block_z);
	ck_assert_int_eq(prof_cursor__int64(c, 20), k.static_shared_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 21), k.dynamic_shared_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 22), k.local_memory_per_thread_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 23), k.local_memory_total_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 24), k.grid_id);
	ck_assert_int_eq(prof_cursor__int64(c, 25), k.shared_memory_executed_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 26), k.graph_node_id);
	ck_assert_int_eq(prof_cursor__int64(c, 27), k.shared_memory_limit_config);
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 8), buf, sizeof buf),
			 "void gemm<float>(float*, int)");
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 9), buf, sizeof buf), "gemm");
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 10), buf, sizeof buf), "_Z4gemmIfEvPfi");
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_memcpy_and_memset_round_trip_every_field)
{
	char path[512];
	struct prof_writer *w = new_writer("copy.sqlite", path, sizeof path);
	struct prof_memcpy m = {
		.start_ns = 1000, .end_ns = 5000, .device_id = 1, .context_id = 2,
		.green_context_id = 9, .stream_id = 13, .correlation_id = 77,
		.global_pid = prof_global_pid(12), .bytes = 1LL << 33, .copy_kind = PROF_COPY_DTOH,
		.src_kind = PROF_MEM_DEVICE, .dst_kind = PROF_MEM_PINNED, .src_device_id = 1,
		.src_context_id = 2, .dst_device_id = 3, .dst_context_id = 4,
		.migration_cause = 5, .graph_node_id = 6,
	};
	struct prof_memset ms = {
		.start_ns = 6000, .end_ns = 6500, .device_id = 1, .context_id = 2,
		.green_context_id = 8, .stream_id = 14, .correlation_id = 78,
		.global_pid = prof_global_pid(12), .value = 0xAB, .bytes = 4096,
		.graph_node_id = 11, .mem_kind = PROF_MEM_MANAGED,
	};
	struct prof_store *s;
	struct prof_cursor *c;

	ck_assert_int_eq(prof_writer__memcpy(w, &m), 0);
	ck_assert_int_eq(prof_writer__memset(w, &ms), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT start, end, deviceId, contextId, greenContextId, streamId,"
		    " correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId,"
		    " srcContextId, dstDeviceId, dstContextId, migrationCause, graphNodeId"
		    " FROM CUPTI_ACTIVITY_KIND_MEMCPY");
	ck_assert_int_eq(prof_cursor__int64(c, 0), m.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), m.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), m.device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 3), m.context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 4), m.green_context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 5), m.stream_id);
	ck_assert_int_eq(prof_cursor__int64(c, 6), m.correlation_id);
	ck_assert_int_eq(prof_cursor__int64(c, 7), m.global_pid);
	ck_assert_int_eq(prof_cursor__int64(c, 8), m.bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 9), m.copy_kind);
	ck_assert_int_eq(prof_cursor__int64(c, 10), m.src_kind);
	ck_assert_int_eq(prof_cursor__int64(c, 11), m.dst_kind);
	ck_assert_int_eq(prof_cursor__int64(c, 12), m.src_device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 13), m.src_context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 14), m.dst_device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 15), m.dst_context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 16), m.migration_cause);
	ck_assert_int_eq(prof_cursor__int64(c, 17), m.graph_node_id);
	expect_end(c);
	c = one_row(s, "SELECT start, end, deviceId, contextId, greenContextId, streamId,"
		    " correlationId, globalPid, value, bytes, graphNodeId, memKind"
		    " FROM CUPTI_ACTIVITY_KIND_MEMSET");
	ck_assert_int_eq(prof_cursor__int64(c, 0), ms.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), ms.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), ms.device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 3), ms.context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 4), ms.green_context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 5), ms.stream_id);
	ck_assert_int_eq(prof_cursor__int64(c, 6), ms.correlation_id);
	ck_assert_int_eq(prof_cursor__int64(c, 7), ms.global_pid);
	ck_assert_int_eq(prof_cursor__int64(c, 8), ms.value);
	ck_assert_int_eq(prof_cursor__int64(c, 9), ms.bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 10), ms.graph_node_id);
	ck_assert_int_eq(prof_cursor__int64(c, 11), ms.mem_kind);
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_api_calls_go_to_runtime_or_driver_table)
{
	char path[512], buf[64];
	struct prof_writer *w = new_writer("api.sqlite", path, sizeof path);
	struct prof_api_call rt = {
		.start_ns = 10, .end_ns = 20, .event_class = 0,
		.global_tid = prof_global_tid(100, 101), .correlation_id = 5,
		.return_value = 2, .callchain_id = 3,
	};
	struct prof_api_call drv = rt;
	struct prof_store *s;
	struct prof_cursor *c;

	rt.name_id = prof_writer__string(w, "cudaMemcpy_v3020");
	drv.name_id = prof_writer__string(w, "cuLaunchKernel");
	drv.start_ns = 30;
	drv.end_ns = 45;
	drv.correlation_id = 6;
	ck_assert_int_eq(prof_writer__api(w, PROF_API_RUNTIME, &rt), 0);
	ck_assert_int_eq(prof_writer__api(w, PROF_API_DRIVER, &drv), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT start, end, eventClass, globalTid, correlationId, nameId,"
		    " returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME");
	ck_assert_int_eq(prof_cursor__int64(c, 0), rt.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), rt.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), rt.event_class);
	ck_assert_int_eq(prof_cursor__int64(c, 3), rt.global_tid);
	ck_assert_int_eq(prof_cursor__int64(c, 4), rt.correlation_id);
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 5), buf, sizeof buf), "cudaMemcpy_v3020");
	ck_assert_int_eq(prof_cursor__int64(c, 6), rt.return_value);
	ck_assert_int_eq(prof_cursor__int64(c, 7), rt.callchain_id);
	expect_end(c);
	c = one_row(s, "SELECT start, end, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_DRIVER");
	ck_assert_int_eq(prof_cursor__int64(c, 0), drv.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), drv.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), drv.correlation_id);
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 3), buf, sizeof buf), "cuLaunchKernel");
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_sync_memory_overhead_round_trip_every_field)
{
	char path[512], buf[64];
	struct prof_writer *w = new_writer("misc.sqlite", path, sizeof path);
	struct prof_sync sy = {
		.start_ns = 100, .end_ns = 900, .device_id = 1, .context_id = 2, .stream_id = 3,
		.correlation_id = 4, .global_tid = prof_global_tid(7, 8), .event_id = 9,
		.sync_type = PROF_SYNC_STREAM,
	};
	struct prof_memory_event me = {
		.start_ns = 1234, .global_pid = prof_global_pid(7), .device_id = 1, .context_id = 2,
		.address = 0xFFFF800012345678ULL, .pc = 0x7f0000001234ULL, .bytes = 1 << 20,
		.mem_kind = PROF_MEM_DEVICE, .operation = 1, .correlation_id = 55, .stream_id = 6,
	};
	struct prof_overhead ov = {
		.start_ns = 5, .end_ns = 15, .global_tid = prof_global_tid(7, 9),
	};
	struct prof_store *s;
	struct prof_cursor *c;

	me.name_id = prof_writer__string(w, "weights");
	ov.name_id = prof_writer__string(w, "CUPTI buffer flush");
	ck_assert_int_eq(prof_writer__sync(w, &sy), 0);
	ck_assert_int_eq(prof_writer__memory(w, &me), 0);
	ck_assert_int_eq(prof_writer__overhead(w, &ov), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT start, end, deviceId, contextId, streamId, correlationId, globalTid,"
		    " eventId, syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
	ck_assert_int_eq(prof_cursor__int64(c, 0), sy.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), sy.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), sy.device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 3), sy.context_id);
	ck_assert_int_eq(prof_cursor__int64(c, 4), sy.stream_id);
	ck_assert_int_eq(prof_cursor__int64(c, 5), sy.correlation_id);
	ck_assert_int_eq(prof_cursor__int64(c, 6), sy.global_tid);
	ck_assert_int_eq(prof_cursor__int64(c, 7), sy.event_id);
	ck_assert_int_eq(prof_cursor__int64(c, 8), sy.sync_type);
	expect_end(c);
	c = one_row(s, "SELECT start, globalPid, deviceId, contextId, address, pc, bytes, memKind,"
		    " memoryOperationType, name, correlationId, streamId"
		    " FROM CUDA_GPU_MEMORY_USAGE_EVENTS");
	ck_assert_int_eq(prof_cursor__int64(c, 0), me.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), me.global_pid);
	ck_assert_int_eq(prof_cursor__int64(c, 2), me.device_id);
	ck_assert_int_eq(prof_cursor__int64(c, 3), me.context_id);
	ck_assert_uint_eq((uint64_t)prof_cursor__int64(c, 4), me.address);
	ck_assert_uint_eq((uint64_t)prof_cursor__int64(c, 5), me.pc);
	ck_assert_int_eq(prof_cursor__int64(c, 6), me.bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 7), me.mem_kind);
	ck_assert_int_eq(prof_cursor__int64(c, 8), me.operation);
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 9), buf, sizeof buf), "weights");
	ck_assert_int_eq(prof_cursor__int64(c, 10), me.correlation_id);
	ck_assert_int_eq(prof_cursor__int64(c, 11), me.stream_id);
	expect_end(c);
	c = one_row(s, "SELECT start, end, globalTid, nameId FROM PROFILER_OVERHEAD");
	ck_assert_int_eq(prof_cursor__int64(c, 0), ov.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), ov.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), ov.global_tid);
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 3), buf, sizeof buf), "CUPTI buffer flush");
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_nvtx_mark_has_null_end_and_ranges_keep_fields)
{
	char path[512], buf[64];
	struct prof_writer *w = new_writer("nvtx.sqlite", path, sizeof path);
	struct prof_nvtx_event range = {
		.start_ns = 100, .end_ns = 400, .event_type = PROF_NVTX_PUSHPOP, .range_id = 3,
		.category = 4, .color = (int32_t)0xFF00FF00, .global_tid = prof_global_tid(5, 6),
		.end_global_tid = prof_global_tid(5, 6), .domain_id = 2,
	};
	struct prof_nvtx_event mark = {
		.start_ns = 200, .end_ns = -1, .event_type = PROF_NVTX_MARK,
		.global_tid = prof_global_tid(5, 7),
	};
	/* started on one thread, ended on another */
	struct prof_nvtx_event crossing = {
		.start_ns = 300, .end_ns = 500, .event_type = PROF_NVTX_STARTEND, .range_id = 4,
		.global_tid = prof_global_tid(5, 6), .end_global_tid = prof_global_tid(5, 8),
	};
	struct prof_store *s;
	struct prof_cursor *c;

	range.text_id = prof_writer__string(w, "forward");
	mark.text_id = prof_writer__string(w, "checkpoint");
	crossing.text_id = prof_writer__string(w, "load");
	ck_assert_int_eq(prof_writer__nvtx(w, &range), 0);
	ck_assert_int_eq(prof_writer__nvtx(w, &mark), 0);
	ck_assert_int_eq(prof_writer__nvtx(w, &crossing), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT start, end, eventType, rangeId, category, color, globalTid,"
		    " endGlobalTid, textId, domainId FROM NVTX_EVENTS ORDER BY start");
	ck_assert_int_eq(prof_cursor__int64(c, 0), range.start_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 1), range.end_ns);
	ck_assert_int_eq(prof_cursor__int64(c, 2), range.event_type);
	ck_assert(prof_cursor__is_null(c, 3)); /* push/pop: no id, as in nsys's exports */
	ck_assert_int_eq(prof_cursor__int64(c, 4), range.category);
	ck_assert_int_eq((int32_t)prof_cursor__int64(c, 5), range.color);
	ck_assert_int_eq(prof_cursor__int64(c, 6), range.global_tid);
	/* push/pop: the range ends where it began, NULL as in nsys's exports */
	ck_assert(prof_cursor__is_null(c, 7));
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 8), buf, sizeof buf), "forward");
	ck_assert_int_eq(prof_cursor__int64(c, 9), range.domain_id);
	{
		struct prof_error err = { 0 };

		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		ck_assert_int_eq(prof_cursor__int64(c, 0), mark.start_ns);
		ck_assert(prof_cursor__is_null(c, 1));
		ck_assert_int_eq(prof_cursor__int64(c, 2), PROF_NVTX_MARK);
		ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 8), buf, sizeof buf), "checkpoint");
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		ck_assert_int_eq(prof_cursor__int64(c, 2), PROF_NVTX_STARTEND);
		ck_assert_int_eq(prof_cursor__int64(c, 3), crossing.range_id);
		ck_assert_int_eq(prof_cursor__int64(c, 6), crossing.global_tid);
		ck_assert_int_eq(prof_cursor__int64(c, 7), crossing.end_global_tid);
	}
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_gpu_process_thread_rows_round_trip)
{
	char path[512], buf[64];
	struct prof_writer *w = new_writer("target.sqlite", path, sizeof path);
	struct prof_gpu_info g = {
		.id = 0, .name = "NVIDIA H100 80GB HBM3", .bus_location = "0000:1b:00.0",
		.uuid = "GPU-1234", .chip_name = "GH100", .l2_cache_bytes = 52428800,
		.total_memory_bytes = 85520809984LL, .memory_bandwidth_bytes_per_s = 3352320000000LL,
		.clock_rate_hz = 1980000000, .sm_count = 132, .compute_major = 9, .compute_minor = 0,
		.max_warps_per_sm = 64, .threads_per_warp = 32, .max_blocks_per_sm = 32,
		.max_registers_per_sm = 65536, .max_registers_per_block = 65536,
		.max_shared_per_sm_bytes = 233472, .max_shared_per_block_bytes = 49152,
		.max_threads_per_block = 1024,
	};
	struct prof_store *s;
	struct prof_cursor *c;

	ck_assert_int_eq(prof_writer__gpu(w, &g), 0);
	ck_assert_int_eq(prof_writer__process(w, 4321, "python3"), 0);
	ck_assert_int_eq(prof_writer__thread_name(w, prof_global_tid(4321, 4322), "loader"), 0);
	s = finish_and_open(w, path);
	c = one_row(s, "SELECT id, name, busLocation, uuid, chipName, l2CacheSize, totalMemory,"
		    " memoryBandwidth, clockRate, smCount, computeMajor, computeMinor,"
		    " maxWarpsPerSm, threadsPerWarp, maxBlocksPerSm, maxRegistersPerSm,"
		    " maxRegistersPerBlock, maxShmemPerSm, maxShmemPerBlock, maxThreadsPerBlock"
		    " FROM TARGET_INFO_GPU");
	ck_assert_int_eq(prof_cursor__int64(c, 0), g.id);
	ck_assert_str_eq(prof_cursor__text(c, 1), g.name);
	ck_assert_str_eq(prof_cursor__text(c, 2), g.bus_location);
	ck_assert_str_eq(prof_cursor__text(c, 3), g.uuid);
	ck_assert_str_eq(prof_cursor__text(c, 4), g.chip_name);
	ck_assert_int_eq(prof_cursor__int64(c, 5), g.l2_cache_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 6), g.total_memory_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 7), g.memory_bandwidth_bytes_per_s);
	ck_assert_int_eq(prof_cursor__int64(c, 8), g.clock_rate_hz);
	ck_assert_int_eq(prof_cursor__int64(c, 9), g.sm_count);
	ck_assert_int_eq(prof_cursor__int64(c, 10), g.compute_major);
	ck_assert_int_eq(prof_cursor__int64(c, 11), g.compute_minor);
	ck_assert_int_eq(prof_cursor__int64(c, 12), g.max_warps_per_sm);
	ck_assert_int_eq(prof_cursor__int64(c, 13), g.threads_per_warp);
	ck_assert_int_eq(prof_cursor__int64(c, 14), g.max_blocks_per_sm);
	ck_assert_int_eq(prof_cursor__int64(c, 15), g.max_registers_per_sm);
	ck_assert_int_eq(prof_cursor__int64(c, 16), g.max_registers_per_block);
	ck_assert_int_eq(prof_cursor__int64(c, 17), g.max_shared_per_sm_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 18), g.max_shared_per_block_bytes);
	ck_assert_int_eq(prof_cursor__int64(c, 19), g.max_threads_per_block);
	expect_end(c);
	c = one_row(s, "SELECT globalPid, pid, name FROM PROCESSES");
	ck_assert_int_eq(prof_cursor__int64(c, 0), prof_global_pid(4321));
	ck_assert_int_eq(prof_cursor__int64(c, 1), 4321);
	ck_assert_str_eq(prof_cursor__text(c, 2), "python3");
	expect_end(c);
	c = one_row(s, "SELECT nameId, globalTid FROM ThreadNames");
	ck_assert_str_eq(string_of(s, prof_cursor__int64(c, 0), buf, sizeof buf), "loader");
	ck_assert_int_eq(prof_cursor__int64(c, 1), prof_global_tid(4321, 4322));
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_string_interning_gives_one_id_per_text)
{
	char path[512], name[32];
	struct prof_writer *w = new_writer("strings.sqlite", path, sizeof path);
	int64_t ids[3000];
	struct prof_store *s;

	/* Enough names to make the hash table grow several times. */
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof name, "kernel_%d", i);
		ids[i] = prof_writer__string(w, name);
		ck_assert_int_gt(ids[i], 0);
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof name, "kernel_%d", i);
		ck_assert_int_eq(prof_writer__string(w, name), ids[i]);
	}
	ck_assert_int_eq(prof_writer__string(w, NULL), 0);
	ck_assert_int_ne(prof_writer__string(w, "kernel_1"), prof_writer__string(w, "kernel_10"));
	s = finish_and_open(w, path);
	ck_assert_int_eq(prof_store__count(s, "StringIds"), 3000);
	prof_store__close(s);
}
END_TEST

START_TEST(store_counters_accumulate_and_meta_is_replaced)
{
	char path[512], *v;
	struct prof_writer *w = new_writer("meta.sqlite", path, sizeof path);
	struct prof_store *s;

	ck_assert_int_eq(prof_writer__count(w, "dropped_records", 5), 0);
	ck_assert_int_eq(prof_writer__count(w, "dropped_records", 7), 0);
	ck_assert_int_eq(prof_writer__count(w, "incomplete_kernels", 1), 0);
	ck_assert_int_eq(prof_writer__meta(w, "exit_status", "1"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "exit_status", "0"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "command", "./app --size 3"), 0);
	s = finish_and_open(w, path);
	ck_assert_int_eq(prof_store__counter(s, "dropped_records"), 12);
	ck_assert_int_eq(prof_store__counter(s, "incomplete_kernels"), 1);
	ck_assert_int_eq(prof_store__counter(s, "never_counted"), 0);
	v = prof_store__meta(s, "exit_status");
	ck_assert_str_eq(v, "0");
	free(v);
	v = prof_store__meta(s, "command");
	ck_assert_str_eq(v, "./app --size 3");
	free(v);
	ck_assert_ptr_null(prof_store__meta(s, "no_such_key"));
	prof_store__close(s);
}
END_TEST

START_TEST(store_records_schema_version_and_finished)
{
	char path[512], expect[16], *v;
	struct prof_writer *w = new_writer("version.sqlite", path, sizeof path);
	struct prof_store *s;
	struct prof_cursor *c;

	s = finish_and_open(w, path);
	ck_assert_int_eq(prof_store__kind(s), PROF_STORE_PERFKIT);
	ck_assert(prof_store__is_finished(s));
	snprintf(expect, sizeof expect, "%d", PROF_SCHEMA_VERSION);
	v = prof_store__meta(s, "schema_version");
	ck_assert_str_eq(v, expect);
	free(v);
	c = one_row(s, "PRAGMA user_version");
	ck_assert_int_eq(prof_cursor__int64(c, 0), PROF_SCHEMA_VERSION);
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_empty_capture_has_every_table)
{
	static const char *const tables[] = {
		"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"CUPTI_ACTIVITY_KIND_DRIVER", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
		"CUDA_GPU_MEMORY_USAGE_EVENTS", "NVTX_EVENTS", "TARGET_INFO_GPU", "PROCESSES",
		"ThreadNames", "TARGET_INFO_SESSION_START_TIME", "PROFILER_OVERHEAD",
		"ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "PERFKIT_META", "PERFKIT_COUNTERS",
	};
	char path[512];
	struct prof_writer *w = new_writer("empty.sqlite", path, sizeof path);
	struct prof_store *s;

	s = finish_and_open(w, path);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		ck_assert_msg(prof_store__has_table(s, tables[i]), "%s missing", tables[i]);
	ck_assert(!prof_store__has_table(s, "NO_SUCH_TABLE"));
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 0);
	ck_assert_int_eq(prof_store__count(s, "NO_SUCH_TABLE"), 0);
	/* the enum tables carry every value event.h names */
	ck_assert_int_eq(prof_store__count(s, "ENUM_CUDA_MEMCPY_OPER"), PROF_COPY_UVM_DTOD + 1);
	ck_assert_int_eq(prof_store__count(s, "ENUM_CUDA_MEM_KIND"), PROF_MEM_UNKNOWN + 1);
	prof_store__close(s);
}
END_TEST

/* Python's tables are made with their first row, as nsys makes its
 * tables: a capture without Python rows has none of them (its file is as
 * it was before they existed), one with a sample has the samples' table
 * and its rows, and the frames' index is built only where its table is. */
START_TEST(store_python_tables_come_with_their_first_row)
{
	char path[512];
	struct prof_writer *w = new_writer("no_python.sqlite", path, sizeof path);
	struct prof_store *s = finish_and_open(w, path);
	struct prof_py_sample sample = { .start_ns = 1000, .global_tid = prof_global_tid(7, 8),
					 .global_pid = prof_global_pid(7), .stack_id = 3,
					 .state = PROF_PY_IN_CUDA };
	struct prof_py_frame frame = { .global_pid = prof_global_pid(7), .stack_id = 3, .depth = 0,
				       .line = 42, .kind = PROF_PY_FRAME_PYTHON };
	struct prof_cursor *c;

	ck_assert(!prof_store__has_table(s, "PERFKIT_PYTHON_SAMPLES"));
	ck_assert(!prof_store__has_table(s, "PERFKIT_PYTHON_FRAMES"));
	ck_assert(!prof_store__has_table(s, "PERFKIT_PYTHON_CUDA_CALLS"));
	prof_store__close(s);

	w = new_writer("python.sqlite", path, sizeof path);
	frame.function = prof_writer__string(w, "step");
	frame.file = prof_writer__string(w, "train.py");
	ck_assert_int_eq(prof_writer__py_sample(w, &sample), 0);
	ck_assert_int_eq(prof_writer__py_sample(w, &sample), 0);
	ck_assert_int_eq(prof_writer__py_frame(w, &frame), 0);
	s = finish_and_open(w, path);
	ck_assert(!prof_store__has_table(s, "PERFKIT_PYTHON_CUDA_CALLS"));
	ck_assert_int_eq(prof_store__count(s, "PERFKIT_PYTHON_SAMPLES"), 2);
	c = one_row(s, "SELECT f.line, fn.value, fs.value, p.state FROM PERFKIT_PYTHON_FRAMES f"
		    " JOIN StringIds fn ON fn.id = f.functionId JOIN StringIds fs ON fs.id = f.fileId"
		    " JOIN (SELECT DISTINCT globalPid, stackId, state FROM PERFKIT_PYTHON_SAMPLES) p"
		    " ON p.globalPid = f.globalPid AND p.stackId = f.stackId");
	ck_assert_int_eq(prof_cursor__int64(c, 0), 42);
	ck_assert_str_eq(prof_cursor__text(c, 1), "step");
	ck_assert_str_eq(prof_cursor__text(c, 2), "train.py");
	ck_assert_int_eq(prof_cursor__int64(c, 3), PROF_PY_IN_CUDA);
	expect_end(c);
	c = one_row(s, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
		    " AND name = 'perfkit_py_frames_stack'");
	ck_assert_int_eq(prof_cursor__int64(c, 0), 1);
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_memcpy_kind_labels_follow_nsys)
{
	char path[512];
	struct prof_writer *w = new_writer("labels.sqlite", path, sizeof path);
	struct prof_store *s;
	struct prof_cursor *c;

	s = finish_and_open(w, path);
	c = one_row(s, "SELECT label FROM ENUM_CUDA_MEMCPY_OPER WHERE id = 1");
	ck_assert_str_eq(prof_cursor__text(c, 0), "Host-to-Device");
	expect_end(c);
	c = one_row(s, "SELECT label FROM ENUM_CUDA_MEM_KIND WHERE id = 1");
	ck_assert_str_eq(prof_cursor__text(c, 0), "Pinned");
	expect_end(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_writer_refuses_existing_file_unless_overwrite)
{
	struct prof_error err = { 0 };
	char path[512];
	struct prof_writer *w = new_writer("exists.sqlite", path, sizeof path);

	ck_assert_int_eq(prof_writer__finish(w, &err), 0);
	w = NULL;
	ck_assert_int_eq(prof_writer__create(path, 0, &w, &err), PROF_E_EXISTS);
	ck_assert_ptr_null(w);
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_int_eq(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err), 0);
	prof_writer__delete(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_roundtrip");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_kernel_round_trips_every_field);
	tcase_add_test(tc, store_memcpy_and_memset_round_trip_every_field);
	tcase_add_test(tc, store_api_calls_go_to_runtime_or_driver_table);
	tcase_add_test(tc, store_sync_memory_overhead_round_trip_every_field);
	tcase_add_test(tc, store_nvtx_mark_has_null_end_and_ranges_keep_fields);
	tcase_add_test(tc, store_gpu_process_thread_rows_round_trip);
	tcase_add_test(tc, store_string_interning_gives_one_id_per_text);
	tcase_add_test(tc, store_counters_accumulate_and_meta_is_replaced);
	tcase_add_test(tc, store_records_schema_version_and_finished);
	tcase_add_test(tc, store_empty_capture_has_every_table);
	tcase_add_test(tc, store_python_tables_come_with_their_first_row);
	tcase_add_test(tc, store_memcpy_kind_labels_follow_nsys);
	tcase_add_test(tc, store_writer_refuses_existing_file_unless_overwrite);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
