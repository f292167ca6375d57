/* schema.c - the DDL of a capture: Nsight Systems export tables and columns
 * for CUDA and NVTX data, PERFKIT_* tables for run metadata and counters, and
 * the PERFKIT_* analysis tables a finished capture gains afterwards. */
#include "schema.h"

#include <stdio.h>
#include <string.h>

#include "prof/event.h"
#include "prof/store.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define COL(n) { .name = n, .decl = "INTEGER" }
#define SID(n) { .name = n, .decl = "INTEGER", .string_id = true }
#define TXT(n) { .name = n, .decl = "TEXT" }
#define REAL(n) { .name = n, .decl = "REAL" }
#define BLOB(n) { .name = n, .decl = "BLOB" }
/* Columns the writer binds from field f of the row struct S (schema.h). */
#define I(S, n, f) { .name = n, .decl = "INTEGER", SCHEMA_FIELD(S, f) }
#define I_SID(S, n, f)                                                       \
	{ .name = n, .decl = "INTEGER", .string_id = true, SCHEMA_FIELD(S, f),  \
	  .null_when = SCHEMA_NULL_IF_ZERO }
#define I_OPT(S, n, f, when) { .name = n, .decl = "INTEGER", SCHEMA_FIELD(S, f), .null_when = when }
#define I_KEY(S, n, f) { .name = n, .decl = "INTEGER NOT NULL", SCHEMA_FIELD(S, f) }
#define T_F(S, n, f) { .name = n, .decl = "TEXT", SCHEMA_FIELD(S, f) }
#define R_F(S, n, f) { .name = n, .decl = "REAL", SCHEMA_FIELD(S, f) }
#define B_F(S, n, f, len)                                                    \
	{ .name = n, .decl = "BLOB", SCHEMA_FIELD(S, f), .len_offset = offsetof(S, len) }

static const struct schema_column c_strings[] = {
	{ .name = "id", .decl = "INTEGER NOT NULL PRIMARY KEY" },
	{ .name = "value", .decl = "TEXT NOT NULL" },
};

#define K struct prof_kernel
static const struct schema_column c_kernel[] = {
	I(K, "start", start_ns), I(K, "end", end_ns), I(K, "deviceId", device_id),
	I(K, "contextId", context_id), I(K, "greenContextId", green_context_id),
	I(K, "streamId", stream_id), I(K, "correlationId", correlation_id),
	I(K, "globalPid", global_pid), I_SID(K, "demangledName", demangled_name),
	I_SID(K, "shortName", short_name), I_SID(K, "mangledName", mangled_name),
	I(K, "launchType", launch_type), I(K, "cacheConfig", cache_config),
	I(K, "registersPerThread", registers_per_thread), I(K, "gridX", grid_x),
	I(K, "gridY", grid_y), I(K, "gridZ", grid_z), I(K, "blockX", block_x),
	I(K, "blockY", block_y), I(K, "blockZ", block_z),
	I(K, "staticSharedMemory", static_shared_bytes),
	I(K, "dynamicSharedMemory", dynamic_shared_bytes),
	I(K, "localMemoryPerThread", local_memory_per_thread_bytes),
	I(K, "localMemoryTotal", local_memory_total_bytes), I(K, "gridId", grid_id),
	I(K, "sharedMemoryExecuted", shared_memory_executed_bytes),
	I(K, "graphNodeId", graph_node_id),
	I(K, "sharedMemoryLimitConfig", shared_memory_limit_config),
};
#undef K

#define M struct prof_memcpy
static const struct schema_column c_memcpy[] = {
	I(M, "start", start_ns), I(M, "end", end_ns), I(M, "deviceId", device_id),
	I(M, "contextId", context_id), I(M, "greenContextId", green_context_id),
	I(M, "streamId", stream_id), I(M, "correlationId", correlation_id),
	I(M, "globalPid", global_pid), I(M, "bytes", bytes), I(M, "copyKind", copy_kind),
	I(M, "srcKind", src_kind), I(M, "dstKind", dst_kind), I(M, "srcDeviceId", src_device_id),
	I(M, "srcContextId", src_context_id), I(M, "dstDeviceId", dst_device_id),
	I(M, "dstContextId", dst_context_id), I(M, "migrationCause", migration_cause),
	I(M, "graphNodeId", graph_node_id),
	/* CUPTI gives none for plain copies */
	I_OPT(M, "virtualAddress", virtual_address, SCHEMA_NULL_IF_ZERO),
};
#undef M

