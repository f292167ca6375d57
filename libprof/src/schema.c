/* schema.c - the DDL of a capture: Nsight Systems export tables and columns
 * for CUDA and NVTX data, PERFKIT_* tables for run metadata and counters, and
 * the PERFKIT_* analysis tables a finished capture gains afterwards. */
#include "schema.h"

#include <stdio.h>
#include <string.h>

#include "prof/store.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define COL(n) { n, "INTEGER", false }
#define SID(n) { n, "INTEGER", true }
#define TXT(n) { n, "TEXT", false }
#define REAL(n) { n, "REAL", false }
#define BLOB(n) { n, "BLOB", false }

static const struct schema_column c_strings[] = {
	{ "id", "INTEGER NOT NULL PRIMARY KEY", false }, { "value", "TEXT NOT NULL", false },
};

static const struct schema_column c_kernel[] = {
	COL("start"), COL("end"), COL("deviceId"), COL("contextId"), COL("greenContextId"),
	COL("streamId"), COL("correlationId"), COL("globalPid"),
	SID("demangledName"), SID("shortName"), SID("mangledName"),
	COL("launchType"), COL("cacheConfig"), COL("registersPerThread"),
	COL("gridX"), COL("gridY"), COL("gridZ"), COL("blockX"), COL("blockY"), COL("blockZ"),
	COL("staticSharedMemory"), COL("dynamicSharedMemory"), COL("localMemoryPerThread"),
	COL("localMemoryTotal"), COL("gridId"), COL("sharedMemoryExecuted"),
	COL("graphNodeId"), COL("sharedMemoryLimitConfig"),
};

static const struct schema_column c_memcpy[] = {
	COL("start"), COL("end"), COL("deviceId"), COL("contextId"), COL("greenContextId"),
	COL("streamId"), COL("correlationId"), COL("globalPid"), COL("bytes"),
	COL("copyKind"), COL("srcKind"), COL("dstKind"), COL("srcDeviceId"),
	COL("srcContextId"), COL("dstDeviceId"), COL("dstContextId"), COL("migrationCause"),
	COL("graphNodeId"), COL("virtualAddress"),
};

static const struct schema_column c_memset[] = {
	COL("start"), COL("end"), COL("deviceId"), COL("contextId"), COL("greenContextId"),
	COL("streamId"), COL("correlationId"), COL("globalPid"), COL("value"), COL("bytes"),
	COL("graphNodeId"), COL("memKind"),
};

static const struct schema_column c_api[] = {
	COL("start"), COL("end"), COL("eventClass"), COL("globalTid"), COL("correlationId"),
	SID("nameId"), COL("returnValue"), COL("callchainId"),
};

static const struct schema_column c_sync[] = {
	COL("start"), COL("end"), COL("deviceId"), COL("contextId"), COL("streamId"),
	COL("correlationId"), COL("globalTid"), COL("eventId"), COL("syncType"),
};

static const struct schema_column c_memory[] = {
	COL("start"), COL("globalPid"), COL("deviceId"), COL("contextId"), COL("address"),
	COL("pc"), COL("bytes"), COL("memKind"), COL("memoryOperationType"), SID("name"),
	COL("correlationId"), COL("streamId"),
};

static const struct schema_column c_nvtx[] = {
	COL("start"), COL("end"), COL("eventType"), COL("rangeId"), COL("category"),
	COL("color"), TXT("text"), COL("globalTid"), COL("endGlobalTid"), SID("textId"),
	COL("domainId"), COL("uint64Value"), COL("int64Value"), { "doubleValue", "REAL", false },
	COL("uint32Value"), COL("int32Value"), { "floatValue", "REAL", false },
	SID("jsonTextId"), TXT("jsonText"),
	/* an NVTX extended payload as nsys stores it: a 32-byte header (domain
	 * and schema id, payload size, total size) and the payload's bytes,
	 * described by NVTX_PAYLOAD_SCHEMAS of that domain and schema */
	BLOB("binaryData"),
};

static const struct schema_column c_gpu[] = {
	COL("id"), TXT("name"), TXT("busLocation"), COL("l2CacheSize"), COL("totalMemory"),
	COL("memoryBandwidth"), COL("clockRate"), COL("smCount"), TXT("uuid"), TXT("chipName"),
	COL("computeMajor"), COL("computeMinor"), COL("maxWarpsPerSm"), COL("threadsPerWarp"),
	COL("maxBlocksPerSm"), COL("maxRegistersPerSm"), COL("maxRegistersPerBlock"),
	COL("maxShmemPerSm"), COL("maxShmemPerBlock"), COL("maxThreadsPerBlock"),
};

static const struct schema_column c_processes[] = {
	COL("globalPid"), COL("pid"), TXT("name"),
};

static const struct schema_column c_thread_names[] = {
	SID("nameId"), COL("priority"), COL("globalTid"),
};

static const struct schema_column c_session_start[] = {
	COL("utcEpochNs"),
};

