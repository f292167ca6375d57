/* tables.h - the names of the store's tables, spelled once for everything
 * that reads a store with SQL (report/, tui/, cli/).
 *
 * The read side is SQL over the tables of the Nsight Systems SQLite export
 * (and perfkit's own PERFKIT_ ones), so a name is part of a statement's text:
 * write "SELECT ... FROM " PROF_T_KERNEL " k WHERE ...", which the compiler
 * joins into one literal. libprof's own schema (libprof/src) keeps its own
 * table of names and columns.
 *
 * Values that statements name in their text (so that the query planner sees
 * a constant) are here as SQL text too, checked against event.h. */
#ifndef PROF_TABLES_H
#define PROF_TABLES_H

#include "prof/event.h"

/* Activity on the GPU (struct prof_kernel, prof_memcpy, prof_memset). */
#define PROF_T_KERNEL "CUPTI_ACTIVITY_KIND_KERNEL"
#define PROF_T_MEMCPY "CUPTI_ACTIVITY_KIND_MEMCPY"
#define PROF_T_MEMSET "CUPTI_ACTIVITY_KIND_MEMSET"
/* CUDA API calls (struct prof_api_call) and synchronisation (prof_sync). */
#define PROF_T_RUNTIME "CUPTI_ACTIVITY_KIND_RUNTIME"
#define PROF_T_DRIVER "CUPTI_ACTIVITY_KIND_DRIVER"
#define PROF_T_SYNC "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
/* Allocations and frees (struct prof_memory_event). */
#define PROF_T_MEMORY "CUDA_GPU_MEMORY_USAGE_EVENTS"
/* Unified-memory page faults (struct prof_um_cpu_fault, prof_um_gpu_fault);
 * the migrations are MEMCPY rows of copyKind PROF_SQL_COPY_UVM_KINDS. */
#define PROF_T_UM_CPU_FAULTS "CUDA_UM_CPU_PAGE_FAULT_EVENTS"
#define PROF_T_UM_GPU_FAULTS "CUDA_UM_GPU_PAGE_FAULT_EVENTS"
/* Python's stacks: each distinct stack a row a frame, depth 0 innermost
 * (struct prof_py_frame), the samples (prof_py_sample, --python-sampling)
 * and the stack under each CUDA call (prof_py_cuda_call,
 * --python-backtrace=cuda); a sample or call names its stack by
 * (globalPid, stackId). */
#define PROF_T_PY_FRAMES "PERFKIT_PYTHON_FRAMES"
#define PROF_T_PY_SAMPLES "PERFKIT_PYTHON_SAMPLES"
#define PROF_T_PY_CUDA_CALLS "PERFKIT_PYTHON_CUDA_CALLS"
/* The windows in which CUPTI recorded (struct prof_capture_window): only
 * in a capture of a run that asked for windows; without the table the
 * whole run is one window. */
#define PROF_T_CAPTURE_WINDOWS "PERFKIT_CAPTURE_WINDOWS"
/* A CUDA graph's launch as one row (struct prof_graph_trace): only in a
 * capture made with --cuda-graph-trace=graph (or nsys's of the same
 * option), where its nodes' kernels are not in PROF_T_KERNEL. */
#define PROF_T_GRAPH_TRACE "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
/* The tables of the GPU's work, each with start, end, deviceId, streamId,
 * correlationId and globalPid: an array initialiser. A reader checks
 * that each is there (prof_store__has_table): the graph table is only in
 * captures that recorded graphs whole. */
#define PROF_T_GPU_WORK_TABLES PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET, PROF_T_GRAPH_TRACE
/* NVTX marks and ranges (struct prof_nvtx_event). */
#define PROF_T_NVTX "NVTX_EVENTS"
/* Interned strings: id -> value. */
#define PROF_T_STRINGS "StringIds"
/* The machine and the processes: GPUs (struct prof_gpu_info), the
 * capture's start on the wall clock, process and thread names. */
#define PROF_T_GPU "TARGET_INFO_GPU"
#define PROF_T_SESSION_START "TARGET_INFO_SESSION_START_TIME"
#define PROF_T_PROCESSES "PROCESSES"
#define PROF_T_THREAD_NAMES "ThreadNames"
/* nsys enum tables: value -> name, label. */
#define PROF_T_ENUM_MEMCPY_OPER "ENUM_CUDA_MEMCPY_OPER"
#define PROF_T_ENUM_MEM_KIND "ENUM_CUDA_MEM_KIND"
/* perfkit's own: run metadata, counters, and the analysis tables added to a
 * finished capture (hardware metrics per launch, measured peaks, findings). */
#define PROF_T_META "PERFKIT_META"
#define PROF_T_COUNTERS "PERFKIT_COUNTERS"
#define PROF_T_KERNEL_METRICS "PERFKIT_KERNEL_METRICS"
#define PROF_T_PEAKS "PERFKIT_PEAKS"
#define PROF_T_FINDINGS "PERFKIT_FINDINGS"

/* Jobs of many processes (struct prof_process_info, prof_clock_pair, and
 * each process's GPUs by its own device number). */
#define PROF_T_PROC_INFO "PERFKIT_PROCESS_INFO"
#define PROF_T_CLOCKS "PERFKIT_CLOCKS"
#define PROF_T_PROC_GPUS "PERFKIT_PROCESS_GPUS"
/* Sampled GPU metrics, nsys's tables (struct prof_gpu_metric and
 * prof_gpu_metric_type). */