#define M struct prof_memset
static const struct schema_column c_memset[] = {
	I(M, "start", start_ns), I(M, "end", end_ns), I(M, "deviceId", device_id),
	I(M, "contextId", context_id), I(M, "greenContextId", green_context_id),
	I(M, "streamId", stream_id), I(M, "correlationId", correlation_id),
	I(M, "globalPid", global_pid), I(M, "value", value), I(M, "bytes", bytes),
	I(M, "graphNodeId", graph_node_id), I(M, "memKind", mem_kind),
};
#undef M

#define A struct prof_api_call
static const struct schema_column c_api[] = {
	I(A, "start", start_ns), I(A, "end", end_ns), I(A, "eventClass", event_class),
	I(A, "globalTid", global_tid), I(A, "correlationId", correlation_id),
	I_SID(A, "nameId", name_id), I(A, "returnValue", return_value),
	I(A, "callchainId", callchain_id),
};
#undef A

#define Y struct prof_sync
static const struct schema_column c_sync[] = {
	I(Y, "start", start_ns), I(Y, "end", end_ns), I(Y, "deviceId", device_id),
	I(Y, "contextId", context_id), I(Y, "streamId", stream_id),
	I(Y, "correlationId", correlation_id), I(Y, "globalTid", global_tid),
	I(Y, "eventId", event_id), I(Y, "syncType", sync_type),
};
#undef Y

#define E struct prof_memory_event
static const struct schema_column c_memory[] = {
	I(E, "start", start_ns), I(E, "globalPid", global_pid), I(E, "deviceId", device_id),
	I(E, "contextId", context_id), I(E, "address", address), I(E, "pc", pc),
	I(E, "bytes", bytes), I(E, "memKind", mem_kind), I(E, "memoryOperationType", operation),
	I_SID(E, "name", name_id), I(E, "correlationId", correlation_id),
	I(E, "streamId", stream_id),
};
#undef E

/* rangeId and endGlobalTid are the writer's to decide (prof_writer__nvtx):
 * NULL but for a start/end range. */
#define E struct prof_nvtx_event
static const struct schema_column c_nvtx[] = {
	I(E, "start", start_ns), I_OPT(E, "end", end_ns, SCHEMA_NULL_IF_NEGATIVE), /* marks */
	I(E, "eventType", event_type), I(E, "rangeId", range_id), I(E, "category", category),
	I_OPT(E, "color", color, SCHEMA_NULL_IF_ZERO),
	TXT("text"), /* names always go through StringIds */
	I(E, "globalTid", global_tid), I(E, "endGlobalTid", end_global_tid),
	I_SID(E, "textId", text_id), I(E, "domainId", domain_id),
	/* scalar payloads and JSON text: not recorded */
	COL("uint64Value"), COL("int64Value"), { .name = "doubleValue", .decl = "REAL" },
	COL("uint32Value"), COL("int32Value"), { .name = "floatValue", .decl = "REAL" },
	SID("jsonTextId"), TXT("jsonText"),
	/* an NVTX extended payload as nsys stores it: a 32-byte header (domain
	 * and schema id, payload size, total size) and the payload's bytes,
	 * described by NVTX_PAYLOAD_SCHEMAS of that domain and schema */
	B_F(E, "binaryData", binary, binary_len),
};
#undef E

#define G struct prof_gpu_info
static const struct schema_column c_gpu[] = {
	I(G, "id", id), T_F(G, "name", name), T_F(G, "busLocation", bus_location),
	I(G, "l2CacheSize", l2_cache_bytes), I(G, "totalMemory", total_memory_bytes),
	I(G, "memoryBandwidth", memory_bandwidth_bytes_per_s), I(G, "clockRate", clock_rate_hz),
	I(G, "smCount", sm_count), T_F(G, "uuid", uuid), T_F(G, "chipName", chip_name),
	I(G, "computeMajor", compute_major), I(G, "computeMinor", compute_minor),
	I(G, "maxWarpsPerSm", max_warps_per_sm), I(G, "threadsPerWarp", threads_per_warp),
	I(G, "maxBlocksPerSm", max_blocks_per_sm), I(G, "maxRegistersPerSm", max_registers_per_sm),
	I(G, "maxRegistersPerBlock", max_registers_per_block),
	I(G, "maxShmemPerSm", max_shared_per_sm_bytes),
	I(G, "maxShmemPerBlock", max_shared_per_block_bytes),
	I(G, "maxThreadsPerBlock", max_threads_per_block),
};
#undef G

static const struct schema_column c_processes[] = {
	I(struct schema_process_row, "globalPid", global_pid),
	I(struct schema_process_row, "pid", pid), T_F(struct schema_process_row, "name", name),
};

static const struct schema_column c_thread_names[] = {
	I_SID(struct schema_thread_name_row, "nameId", name_id),
	COL("priority"), /* not known to CUPTI */
	I(struct schema_thread_name_row, "globalTid", global_tid),
};

static const struct schema_column c_session_start[] = {
	COL("utcEpochNs"),
};