static const struct schema_column c_overhead[] = {
	COL("start"), COL("end"), COL("globalTid"), SID("nameId"),
};

static const struct schema_column c_enum[] = {
	{ "id", "INTEGER NOT NULL PRIMARY KEY", false }, TXT("name"), TXT("label"),
};

static const struct schema_column c_meta[] = {
	{ "key", "TEXT NOT NULL PRIMARY KEY", false }, TXT("value"),
};

static const struct schema_column c_counters[] = {
	{ "name", "TEXT NOT NULL PRIMARY KEY", false }, { "value", "INTEGER NOT NULL", false },
};

/* Where a process stands in a job: the host it ran on and, when its
 * launcher numbered it (torchrun, Open MPI, PMI, Slurm), its rank; rank,
 * worldSize and localRank are NULL for a process that is not a rank (the
 * launcher itself, data-loader workers). */
static const struct schema_column c_proc_info[] = {
	{ "globalPid", "INTEGER NOT NULL", false }, TXT("host"), COL("rank"), COL("worldSize"),
	COL("localRank"), TXT("launcher"),
};

/* Clock pairs: the host's realtime clock and the capture's timestamp
 * (CUPTI's) read together, at the start ('start') and end ('end') of each
 * process, so captures of different hosts can be put on one time base. */
static const struct schema_column c_clocks[] = {
	{ "globalPid", "INTEGER NOT NULL", false }, TXT("host"), TXT("at"), COL("realtimeNs"),
	COL("timestampNs"),
};

/* The GPUs a process saw, by its own device number: deviceId of its
 * kernels and copies is this ordinal (CUDA_VISIBLE_DEVICES renumbers them
 * per process), uuid names the physical GPU across processes and hosts. */
static const struct schema_column c_proc_gpus[] = {
	{ "globalPid", "INTEGER NOT NULL", false }, COL("deviceId"), TXT("uuid"),
};

/* Sampled hardware counters (`perfkit run --gpu-metrics`), as nsys stores
 * its GPU metrics: one row per sample and metric. timestamp is the end of
 * the sample's period (its start is the previous sample's timestamp of the
 * same typeId); typeId's low 8 bits are the deviceId of the process that
 * sampled it, the bits above tell samplers apart in a merged capture. */
static const struct schema_column c_gpu_metrics[] = {
	COL("timestamp"), COL("typeId"), COL("metricId"), REAL("value"),
};

/* What each (typeId, metricId) of GPU_METRICS measures, with nsys's names
 * ("SMs Active [Throughput %]"); globalPid: the sampling process. */
static const struct schema_column c_gpu_metric_types[] = {
	COL("typeId"), COL("sourceId"), TXT("typeName"), COL("metricId"), TXT("metricName"),
	COL("globalPid"),
};

/* NVTX payload schemas, their entries and enums, as nsys exports them. */
static const struct schema_column c_payload_schemas[] = {
	COL("domainId"), COL("schemaId"), TXT("name"), COL("type"), COL("flags"),
	COL("numEntries"), COL("payloadSize"), COL("alignTo"), COL("globalPid"),
};

static const struct schema_column c_payload_schema_entries[] = {
	{ "domainId", "INTEGER NOT NULL", false }, { "schemaId", "INTEGER NOT NULL", false },
	{ "idx", "INTEGER NOT NULL", false }, COL("flags"), COL("type"), TXT("name"),
	TXT("description"), COL("arrayOrUnionDetail"), COL("offset"), COL("globalPid"),
};

static const struct schema_column c_payload_enum_entries[] = {
	{ "domainId", "INTEGER NOT NULL", false }, { "schemaId", "INTEGER NOT NULL", false },
	{ "idx", "INTEGER NOT NULL", false }, TXT("name"), COL("value"), COL("isFlag"),
	COL("globalPid"),
};

/* Unified-memory page faults, as nsys exports them (its schema reference):
 * a host access to managed pages that were on a GPU, with the function and
 * module its pc lies in; and a GPU's faults on one page, numberOfPageFaults
 * of them, from the driver taking them up to the replay (faultAccessType:
 * enum prof_um_access_type). The migrations they cause are memcpy rows. */
static const struct schema_column c_um_cpu_faults[] = {
	COL("start"), COL("globalPid"), COL("address"), COL("originalFaultPc"),
	SID("CpuInstruction"), SID("module"), COL("unresolvedFaultPc"), SID("sourceFile"),
	COL("sourceLine"),
};

static const struct schema_column c_um_gpu_faults[] = {
	COL("start"), COL("end"), COL("globalPid"), COL("deviceId"), COL("address"),
	COL("numberOfPageFaults"), COL("faultAccessType"),
};

