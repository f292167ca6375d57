/* event.h - the event model: one struct per kind of record the store holds.
 *
 * Field meanings and numbering follow the Nsight Systems SQLite export (see
 * docs/ARCHITECTURE.md, "The store"), so that a struct maps 1:1 onto a row.
 * Times are nanoseconds on the capture's clock (CLOCK_REALTIME), sizes bytes.
 * Strings are ids into StringIds, obtained from prof_writer__string(). */
#ifndef PROF_EVENT_H
#define PROF_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* nsys packs ids: globalPid = pid << 24, globalTid = globalPid | tid, and
 * keeps a hardware/VM id above the pid (bits 48 and up: its exports of one
 * machine carry 1 << 48). A job of several hosts merged into one capture
 * puts each host's index there (prof_writer__merge_mapped), so processes of
 * two hosts with one pid stay apart; pid and tid read the same. */
#define PROF_GLOBAL_HOST_SHIFT 48
static inline int64_t prof_global_pid(uint32_t pid) { return (int64_t)(pid & 0xFFFFFF) << 24; }
static inline int64_t prof_global_tid(uint32_t pid, uint32_t tid)
{ return prof_global_pid(pid) | (int64_t)(tid & 0xFFFFFF); }
/* The process part of a globalTid read from a capture (outside input: it
 * may be negative, where (tid >> 24) << 24 is undefined). */
static inline int64_t prof_global_pid_of_tid(int64_t global_tid) { return global_tid & ~(int64_t)0xFFFFFF; }
static inline uint32_t prof_pid_of(int64_t global_tid) { return (uint32_t)((global_tid >> 24) & 0xFFFFFF); }
/* The process of a globalTid or globalPid with its host bits: what
 * PROF_SQL_PID_OF_TID gives in SQL (arithmetic shift, as SQLite's). */
static inline int64_t prof_process_of(int64_t global_id) { return global_id >> 24; }
static inline uint32_t prof_tid_of(int64_t global_tid) { return (uint32_t)(global_tid & 0xFFFFFF); }
/* The bits above the pid: 0 in a capture of one perfkit run, the host's
 * index in a merged job of several hosts. */
static inline uint32_t prof_host_of(int64_t global_tid)
{ return (uint32_t)((uint64_t)global_tid >> PROF_GLOBAL_HOST_SHIFT); }

/* ENUM_CUDA_MEMCPY_OPER */
enum prof_copy_kind {
	PROF_COPY_UNKNOWN = 0, PROF_COPY_HTOD = 1, PROF_COPY_DTOH = 2, PROF_COPY_HTOA = 3,
	PROF_COPY_ATOH = 4, PROF_COPY_ATOA = 5, PROF_COPY_ATOD = 6, PROF_COPY_DTOA = 7,
	PROF_COPY_DTOD = 8, PROF_COPY_HTOH = 9, PROF_COPY_PTOP = 10,
	PROF_COPY_UVM_HTOD = 11, PROF_COPY_UVM_DTOH = 12, PROF_COPY_UVM_DTOD = 13,
};

/* ENUM_CUDA_MEM_KIND (CUPTI's CUpti_ActivityMemoryKind is this plus one). */
enum prof_mem_kind {
	PROF_MEM_PAGEABLE = 0, PROF_MEM_PINNED = 1, PROF_MEM_DEVICE = 2, PROF_MEM_ARRAY = 3,
	PROF_MEM_MANAGED = 4, PROF_MEM_DEVICE_STATIC = 5, PROF_MEM_MANAGED_STATIC = 6,
	PROF_MEM_UNKNOWN = 7,
};

/* CUPTI_ACTIVITY_KIND_MEMCPY.migrationCause of a unified-memory migration
 * (copy kinds PROF_COPY_UVM_*): nsys stores CUPTI's
 * CUpti_ActivityUnifiedMemoryMigrationCause as it is. */
enum prof_um_migration_cause {
	PROF_UM_CAUSE_UNKNOWN = 0, PROF_UM_CAUSE_USER = 1 /* cudaMemPrefetchAsync */,
	PROF_UM_CAUSE_COHERENCE = 2 /* a page fault */, PROF_UM_CAUSE_PREFETCH = 3 /* the driver's */,
	PROF_UM_CAUSE_EVICTION = 4, PROF_UM_CAUSE_ACCESS_COUNTERS = 5,
};