#define O struct prof_overhead
static const struct schema_column c_overhead[] = {
	I(O, "start", start_ns), I(O, "end", end_ns), I(O, "globalTid", global_tid),
	I_SID(O, "nameId", name_id),
};
#undef O

static const struct schema_column c_enum[] = {
	{ .name = "id", .decl = "INTEGER NOT NULL PRIMARY KEY" }, TXT("name"), TXT("label"),
};

static const struct schema_column c_meta[] = {
	{ .name = "key", .decl = "TEXT NOT NULL PRIMARY KEY" }, TXT("value"),
};

static const struct schema_column c_counters[] = {
	{ .name = "name", .decl = "TEXT NOT NULL PRIMARY KEY" },
	{ .name = "value", .decl = "INTEGER NOT NULL" },
};

/* Where a process stands in a job: the host it ran on and, when its
 * launcher numbered it (torchrun, Open MPI, PMI, Slurm), its rank; rank,
 * worldSize and localRank are NULL for a process that is not a rank (the
 * launcher itself, data-loader workers). */
#define P struct prof_process_info
static const struct schema_column c_proc_info[] = {
	I_KEY(P, "globalPid", global_pid), T_F(P, "host", host),
	I_OPT(P, "rank", rank, SCHEMA_NULL_IF_NEGATIVE),
	I_OPT(P, "worldSize", world_size, SCHEMA_NULL_IF_NEGATIVE),
	I_OPT(P, "localRank", local_rank, SCHEMA_NULL_IF_NEGATIVE), T_F(P, "launcher", launcher),
};
#undef P

/* Clock pairs: the host's realtime clock and the capture's timestamp
 * (CUPTI's) read together, at the start ('start') and end ('end') of each
 * process, so captures of different hosts can be put on one time base. */
#define C struct prof_clock_pair
static const struct schema_column c_clocks[] = {
	I_KEY(C, "globalPid", global_pid), T_F(C, "host", host), T_F(C, "at", at),
	I(C, "realtimeNs", realtime_ns), I(C, "timestampNs", timestamp_ns),
};
#undef C

/* The GPUs a process saw, by its own device number: deviceId of its
 * kernels and copies is this ordinal (CUDA_VISIBLE_DEVICES renumbers them
 * per process), uuid names the physical GPU across processes and hosts. */
#define P struct schema_process_gpu_row
static const struct schema_column c_proc_gpus[] = {
	I_KEY(P, "globalPid", global_pid), I(P, "deviceId", device_id), T_F(P, "uuid", uuid),
};
#undef P

/* Sampled hardware counters (`perfkit run --gpu-metrics`), as nsys stores
 * its GPU metrics: one row per sample and metric. timestamp is the end of
 * the sample's period (its start is the previous sample's timestamp of the
 * same typeId); typeId's low 8 bits are the deviceId of the process that
 * sampled it, the bits above tell samplers apart in a merged capture. */
#define S struct prof_gpu_metric
static const struct schema_column c_gpu_metrics[] = {
	I(S, "timestamp", timestamp_ns), I(S, "typeId", type_id), I(S, "metricId", metric_id),
	R_F(S, "value", value),
};
#undef S

/* What each (typeId, metricId) of GPU_METRICS measures, with nsys's names
 * ("SMs Active [Throughput %]"); globalPid: the sampling process. */
#define S struct prof_gpu_metric_type
static const struct schema_column c_gpu_metric_types[] = {
	I(S, "typeId", type_id), I(S, "sourceId", source_id), T_F(S, "typeName", type_name),
	I(S, "metricId", metric_id), T_F(S, "metricName", metric_name),
	I(S, "globalPid", global_pid),
};
#undef S

/* NVTX payload schemas, their entries and enums, as nsys exports them. */
#define S struct prof_payload_schema
static const struct schema_column c_payload_schemas[] = {
	I(S, "domainId", domain_id), I(S, "schemaId", schema_id), T_F(S, "name", name),
	I(S, "type", type), I(S, "flags", flags), I(S, "numEntries", num_entries),
	I(S, "payloadSize", payload_size), I(S, "alignTo", align_to),
	I(S, "globalPid", global_pid),
};
#undef S

#define S struct prof_payload_entry
static const struct schema_column c_payload_schema_entries[] = {
	I_KEY(S, "domainId", domain_id), I_KEY(S, "schemaId", schema_id), I_KEY(S, "idx", idx),
	I(S, "flags", flags), I(S, "type", type), T_F(S, "name", name),
	T_F(S, "description", description),
	I(S, "arrayOrUnionDetail", array_or_union_detail), I(S, "offset", offset),
	I(S, "globalPid", global_pid),
};
#undef S