const struct schema_table schema_tables[T__COUNT] = {
	[T_STRINGIDS] = { "StringIds", c_strings, N(c_strings) },
	[T_KERNEL] = { "CUPTI_ACTIVITY_KIND_KERNEL", c_kernel, N(c_kernel) },
	[T_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY", c_memcpy, N(c_memcpy) },
	[T_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET", c_memset, N(c_memset) },
	[T_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME", c_api, N(c_api) },
	[T_DRIVER] = { "CUPTI_ACTIVITY_KIND_DRIVER", c_api, N(c_api) },
	[T_SYNC] = { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", c_sync, N(c_sync) },
	[T_MEMORY] = { "CUDA_GPU_MEMORY_USAGE_EVENTS", c_memory, N(c_memory) },
	[T_NVTX] = { "NVTX_EVENTS", c_nvtx, N(c_nvtx) },
	[T_GPU] = { "TARGET_INFO_GPU", c_gpu, N(c_gpu) },
	[T_PROCESSES] = { "PROCESSES", c_processes, N(c_processes) },
	[T_THREADNAMES] = { "ThreadNames", c_thread_names, N(c_thread_names) },
	[T_SESSION_START] = { "TARGET_INFO_SESSION_START_TIME", c_session_start,
			      N(c_session_start) },
	[T_OVERHEAD] = { "PROFILER_OVERHEAD", c_overhead, N(c_overhead) },
	[T_ENUM_MEMCPY_OPER] = { "ENUM_CUDA_MEMCPY_OPER", c_enum, N(c_enum) },
	[T_ENUM_MEM_KIND] = { "ENUM_CUDA_MEM_KIND", c_enum, N(c_enum) },
	[T_META] = { "PERFKIT_META", c_meta, N(c_meta) },
	[T_COUNTERS] = { "PERFKIT_COUNTERS", c_counters, N(c_counters) },
	[T_PROC_INFO] = { "PERFKIT_PROCESS_INFO", c_proc_info, N(c_proc_info) },
	[T_CLOCKS] = { "PERFKIT_CLOCKS", c_clocks, N(c_clocks) },
	[T_PROC_GPUS] = { "PERFKIT_PROCESS_GPUS", c_proc_gpus, N(c_proc_gpus) },
	[T_GPU_METRICS] = { "GPU_METRICS", c_gpu_metrics, N(c_gpu_metrics) },
	[T_GPU_METRIC_TYPES] = { "TARGET_INFO_GPU_METRICS", c_gpu_metric_types,
				 N(c_gpu_metric_types) },
	[T_PAYLOAD_SCHEMAS] = { "NVTX_PAYLOAD_SCHEMAS", c_payload_schemas, N(c_payload_schemas) },
	[T_PAYLOAD_SCHEMA_ENTRIES] = { "NVTX_PAYLOAD_SCHEMA_ENTRIES", c_payload_schema_entries,
				       N(c_payload_schema_entries) },
	[T_PAYLOAD_ENUM_ENTRIES] = { "NVTX_PAYLOAD_ENUM_ENTRIES", c_payload_enum_entries,
				     N(c_payload_enum_entries) },
	[T_UM_CPU_FAULTS] = { "CUDA_UM_CPU_PAGE_FAULT_EVENTS", c_um_cpu_faults,
			      N(c_um_cpu_faults) },
	[T_UM_GPU_FAULTS] = { "CUDA_UM_GPU_PAGE_FAULT_EVENTS", c_um_gpu_faults,
			      N(c_um_gpu_faults) },
};

/* One row per profiled kernel launch (`perfkit run --metrics`), joined to
 * its kernel by (globalPid, correlationId). A counter the metric set does
 * not measure is NULL. */
static const struct schema_column c_kernel_metrics[] = {
	{ "globalPid", "INTEGER NOT NULL", false }, { "correlationId", "INTEGER NOT NULL", false },
	COL("deviceId"), COL("durationNs"), REAL("flopsF64"), REAL("flopsF32"), REAL("flopsF16"),
	REAL("tensorInst"), COL("dramReadBytes"), COL("dramWriteBytes"), COL("l2Bytes"),
	/* access efficiency: global load/store sectors and requests, bytes the
	 * instructions asked for, L1 and L2 sector hit rates (percent) */
	COL("ldSectors"), COL("ldRequests"), COL("stSectors"), COL("stRequests"),
	COL("ldBytesRequested"), COL("stBytesRequested"), REAL("l1HitPct"), REAL("l2HitPct"),
};

/* The ceilings `perfkit peaks` measured: numbers in value, the GPU's name and
 * uuid in text. */
static const struct schema_column c_peaks[] = {
	{ "key", "TEXT PRIMARY KEY", false }, REAL("value"), TXT("text"),
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

int schema__create(sqlite3 *db)
{
	char version[16];
	int rc = SQLITE_OK;

	for (int i = 0; i < T__COUNT && rc == SQLITE_OK; i++)
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
};

const int schema_index_count = N(schema_indexes);

int schema__create_index(sqlite3 *db, const struct schema_index *ix)
{
	char sql[512];

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