/* CUDA_UM_GPU_PAGE_FAULT_EVENTS.faultAccessType: CUPTI's
 * CUpti_ActivityUnifiedMemoryAccessType as it is. */
enum prof_um_access_type {
	PROF_UM_ACCESS_UNKNOWN = 0, PROF_UM_ACCESS_READ = 1, PROF_UM_ACCESS_WRITE = 2,
	PROF_UM_ACCESS_ATOMIC = 3, PROF_UM_ACCESS_PREFETCH = 4,
};

/* NVTX_EVENTS.eventType */
enum prof_nvtx_type {
	PROF_NVTX_MARK = 34, PROF_NVTX_PUSHPOP = 59, PROF_NVTX_STARTEND = 60,
	PROF_NVTX_DOMAIN_CREATE = 75,
};

/* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION.syncType */
enum prof_sync_type {
	PROF_SYNC_UNKNOWN = 0, PROF_SYNC_EVENT = 1, PROF_SYNC_STREAM_WAIT_EVENT = 2,
	PROF_SYNC_STREAM = 3, PROF_SYNC_CONTEXT = 4,
};

/* CUPTI_ACTIVITY_KIND_KERNEL */
struct prof_kernel {
	int64_t start_ns, end_ns;
	int32_t device_id, context_id, green_context_id, stream_id;
	int32_t correlation_id;
	int64_t global_pid;
	int64_t demangled_name, short_name, mangled_name; /* StringIds */
	int32_t launch_type, cache_config, registers_per_thread;
	int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
	int32_t static_shared_bytes, dynamic_shared_bytes;
	int32_t local_memory_per_thread_bytes;
	int64_t local_memory_total_bytes;
	int64_t grid_id;
	int32_t shared_memory_executed_bytes;
	int64_t graph_node_id;
	int32_t shared_memory_limit_config;
};

/* CUPTI_ACTIVITY_KIND_MEMCPY (peer copies too: copy_kind PROF_COPY_PTOP) */
struct prof_memcpy {
	int64_t start_ns, end_ns;
	int32_t device_id, context_id, green_context_id, stream_id;
	int32_t correlation_id;
	int64_t global_pid;
	int64_t bytes;
	int32_t copy_kind, src_kind, dst_kind; /* enum prof_copy_kind / prof_mem_kind */
	int32_t src_device_id, src_context_id, dst_device_id, dst_context_id;
	int32_t migration_cause; /* unified-memory migrations: enum prof_um_migration_cause */
	int64_t graph_node_id;
	uint64_t virtual_address; /* unified-memory migrations: the pages' base; 0 for copies */
};

/* CUPTI_ACTIVITY_KIND_MEMSET */
struct prof_memset {
	int64_t start_ns, end_ns;
	int32_t device_id, context_id, green_context_id, stream_id;
	int32_t correlation_id;
	int64_t global_pid;
	int32_t value;
	int64_t bytes;
	int64_t graph_node_id;
	int32_t mem_kind;
};

/* CUPTI_ACTIVITY_KIND_RUNTIME and CUPTI_ACTIVITY_KIND_DRIVER */
enum prof_api_domain { PROF_API_RUNTIME = 0, PROF_API_DRIVER = 1 };
struct prof_api_call {
	int64_t start_ns, end_ns;
	int32_t event_class;  /* nsys: 0 for CUDA runtime/driver API */
	int64_t global_tid;
	int32_t correlation_id;
	int64_t name_id;      /* StringIds, e.g. "cudaMemcpy_v3020" */
	int32_t return_value;
	int32_t callchain_id; /* 0: none */
};

/* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
struct prof_sync {
	int64_t start_ns, end_ns;
	int32_t device_id, context_id, stream_id;
	int32_t correlation_id;
	int64_t global_tid;
	int64_t event_id;
	int32_t sync_type; /* enum prof_sync_type */
};

/* CUDA_GPU_MEMORY_USAGE_EVENTS */
struct prof_memory_event {
	int64_t start_ns;
	int64_t global_pid;
	int32_t device_id, context_id;
	uint64_t address;
	uint64_t pc;
	int64_t bytes;
	int32_t mem_kind;        /* enum prof_mem_kind */
	int32_t operation;       /* 0 allocation, 1 deallocation */
	int64_t name_id;         /* StringIds or 0 */
	int32_t correlation_id;
	int32_t stream_id;
};