#define PROF_T_GPU_METRICS "GPU_METRICS"
#define PROF_T_GPU_METRIC_TYPES "TARGET_INFO_GPU_METRICS"
/* NVTX extended payloads: schemas, their fields and enum values, nsys's
 * tables; the payloads are NVTX_EVENTS.binaryData. */
#define PROF_T_PAYLOAD_SCHEMAS "NVTX_PAYLOAD_SCHEMAS"
#define PROF_T_PAYLOAD_SCHEMA_ENTRIES "NVTX_PAYLOAD_SCHEMA_ENTRIES"
#define PROF_T_PAYLOAD_ENUM_ENTRIES "NVTX_PAYLOAD_ENUM_ENTRIES"
/* CUPTI's own overhead records (struct prof_overhead). */
#define PROF_T_OVERHEAD "PROFILER_OVERHEAD"
/* nsys's tables that perfkit reads but never writes: the target's
 * environment (name, value: the host name among them), the analysis'
 * start and stop on the wall clock, and the exporter's own metadata. */
#define PROF_T_SYSTEM_ENV "TARGET_INFO_SYSTEM_ENV"
#define PROF_T_ANALYSIS_DETAILS "ANALYSIS_DETAILS"
#define PROF_T_EXPORT_META "META_DATA_EXPORT"

/* Every table above reads, through the store's connection, as its
 * canonical form (prof_store__open): each column perfkit knows of is there,
 * NULL where the file lacks it, and a table the file lacks reads as empty
 * (the analysis tables excepted: there, absence means "not measured", which
 * prof_store__has_table answers). A statement names a column without asking
 * whether this version of the export has it. */

/* A kernel's name, an id into StringIds: the demangled name, else the short
 * one (nsys leaves demangledName NULL for some kernels, older exports lack
 * it). k is the table's alias with its dot ("k."), or "" for none. */
#define PROF_SQL_KERNEL_NAME_ID(k) "coalesce(" k "demangledName, " k "shortName)"
/* The same name as text (NULL when the store has neither). */
#define PROF_SQL_KERNEL_NAME(k) \
	"(SELECT value FROM " PROF_T_STRINGS " WHERE id = " PROF_SQL_KERNEL_NAME_ID(k) ")"

/* The process of a globalTid or globalPid (SQL expression x), as
 * prof_pid_of numbers it but with the host bits above it kept: equal for
 * two threads of one process, and for a thread and its process's
 * globalPid. */
#define PROF_SQL_PID_OF_TID(x) "((" x ") >> 24)"
/* The globalPid of the process a globalTid x belongs to (its tid bits 0). */
#define PROF_SQL_GLOBAL_PID_OF_TID(x) "(((" x ") >> 24) << 24)"
/* The globalPid of a synchronisation row of alias p ("y." or ""), 0 when
 * unknown: nsys records its process, perfkit the thread of its call. */
#define PROF_SQL_SYNC_GLOBAL_PID(p) \
	"coalesce(" p "globalPid, " PROF_SQL_GLOBAL_PID_OF_TID(p "globalTid") ", 0)"
/* The pid alone, as the operating system numbered it (prof_pid_of). */
#define PROF_SQL_OS_PID_OF_TID(x) "(((" x ") >> 24) & 16777215)"

/* NVTX_EVENTS.eventType (enum prof_nvtx_type) as SQL text. */
#define PROF_SQL_NVTX_MARK "34"
#define PROF_SQL_NVTX_PUSHPOP "59"
#define PROF_SQL_NVTX_STARTEND "60"
#define PROF_SQL_NVTX_DOMAIN_CREATE "75"
/* The kinds that have a duration, for "eventType IN (" PROF_SQL_NVTX_RANGES ")". */
#define PROF_SQL_NVTX_RANGES PROF_SQL_NVTX_PUSHPOP ", " PROF_SQL_NVTX_STARTEND
/* The unified-memory copy kinds, for "copyKind IN (" PROF_SQL_COPY_UVM_KINDS ")". */
#define PROF_SQL_COPY_UVM_KINDS "11, 12, 13"
_Static_assert(PROF_COPY_UVM_HTOD == 11 && PROF_COPY_UVM_DTOH == 12 && PROF_COPY_UVM_DTOD == 13,
	       "PROF_SQL_COPY_UVM_KINDS are the PROF_COPY_UVM_* kinds");
_Static_assert(PROF_NVTX_MARK == 34, "PROF_SQL_NVTX_MARK is PROF_NVTX_MARK");
_Static_assert(PROF_NVTX_PUSHPOP == 59, "PROF_SQL_NVTX_PUSHPOP is PROF_NVTX_PUSHPOP");
_Static_assert(PROF_NVTX_STARTEND == 60, "PROF_SQL_NVTX_STARTEND is PROF_NVTX_STARTEND");
_Static_assert(PROF_NVTX_DOMAIN_CREATE == 75,
	       "PROF_SQL_NVTX_DOMAIN_CREATE is PROF_NVTX_DOMAIN_CREATE");
/* PERFKIT_PYTHON_FRAMES.kind of a native frame (enum prof_py_frame_kind). */
#define PROF_SQL_PY_FRAME_NATIVE "1"
_Static_assert(PROF_PY_FRAME_NATIVE == 1, "PROF_SQL_PY_FRAME_NATIVE is PROF_PY_FRAME_NATIVE");

#endif