#define S struct prof_payload_enum_entry
static const struct schema_column c_payload_enum_entries[] = {
	I_KEY(S, "domainId", domain_id), I_KEY(S, "schemaId", schema_id), I_KEY(S, "idx", idx),
	T_F(S, "name", name), I(S, "value", value), I(S, "isFlag", is_flag),
	I(S, "globalPid", global_pid),
};
#undef S

/* Unified-memory page faults, as nsys exports them (its schema reference):
 * a host access to managed pages that were on a GPU, with the function and
 * module its pc lies in; and a GPU's faults on one page, numberOfPageFaults
 * of them, from the driver taking them up to the replay (faultAccessType:
 * enum prof_um_access_type). The migrations they cause are memcpy rows. */
#define F struct prof_um_cpu_fault
static const struct schema_column c_um_cpu_faults[] = {
	I(F, "start", start_ns), I(F, "globalPid", global_pid), I(F, "address", address),
	I(F, "originalFaultPc", pc), I_SID(F, "CpuInstruction", function),
	I_SID(F, "module", module), I(F, "unresolvedFaultPc", unresolved),
	SID("sourceFile"), COL("sourceLine"), /* no line tables read */
};
#undef F

#define F struct prof_um_gpu_fault
static const struct schema_column c_um_gpu_faults[] = {
	I(F, "start", start_ns), I(F, "end", end_ns), I(F, "globalPid", global_pid),
	I(F, "deviceId", device_id), I(F, "address", address),
	I(F, "numberOfPageFaults", faults), I(F, "faultAccessType", access_type),
};
#undef F

/* Python's stacks (perfkit run --python-sampling and --python-backtrace):
 * perfkit's own tables, as nsys has none for them. A stack is written once
 * (a row a frame, depth 0 innermost) and named by its stackId within the
 * process; a sample and a CUDA call name the stack they saw. */
#define F struct prof_py_frame
static const struct schema_column c_py_frames[] = {
	I(F, "globalPid", global_pid), I(F, "stackId", stack_id), I(F, "depth", depth),
	I_SID(F, "functionId", function), I_SID(F, "fileId", file), I(F, "line", line),
	I(F, "kind", kind),
};
#undef F

#define F struct prof_py_sample
static const struct schema_column c_py_samples[] = {
	I(F, "start", start_ns), I(F, "globalTid", global_tid), I(F, "globalPid", global_pid),
	I(F, "stackId", stack_id), I(F, "state", state),
};
#undef F

#define F struct prof_py_cuda_call
static const struct schema_column c_py_cuda_calls[] = {
	I(F, "globalTid", global_tid), I(F, "globalPid", global_pid),
	I(F, "correlationId", correlation_id), I(F, "stackId", stack_id),
};
#undef F

/* Capture windows (perfkit run --capture-range, --delay, --duration,
 * perfkit start/stop): perfkit's own table, as nsys keeps its capture range
 * out of the export. A row is written when its window opens and its end
 * filled in when it closes. */
#define F struct prof_capture_window
static const struct schema_column c_capture_windows[] = {
	I_KEY(F, "globalPid", global_pid), I(F, "id", id), I(F, "start", start_ns),
	I_OPT(F, "end", end_ns, SCHEMA_NULL_IF_NEGATIVE), T_F(F, "openedBy", opened_by),
	T_F(F, "closedBy", closed_by),
};
#undef F

/* A CUDA graph's launch as one row, nsys's table of the same name
 * (--cuda-graph-trace=graph). */
#define F struct prof_graph_trace
static const struct schema_column c_graph_trace[] = {
	I(F, "start", start_ns), I(F, "end", end_ns), I(F, "deviceId", device_id),
	I(F, "contextId", context_id), I(F, "streamId", stream_id),
	I(F, "correlationId", correlation_id), I(F, "globalPid", global_pid),
	I(F, "graphId", graph_id),
};
#undef F

/* Each table with its row struct, for the tables the writer binds row by
 * row (schema_column.bind). */