/* CUDA_UM_CPU_PAGE_FAULT_EVENTS: one host access to managed memory that
 * was on a GPU. function and module are StringIds of where pc lies (the
 * symbol's name, or the pc in hex when unresolved is set). */
struct prof_um_cpu_fault {
	int64_t start_ns;
	int64_t global_pid;
	uint64_t address; /* the page's */
	uint64_t pc;
	int64_t function, module;
	int32_t unresolved;
};

/* CUDA_UM_GPU_PAGE_FAULT_EVENTS: a group of GPU faults on one page, from
 * the driver taking it up to the replay of the accesses. */
struct prof_um_gpu_fault {
	int64_t start_ns, end_ns;
	int64_t global_pid;
	int32_t device_id;
	uint64_t address;
	int64_t faults;
	int32_t access_type; /* enum prof_um_access_type */
};

/* perfkit run --pytorch=modules: each nn.Module's forward and backward and
 * each optimizer step, NVTX_EVENTS ranges of this domain whose category
 * says which, named "QUALNAME (Class)" ("AdamW.step (AdamW)" for a step). */
#define PROF_PY_RANGE_DOMAIN "perfkit.pytorch"
enum prof_py_range_category {
	PROF_PY_RANGE_FORWARD = 1,
	PROF_PY_RANGE_BACKWARD = 2,
	PROF_PY_RANGE_OPTIMIZER = 3,
};

/* Python's own frames (perfkit run --python-sampling, --python-backtrace):
 * PERFKIT_PYTHON_FRAMES holds each distinct stack once, a row a frame,
 * depth 0 the innermost; stack_id is unique within the process. function
 * and file are StringIds; a native frame (kind PROF_PY_FRAME_NATIVE) names
 * the library in file and has no line. */
enum prof_py_frame_kind {
	PROF_PY_FRAME_PYTHON = 0,
	PROF_PY_FRAME_NATIVE = 1,
};

struct prof_py_frame {
	int64_t global_pid;
	int64_t stack_id;
	int32_t depth;
	int64_t function, file;
	int32_t line;
	int32_t kind; /* enum prof_py_frame_kind */
};

/* PERFKIT_PYTHON_SAMPLES.state: what the sampled thread was doing. */
enum prof_py_sample_state {
	PROF_PY_RUNNING = 0,   /* running Python (or C it called) */
	PROF_PY_IN_CUDA = 1,   /* inside a CUDA API call */
	PROF_PY_GIL_WAIT = 2,  /* without the GIL: waiting for it, or in C code that let it
				  go (a blocking call; autograd's backward run from here) */
};

/* PERFKIT_PYTHON_SAMPLES: one thread's Python stack at one tick. */
struct prof_py_sample {
	int64_t start_ns;
	int64_t global_tid, global_pid;
	int64_t stack_id;
	int32_t state; /* enum prof_py_sample_state */
};

/* PERFKIT_PYTHON_CUDA_CALLS (--python-backtrace=cuda): the Python stack
 * under one CUDA API call, joined to it by thread and correlation id. */
struct prof_py_cuda_call {
	int64_t global_tid, global_pid;
	int32_t correlation_id;
	int64_t stack_id;
};

/* PERFKIT_CAPTURE_WINDOWS: one stretch of the run in which CUPTI recorded
 * (perfkit run --capture-range, --delay, --duration, perfkit start/stop).
 * id counts a process's windows from 1; end_ns < 0 stores NULL: the window
 * was still open when the process died, and ends with its last record. */
struct prof_capture_window {
	int64_t global_pid;
	int64_t id;
	int64_t start_ns, end_ns;
	const char *opened_by, *closed_by; /* "nvtx:step #1001", "cudaProfilerStart", ... */
};

/* CUPTI_ACTIVITY_KIND_GRAPH_TRACE (--cuda-graph-trace=graph): one launch
 * of a CUDA graph on the GPU, from its first node's start to its last
 * node's end, none of its nodes recorded apart. graph_id is CUDA's id of
 * the graph the launched executable was made from. */