const struct schema_table schema_tables[T__COUNT] = {
	[T_STRINGIDS] = { "StringIds", c_strings, N(c_strings) },
	[T_KERNEL] = { "CUPTI_ACTIVITY_KIND_KERNEL", c_kernel, N(c_kernel),
		sizeof(struct prof_kernel) },
	[T_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY", c_memcpy, N(c_memcpy),
		sizeof(struct prof_memcpy) },
	[T_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET", c_memset, N(c_memset),
		sizeof(struct prof_memset) },
	[T_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME", c_api, N(c_api),
		sizeof(struct prof_api_call) },
	[T_DRIVER] = { "CUPTI_ACTIVITY_KIND_DRIVER", c_api, N(c_api),
		sizeof(struct prof_api_call) },
	[T_SYNC] = { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", c_sync, N(c_sync),
		sizeof(struct prof_sync) },
	[T_MEMORY] = { "CUDA_GPU_MEMORY_USAGE_EVENTS", c_memory, N(c_memory),
		sizeof(struct prof_memory_event) },
	[T_NVTX] = { "NVTX_EVENTS", c_nvtx, N(c_nvtx), sizeof(struct prof_nvtx_event) },
	[T_GPU] = { "TARGET_INFO_GPU", c_gpu, N(c_gpu), sizeof(struct prof_gpu_info) },
	[T_PROCESSES] = { "PROCESSES", c_processes, N(c_processes),
		sizeof(struct schema_process_row) },
	[T_THREADNAMES] = { "ThreadNames", c_thread_names, N(c_thread_names),
		sizeof(struct schema_thread_name_row) },
	[T_SESSION_START] = { "TARGET_INFO_SESSION_START_TIME", c_session_start, N(c_session_start) },
	[T_OVERHEAD] = { "PROFILER_OVERHEAD", c_overhead, N(c_overhead),
		sizeof(struct prof_overhead) },
	[T_ENUM_MEMCPY_OPER] = { "ENUM_CUDA_MEMCPY_OPER", c_enum, N(c_enum) },
	[T_ENUM_MEM_KIND] = { "ENUM_CUDA_MEM_KIND", c_enum, N(c_enum) },
	[T_META] = { "PERFKIT_META", c_meta, N(c_meta) },
	[T_COUNTERS] = { "PERFKIT_COUNTERS", c_counters, N(c_counters) },
	[T_PROC_INFO] = { "PERFKIT_PROCESS_INFO", c_proc_info, N(c_proc_info),
		sizeof(struct prof_process_info) },
	[T_CLOCKS] = { "PERFKIT_CLOCKS", c_clocks, N(c_clocks), sizeof(struct prof_clock_pair) },
	[T_PROC_GPUS] = { "PERFKIT_PROCESS_GPUS", c_proc_gpus, N(c_proc_gpus),
		sizeof(struct schema_process_gpu_row) },
	[T_GPU_METRICS] = { "GPU_METRICS", c_gpu_metrics, N(c_gpu_metrics),
		sizeof(struct prof_gpu_metric) },
	[T_GPU_METRIC_TYPES] = { "TARGET_INFO_GPU_METRICS", c_gpu_metric_types,
				 N(c_gpu_metric_types), sizeof(struct prof_gpu_metric_type) },
	[T_PAYLOAD_SCHEMAS] = { "NVTX_PAYLOAD_SCHEMAS", c_payload_schemas, N(c_payload_schemas),
		sizeof(struct prof_payload_schema) },
	[T_PAYLOAD_SCHEMA_ENTRIES] = { "NVTX_PAYLOAD_SCHEMA_ENTRIES", c_payload_schema_entries,
				       N(c_payload_schema_entries),
		sizeof(struct prof_payload_entry) },
	[T_PAYLOAD_ENUM_ENTRIES] = { "NVTX_PAYLOAD_ENUM_ENTRIES", c_payload_enum_entries,
				     N(c_payload_enum_entries),
		sizeof(struct prof_payload_enum_entry) },
	[T_UM_CPU_FAULTS] = { "CUDA_UM_CPU_PAGE_FAULT_EVENTS", c_um_cpu_faults,
			      N(c_um_cpu_faults), sizeof(struct prof_um_cpu_fault) },
	[T_UM_GPU_FAULTS] = { "CUDA_UM_GPU_PAGE_FAULT_EVENTS", c_um_gpu_faults,
			      N(c_um_gpu_faults), sizeof(struct prof_um_gpu_fault) },
	[T_PY_FRAMES] = { "PERFKIT_PYTHON_FRAMES", c_py_frames, N(c_py_frames),
			  sizeof(struct prof_py_frame), .with_first_row = true },
	[T_PY_SAMPLES] = { "PERFKIT_PYTHON_SAMPLES", c_py_samples, N(c_py_samples),
			   sizeof(struct prof_py_sample), .with_first_row = true },
	[T_PY_CUDA_CALLS] = { "PERFKIT_PYTHON_CUDA_CALLS", c_py_cuda_calls, N(c_py_cuda_calls),
			      sizeof(struct prof_py_cuda_call), .with_first_row = true },
	[T_CAPTURE_WINDOWS] = { "PERFKIT_CAPTURE_WINDOWS", c_capture_windows, N(c_capture_windows),
				sizeof(struct prof_capture_window), .with_first_row = true },
	[T_GRAPH_TRACE] = { "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", c_graph_trace, N(c_graph_trace),
			    sizeof(struct prof_graph_trace), .with_first_row = true },
};

/* One row per profiled kernel launch (`perfkit run --metrics`), joined to
 * its kernel by (globalPid, correlationId). A counter the metric set does
 * not measure is NULL. */
static const struct schema_column c_kernel_metrics[] = {
	{ .name = "globalPid", .decl = "INTEGER NOT NULL" },
	{ .name = "correlationId", .decl = "INTEGER NOT NULL" },
	COL("deviceId"), COL("durationNs"), REAL("flopsF64"), REAL("flopsF32"), REAL("flopsF16"),
	REAL("tensorInst"), COL("dramReadBytes"), COL("dramWriteBytes"), COL("l2Bytes"),
	/* access efficiency: global load/store sectors and requests, bytes the
	 * instructions asked for, L1 and L2 sector hit rates (percent) */
	COL("ldSectors"), COL("ldRequests"), COL("stSectors"), COL("stRequests"),
	COL("ldBytesRequested"), COL("stBytesRequested"), REAL("l1HitPct"), REAL("l2HitPct"),
	/* tensor-core FLOPs by source precision (CUPTI's
	 * sm__ops_path_tensor_src_*: operations, an MMA's multiply-add counted
	 * as two); NULL where the GPU or the collector had no such counter.
	 * tensorInst above counts tensor-pipe instructions, which are not
	 * FLOPs (sm_80 and newer also issue register moves there). */
	REAL("tensorFlopsF16"), REAL("tensorFlopsBF16"), REAL("tensorFlopsTF32"),
	REAL("tensorFlopsF64"), REAL("tensorFlopsF8"),
};

/* The ceilings `perfkit peaks` measured: numbers in value, the GPU's name and
 * uuid in text. */
static const struct schema_column c_peaks[] = {
	{ .name = "key", .decl = "TEXT PRIMARY KEY" }, REAL("value"), TXT("text"),
};

/* `perfkit diagnose --save`: the findings in rank order. */
static const struct schema_column c_findings[] = {
	COL("rank"), TXT("rule"), TXT("title"), TXT("severity"), REAL("share"), COL("timeNs"),
	TXT("evidence"), TXT("change"),
};

const struct schema_table schema_analysis_tables[ANALYSIS__COUNT] = {
	[ANALYSIS_KERNEL_METRICS] = { "PERFKIT_KERNEL_METRICS", c_kernel_metrics,
				      N(c_kernel_metrics) },
	[ANALYSIS_PEAKS] = { "PERFKIT_PEAKS", c_peaks, N(c_peaks) },
	[ANALYSIS_FINDINGS] = { "PERFKIT_FINDINGS", c_findings, N(c_findings) },
};

/* nsys's: the target's environment variables and system facts (the host
 * name among them), the analysis' start and stop on the wall clock, and
 * the exporter's metadata (the table that tells an export). */
static const struct schema_column c_system_env[] = {
	TXT("name"), TXT("value"),
};

static const struct schema_column c_analysis_details[] = {
	COL("startTime"), COL("stopTime"),
};

static const struct schema_column c_export_meta[] = {
	TXT("name"), TXT("value"),
};

const struct schema_table schema_read_tables[READ__COUNT] = {
	[READ_SYSTEM_ENV] = { "TARGET_INFO_SYSTEM_ENV", c_system_env, N(c_system_env) },
	[READ_ANALYSIS_DETAILS] = { "ANALYSIS_DETAILS", c_analysis_details, N(c_analysis_details) },
	[READ_EXPORT_META] = { "META_DATA_EXPORT", c_export_meta, N(c_export_meta) },
};

/* Some nsys versions say whose a synchronisation is by its process. */
const struct schema_read_column schema_read_columns[] = {
	{ T_SYNC, "globalPid" },
};

const int schema_read_column_count = N(schema_read_columns);

struct enum_row {
	int id;
	const char *name, *label;
};

/* Names and labels as the nsys export spells them; the reports build
 * "[CUDA memcpy Host-to-Device]" from the label. */