struct prof_graph_trace {
	int64_t start_ns, end_ns;
	int32_t device_id, context_id, stream_id, correlation_id;
	int64_t global_pid;
	int32_t graph_id;
};

/* NVTX_EVENTS. end_ns < 0 means NULL (marks). text_id is a StringIds id. */
struct prof_nvtx_event {
	int64_t start_ns, end_ns;
	int32_t event_type;      /* enum prof_nvtx_type */
	int64_t range_id;
	int32_t category;
	int32_t color;           /* ARGB, 0: none */
	int64_t global_tid, end_global_tid;
	int64_t text_id;
	int64_t domain_id;
	/* NVTX_EVENTS.binaryData: an extended payload in nsys's layout
	 * (prof_nvtx_payload__blob builds it); NULL when there is none */
	const void *binary;
	size_t binary_len;
};

/* The header nsys puts before an extended payload's bytes in
 * NVTX_EVENTS.binaryData: four little-endian 64-bit words. */
#define PROF_NVTX_BLOB_HEADER 32
struct prof_nvtx_blob_header {
	uint64_t domain_id, schema_id, payload_size, total_size; /* total = header + payload */
};

/* NVTX_PAYLOAD_SCHEMAS: a payload schema (or enum, type 0 in nsys's
 * numbering is invalid) a process registered in one NVTX domain. */
struct prof_payload_schema {
	int64_t global_pid;
	uint64_t domain_id, schema_id;
	const char *name;
	uint64_t type, flags, num_entries, payload_size, align_to;
};

/* NVTX_PAYLOAD_SCHEMA_ENTRIES: one field of a schema. type is a predefined
 * NVTX_PAYLOAD_ENTRY_TYPE_* or another schema's id; offset in bytes. */
struct prof_payload_entry {
	int64_t global_pid;
	uint64_t domain_id, schema_id, idx;
	uint64_t flags, type;
	const char *name, *description;
	uint64_t array_or_union_detail, offset;
};

/* NVTX_PAYLOAD_ENUM_ENTRIES: one value of an enum registered as a schema. */
struct prof_payload_enum_entry {
	int64_t global_pid;
	uint64_t domain_id, schema_id, idx;
	const char *name;
	uint64_t value;
	int is_flag;
};

/* PERFKIT_PROCESS_INFO: where a process stood in its job. rank, world_size
 * and local_rank are -1 (stored NULL) for a process its launcher did not
 * number. */
struct prof_process_info {
	int64_t global_pid;
	const char *host;
	long rank, world_size, local_rank;
	const char *launcher; /* "torchrun", "Open MPI", "PMI", "Slurm"; NULL: none */
};

/* PERFKIT_CLOCKS: the host's realtime clock and the capture's timestamp
 * read together. */
struct prof_clock_pair {
	int64_t global_pid;
	const char *host;
	const char *at; /* "start" or "end" */
	int64_t realtime_ns, timestamp_ns;
};

/* TARGET_INFO_GPU_METRICS: what a (type_id, metric_id) of GPU_METRICS
 * measures. type_id's low 8 bits are the device number. */
struct prof_gpu_metric_type {
	int64_t type_id, source_id;
	const char *type_name;
	int64_t metric_id;
	const char *metric_name;
	int64_t global_pid;
};

/* GPU_METRICS: one metric of one sample; timestamp_ns ends its period. */
struct prof_gpu_metric {
	int64_t timestamp_ns, type_id, metric_id;
	double value;
};

/* TARGET_INFO_GPU */
struct prof_gpu_info {
	int32_t id;
	const char *name, *bus_location, *uuid, *chip_name;
	int64_t l2_cache_bytes, total_memory_bytes, memory_bandwidth_bytes_per_s;
	int64_t clock_rate_hz;
	int32_t sm_count, compute_major, compute_minor;
	int32_t max_warps_per_sm, threads_per_warp, max_blocks_per_sm;
	int32_t max_registers_per_sm, max_registers_per_block;
	int64_t max_shared_per_sm_bytes, max_shared_per_block_bytes;
	int32_t max_threads_per_block;
};

/* PROFILER_OVERHEAD: CUPTI's own overhead records */
struct prof_overhead {
	int64_t start_ns, end_ns;
	int64_t global_tid;
	int64_t name_id;
};

#endif