static const struct enum_row memcpy_oper[] = {
	{ 0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown" },
	{ 1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device" },
	{ 2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host" },
	{ 3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array" },
	{ 4, "CUDA_MEMCPY_OPER_ATOH", "Array-to-Host" },
	{ 5, "CUDA_MEMCPY_OPER_ATOA", "Array-to-Array" },
	{ 6, "CUDA_MEMCPY_OPER_ATOD", "Array-to-Device" },
	{ 7, "CUDA_MEMCPY_OPER_DTOA", "Device-to-Array" },
	{ 8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device" },
	{ 9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host" },
	{ 10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer" },
	{ 11, "CUDA_MEMCPY_OPER_UVM_HTOD", "Unified Host-to-Device" },
	{ 12, "CUDA_MEMCPY_OPER_UVM_DTOH", "Unified Device-to-Host" },
	{ 13, "CUDA_MEMCPY_OPER_UVM_DTOD", "Unified Device-to-Device" },
};

static const struct enum_row mem_kind[] = {
	{ 0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable" },
	{ 1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned" },
	{ 2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device" },
	{ 3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array" },
	{ 4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed" },
	{ 5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static" },
	{ 6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static" },
	{ 7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown" },
};

static int create_table(sqlite3 *db, const struct schema_table *t, bool if_not_exists)
{
	char sql[2048];
	size_t used;
	int n;

	used = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s%s (",
				if_not_exists ? "IF NOT EXISTS " : "", t->name);
	for (int i = 0; i < t->n_cols && used < sizeof sql; i++) {
		n = snprintf(sql + used, sizeof sql - used, "%s\"%s\" %s", i ? ", " : "",
			     t->cols[i].name, t->cols[i].decl);
		used += (size_t)n;
	}
	if (used + 2 >= sizeof sql)
		return SQLITE_TOOBIG;
	strcpy(sql + used, ")");
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int fill_enum(sqlite3 *db, const char *table, const struct enum_row *rows, int n)
{
	char sql[128];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof sql, "INSERT INTO %s (id, name, label) VALUES (?1, ?2, ?3)", table);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	for (int i = 0; i < n && rc == SQLITE_OK; i++) {
		sqlite3_bind_int(st, 1, rows[i].id);
		sqlite3_bind_text(st, 2, rows[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, rows[i].label, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int put_meta(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO PERFKIT_META (key, value) VALUES (?1, ?2)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	sqlite3_finalize(st);
	return rc;
}

int schema__create_table(sqlite3 *db, enum schema_table_id id)
{
	return create_table(db, &schema_tables[id], true);
}

bool schema__has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int schema__create(sqlite3 *db)
{
	char version[16];
	int rc = SQLITE_OK;

	for (int i = 0; i < T__COUNT && rc == SQLITE_OK; i++)
		if (!schema_tables[i].with_first_row)
			rc = create_table(db, &schema_tables[i], false);
	if (rc == SQLITE_OK)
		rc = fill_enum(db, "ENUM_CUDA_MEMCPY_OPER", memcpy_oper, N(memcpy_oper));
	if (rc == SQLITE_OK)
		rc = fill_enum(db, "ENUM_CUDA_MEM_KIND", mem_kind, N(mem_kind));
	snprintf(version, sizeof version, "%d", PROF_SCHEMA_VERSION);
	if (rc == SQLITE_OK)
		rc = put_meta(db, "schema_version", version);
	if (rc == SQLITE_OK)
		rc = put_meta(db, "perfkit_version", PERFKIT_VERSION);
	if (rc == SQLITE_OK) {
		char sql[64];

		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", PROF_SCHEMA_VERSION);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	return rc;
}

/* The columns of t the file has, in order; -1 when they are not the first
 * columns of t's description (another schema, not an older one of ours). */
static int present_columns(sqlite3 *db, const struct schema_table *t)
{
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	while (n >= 0 && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		n = n < t->n_cols && name && !strcmp(name, t->cols[n].name) ? n + 1 : -1;
	}
	sqlite3_finalize(st);
	return n;
}

int schema__upgrade(sqlite3 *db)
{
	char sql[512];
	int rc = SQLITE_OK;

	for (int i = 0; i < T__COUNT && rc == SQLITE_OK; i++) {
		const struct schema_table *t = &schema_tables[i];
		int have = present_columns(db, t);

		if (have < 0)
			return SQLITE_MISMATCH;
		if (have == 0) {
			if (!t->with_first_row)
				rc = create_table(db, t, false);
			continue;
		}
		for (int c = have; c < t->n_cols && rc == SQLITE_OK; c++) {
			if (snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN \"%s\" %s", t->name,
				     t->cols[c].name, t->cols[c].decl) >= (int)sizeof sql)
				return SQLITE_TOOBIG;
			rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
	}
	return rc;
}

int schema__create_analysis(sqlite3 *db)
{
	int rc = SQLITE_OK;

	for (int i = 0; i < ANALYSIS__COUNT && rc == SQLITE_OK; i++)
		rc = create_table(db, &schema_analysis_tables[i], true);
	/* the roofline joins every metrics row to its kernel */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS PERFKIT_KERNEL_METRICS_corr"
				  " ON PERFKIT_KERNEL_METRICS(globalPid, correlationId)", NULL, NULL, NULL);
	return rc;
}

/* Only what a report cannot do without: each index costs build time at the
 * end of every capture and bytes per row (bench/index_worth.sh measures
 * both, and every command with and without each index). These turn joins
 * that would scan a whole table per row into lookups:
 *
 * - correlationId of the GPU tables: an API call's kernels and copies
 *   (folded stacks weighted by API time, diagnose, the traces);
 * - NVTX_EVENTS (globalTid, start): the range open on a thread when a call
 *   starts (nvtx_kern_sum, folded stacks).
 *
 * Left out because no command measured much faster with them at a million
 * launches: kernel and memcpy (start), whose order the traces sort cheaply;
 * kernel (name, duration) for cuda_gpu_kern_sum's medians (sorting them
 * costs that report less than building the index costs every capture); the
 * API tables' (globalTid, start), as the NVTX lookups go the other way; and
 * the API tables' correlationId: a GPU row's launching call is joined the
 * other way round, or SQLite builds a transient index for the one query
 * that needs it (a third of a second a million calls, paid by that query
 * instead of by every capture), and the index would make an API call 30%
 * larger than it is in an nsys export (53 bytes against 41). */
const struct schema_index schema_indexes[] = {
	{ "perfkit_kernel_corr", T_KERNEL, "correlationId" },
	{ "perfkit_memcpy_corr", T_MEMCPY, "correlationId" },
	{ "perfkit_memset_corr", T_MEMSET, "correlationId" },
	{ "perfkit_sync_corr", T_SYNC, "correlationId" },
	{ "perfkit_memory_corr", T_MEMORY, "correlationId" },
	{ "perfkit_nvtx_tid", T_NVTX, "globalTid, start" },
	/* a sample's or a call's stack, frame by frame */
	{ "perfkit_py_frames_stack", T_PY_FRAMES, "globalPid, stackId, depth" },
};

const int schema_index_count = N(schema_indexes);

int schema__create_index(sqlite3 *db, const struct schema_index *ix)
{
	char sql[512];

	/* a table made with its first row may have had none */
	if (schema_tables[ix->table].with_first_row && !schema__has_table(db, schema_tables[ix->table].name))
		return SQLITE_OK;

	if (snprintf(sql, sizeof sql, "CREATE INDEX IF NOT EXISTS %s ON %s (%s)", ix->name,
		     schema_tables[ix->table].name, ix->columns) >= (int)sizeof sql)
		return SQLITE_TOOBIG;
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int schema__analyze(sqlite3 *db)
{
	return sqlite3_exec(db, "PRAGMA analysis_limit = 1000; ANALYZE;", NULL, NULL, NULL);
}

int schema__insert_sql(const struct schema_table *t, char *buf, size_t cap)
{
	size_t used;
	int n;

	n = snprintf(buf, cap, "INSERT INTO %s (", t->name);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	used = (size_t)n;
	for (int i = 0; i < t->n_cols; i++) {
		n = snprintf(buf + used, cap - used, "%s\"%s\"", i ? ", " : "", t->cols[i].name);
		if (n < 0 || (size_t)n >= cap - used)
			return -1;
		used += (size_t)n;
	}
	for (int i = 0; i < t->n_cols; i++) {
		n = snprintf(buf + used, cap - used, "%s?%d", i ? ", " : ") VALUES (", i + 1);
		if (n < 0 || (size_t)n >= cap - used)
			return -1;
		used += (size_t)n;
	}
	n = snprintf(buf + used, cap - used, ")");
	return (n < 0 || (size_t)n >= cap - used) ? -1 : 0;
}

int schema__column_index(const struct schema_table *t, const char *name)
{
	for (int i = 0; i < t->n_cols; i++)
		if (!strcmp(t->cols[i].name, name))
			return i + 1;
	return 0;
}

static bool column_fits(const struct schema_table *t, const struct schema_column *c)
{
	if (c->bind == SCHEMA_UNBOUND)
		return true;
	if (!t->row_size || c->offset + c->size > t->row_size)
		return false;
	if (c->string_id && c->bind != SCHEMA_INT)
		return false;
	switch (c->bind) {
	case SCHEMA_INT:
	case SCHEMA_UINT:
		return c->size == sizeof(int32_t) || c->size == sizeof(int64_t);
	case SCHEMA_DOUBLE:
		return c->size == sizeof(double);
	case SCHEMA_TEXT:
		return c->size == sizeof(const char *);
	case SCHEMA_BLOB:
		return c->size == sizeof(const void *) && c->len_offset + sizeof(size_t) <= t->row_size;
	default:
		return false;
	}
}

const char *schema__check_rows(void)
{
	static char bad[128];

	for (int i = 0; i < T__COUNT; i++) {
		const struct schema_table *t = &schema_tables[i];

		for (int c = 0; c < t->n_cols; c++) {
			if (column_fits(t, &t->cols[c]))
				continue;
			snprintf(bad, sizeof bad, "%s.%s", t->name, t->cols[c].name);
			return bad;
		}
	}
	return NULL;
}
