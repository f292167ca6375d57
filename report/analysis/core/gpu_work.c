/* gpu_work.c - the GPU work of a window joined to the calls that launched
 * it, the window's API call names, the stream waits, and labels: what
 * gpu_idle.c and critical_path.c read the capture through. */
#include "gpu_work.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/event.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/error.h"

/* One table's part of the GPU work union: table and column names are
 * constants of this file (a column the file lacks reads NULL). Rows with a
 * bad span are left out, as every sum leaves them out: a start of
 * INT64_MIN would otherwise count as work from the window's start on. */
static void work_part(char *buf, size_t cap, const char *table, int kind, const char *what,
		      const char *copy_columns)
{
	snprintf(buf, cap,
		 "SELECT start, end, deviceId, streamId, correlationId, globalPid,"
		 " %d AS kind, %s AS what, %s FROM %s WHERE NOT " SUM_BAD_SPAN(""),
		 kind, what, copy_columns, table);
}

/* The union of the GPU tables that exist (kernels, copies, memsets and
 * graphs launched whole), malloc'd; NULL with *rc 0 when none does. */
static char *work_union(struct prof_store *s, int *rc, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET,
					      PROF_T_GRAPH_TRACE };
	char parts_sql[4][512];
	const char *parts[4];

	work_part(parts_sql[0], sizeof parts_sql[0], PROF_T_KERNEL, GPU_WORK_KERNEL,
		  PROF_SQL_KERNEL_NAME_ID(""), "NULL AS copyKind, NULL AS srcKind, NULL AS dstKind, NULL AS bytes");
	work_part(parts_sql[1], sizeof parts_sql[1], PROF_T_MEMCPY, GPU_WORK_COPY, "NULL",
		  "copyKind, srcKind, dstKind, bytes");
	work_part(parts_sql[2], sizeof parts_sql[2], PROF_T_MEMSET, GPU_WORK_MEMSET, "NULL",
		  "NULL, NULL, NULL, bytes");
	work_part(parts_sql[3], sizeof parts_sql[3], PROF_T_GRAPH_TRACE, GPU_WORK_GRAPH, "NULL",
		  "NULL, NULL, NULL, NULL");
	for (int i = 0; i < 4; i++)
		parts[i] = parts_sql[i];
	return sum_union(s, tables, parts, 4, rc, err);
}

int range_cursor__open(struct prof_store *s, char *sql, int64_t from, int64_t to, const int64_t *device,
		       struct prof_cursor **out, struct prof_error *err)
{
	int rc;

	*out = NULL;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, out, err);
	free(sql);
	if (rc)
		return rc;
	prof_cursor__bind_int64(*out, 1, from);
	prof_cursor__bind_int64(*out, 2, to);
	if (device)
		prof_cursor__bind_int64(*out, 3, *device);
	return 0;
}

int gpu_work__devices(struct diag_scope *ctx, int64_t from, int64_t to, int64_t **ids, int *n,
		      struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *src, *sql;
	int rc, cap = 0;

	*ids = NULL;
	*n = 0;
	src = work_union(ctx->store, &rc, err);
	if (!src)
		return rc;
	sql = diag__fmt("SELECT DISTINCT coalesce(deviceId, 0) FROM (%s) WHERE end > ?1 AND start < ?2"
			" ORDER BY 1", src);
	free(src);
	rc = range_cursor__open(ctx->store, sql, from, to, NULL, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (array__grow((void **)ids, &cap, *n + 1, sizeof **ids)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		(*ids)[(*n)++] = prof_cursor__int64(c, 0);
	}
	prof_cursor__close(c);
	if (rc < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}

static int open_work(struct diag_scope *ctx, int64_t from, int64_t to, const int64_t *device,
		     bool ordered, struct prof_cursor **out, struct prof_error *err)
{
	const char *launch_columns = ctx->has_api_calls ? "a.start, a.end, a.globalTid, a.nameId"
							: "NULL, NULL, NULL, NULL";
	char *src, *sql;
	int rc;

	*out = NULL;
	src = work_union(ctx->store, &rc, err);
	if (!src)
		return rc;
	/* a call and the work it launched share a correlation id within one
	 * process (SUM_LAUNCHED_BY, as every other report joins them) */
	sql = diag__fmt("SELECT g.start, g.end, coalesce(g.deviceId, 0), g.streamId,"
			" coalesce(g.globalPid, 0), g.kind, g.what, g.copyKind, g.srcKind, g.dstKind, %s,"
			" coalesce(g.bytes, 0)"
			" FROM (%s) g%s"
			" WHERE g.end > ?1 AND g.start < ?2%s%s",
			launch_columns, src,
			ctx->has_api_calls ? " LEFT JOIN " DIAG_API_CALLS " a ON " SUM_LAUNCHED_BY("g", "a") : "",
			device ? " AND coalesce(g.deviceId, 0) = ?3" : "", ordered ? " ORDER BY g.start" : "");
	free(src);
	return range_cursor__open(ctx->store, sql, from, to, device, out, err);
}

int gpu_work__open(struct diag_scope *ctx, int64_t from, int64_t to, const int64_t *device,
		   struct prof_cursor **out, struct prof_error *err)
{
	return open_work(ctx, from, to, device, true, out, err);
}

int gpu_work__open_unordered(struct diag_scope *ctx, int64_t from, int64_t to,
			     struct prof_cursor **out, struct prof_error *err)
{
	return open_work(ctx, from, to, NULL, false, out, err);
}

void gpu_work__read(struct prof_cursor *c, struct gpu_work *w)
{
	w->start_ns = prof_cursor__int64(c, 0);
	w->end_ns = prof_cursor__int64(c, 1);
	if (w->end_ns < w->start_ns)
		w->end_ns = w->start_ns; /* a damaged row counts as an instant */
	w->device_id = prof_cursor__int64(c, 2);
	w->stream_id = prof_cursor__int64(c, 3);
	w->pid = prof_cursor__int64(c, 4);
	w->kind = (enum gpu_work_kind)prof_cursor__int64(c, 5);
	w->name_id = prof_cursor__is_null(c, 6) ? -1 : prof_cursor__int64(c, 6);
	w->copy_kind = (int)prof_cursor__int64(c, 7);
	w->src_kind = (int)prof_cursor__int64(c, 8);
	w->dst_kind = (int)prof_cursor__int64(c, 9);
	w->has_launch = !prof_cursor__is_null(c, 10);
	w->launch_start_ns = w->has_launch ? prof_cursor__int64(c, 10) : 0;
	w->launch_end_ns = w->has_launch ? prof_cursor__int64(c, 11) : 0;
	if (w->launch_end_ns < w->launch_start_ns)
		w->launch_end_ns = w->launch_start_ns;
	w->launch_tid = w->has_launch ? prof_cursor__int64(c, 12) : 0;
	w->launch_name_id = w->has_launch ? prof_cursor__int64(c, 13) : -1;
	w->bytes = prof_cursor__int64(c, 14);
}

int stream_key__cmp(int64_t pid_a, int64_t device_a, int64_t stream_a, int64_t pid_b, int64_t device_b,
		    int64_t stream_b)
{
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	if (device_a != device_b)
		return device_a < device_b ? -1 : 1;
	return (stream_a > stream_b) - (stream_a < stream_b);
}

int64_t ns_between(int64_t earlier, int64_t later)
{
	int64_t d;

	if (__builtin_sub_overflow(later, earlier, &d))
		return later > earlier ? INT64_MAX : INT64_MIN;
	return d;
}

/* The statement gpu_work__string asks, kept prepared for the connection:
 * a diagnosis names a few dozen steps' and idle stretches' work a rank,
 * each a statement prepared and finalized. */
static const char string_ask_key;

static void close_ask(void *c)
{
	prof_cursor__close(c);
}

const char *gpu_work__string(struct prof_store *s, int64_t id, char *buf, size_t cap)
{
	struct prof_cursor *c = prof_store__kept(s, &string_ask_key);
	struct prof_error err = { 0 };
	bool kept = c != NULL;

	snprintf(buf, cap, "?");
	if (!c && prof_cursor__open(s, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &c, &err) < 0)
		return buf;
	if (!kept)
		kept = prof_store__keep(s, &string_ask_key, c, close_ask, &err) == 0;
	prof_cursor__bind_int64(c, 1, id);
	if (prof_cursor__next(c, &err) == 1 && prof_cursor__text(c, 0))
		snprintf(buf, cap, "%s", prof_cursor__text(c, 0));
	/* done stepping: a statement left stepping keeps the connection
	 * reading (a temporary table is dropped only while none is) */
	prof_cursor__reset(c);
	if (!kept)
		prof_cursor__close(c);
	return buf;
}

static const char *mem_word(int kind)
{
	const char *w = sum_mem_word(kind);
	return w ? w : "other";
}

const char *gpu_work__label(struct prof_store *s, const struct gpu_work *w, char *buf, size_t cap)
{
	char name[512];

	switch (w->kind) {
	case GPU_WORK_KERNEL:
		snprintf(buf, cap, "%s", gpu_work__string(s, w->name_id, name, sizeof name));
		break;
	case GPU_WORK_COPY:
		snprintf(buf, cap, "%s %s->%s", sum_copy_operation(w->copy_kind), mem_word(w->src_kind),
			 mem_word(w->dst_kind));
		break;
	case GPU_WORK_GRAPH:
		/* recorded whole (--cuda-graph-trace=graph): no node is known */
		snprintf(buf, cap, "graph launch, nodes not recorded");
		break;
	default:
		snprintf(buf, cap, "%s", SUM_MEMSET_OPERATION);
	}
	return buf;
}

/* ---- API calls ----------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool starts_with_any(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (starts_with(s, *prefixes))
			return true;
	return false;
}

enum api_kind api_kind__of(const char *name)
{
	static const char *const alloc[] = {
		"cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
		"cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemHostRegister", "cuMemHostUnregister",
		"cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemAddressReserve",
		"cuMemAddressFree", NULL,
	};
	static const char *const copy[] = { "cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemsetD", NULL };

	if (!name)
		return API_OTHER;
	/* cudaLaunchKernel, __cudaLaunchKernel (CUDA 13's <<<>>>), cuLaunchKernelEx,
	 * cudaGraphLaunch, cudaLaunchHostFunc */
	if (strstr(name, "Launch"))
		return API_LAUNCH;
	if (strstr(name, "Synchronize"))
		return API_SYNC;
	if (starts_with_any(name, alloc))
		return API_ALLOC;
	if (starts_with_any(name, copy))
		return API_COPY;
	return API_OTHER;
}

const char *api_kind__name(enum api_kind k)
{
	static const char *const names[] = { "launch", "synchronisation", "allocation", "copy",
					     "other CUDA call" };
	return k >= API_LAUNCH && k <= API_OTHER ? names[k] : "?";
}


/* The names a scope read, with the window they were read in. */
struct api_names_read {
	int64_t from, to;
	struct api_names names;
};

static int api_names__copy(const struct api_names *from, struct api_names *to)
{
	to->v = calloc(from->n > 0 ? (size_t)from->n : 1, sizeof *to->v);
	to->n = 0;
	if (!to->v)
		return -1;
	for (; to->n < from->n; to->n++) {
		to->v[to->n] = from->v[to->n];
		to->v[to->n].name = strdup(from->v[to->n].name);
		if (!to->v[to->n].name) {
			api_names__exit(to);
			return -1;
		}
	}
	return 0;
}

static int api_names__read(struct diag_scope *ctx, struct api_names *names, struct prof_error *err)
{
	const char *sql = "SELECT a.nameId, s.value FROM (SELECT DISTINCT nameId FROM " DIAG_API_CALLS
			  " WHERE end > ?1 AND start < ?2) a"
			  " LEFT JOIN " PROF_T_STRINGS " s ON s.id = a.nameId ORDER BY a.nameId";
	struct prof_cursor *c;
	int cap = 0, rc;

	rc = diag_scope__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *value = prof_cursor__text(c, 1);
		struct api_name *e;

		if (array__grow((void **)&names->v, &cap, names->n + 1, sizeof *names->v))
			goto nomem;
		e = &names->v[names->n];
		e->id = prof_cursor__int64(c, 0);
		e->name = value ? strndup(value, sum_api_name_len(value)) : strdup("?");
		if (!e->name)
			goto nomem;
		e->kind = api_kind__of(e->name);
		names->n++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

int api_names__load(struct diag_scope *ctx, struct api_names *names, struct prof_error *err)
{
	struct api_names_read *r = ctx->api_names_read;
	int rc;

	names->v = NULL;
	names->n = 0;
	if (!ctx->has_api_calls)
		return 0;
	if (r && r->from == ctx->w->start_ns && r->to == ctx->w->end_ns)
		return api_names__copy(&r->names, names) ? prof_error__set(err, PROF_E_NOMEM, "out of memory")
							 : 0;
	rc = api_names__read(ctx, names, err);
	if (rc) {
		api_names__exit(names);
		return rc;
	}
	/* kept for the next ask; without room for it, the next reads again */
	r = calloc(1, sizeof *r);
	if (r && api_names__copy(names, &r->names) == 0) {
		r->from = ctx->w->start_ns;
		r->to = ctx->w->end_ns;
		api_names_read__free(ctx->api_names_read);
		ctx->api_names_read = r;
	} else {
		free(r);
	}
	return 0;
}

void api_names_read__free(struct api_names_read *r)
{
	if (!r)
		return;
	api_names__exit(&r->names);
	free(r);
}

void api_names__exit(struct api_names *names)
{
	for (int i = 0; i < names->n; i++)
		free(names->v[i].name);
	free(names->v);
	names->v = NULL;
	names->n = 0;
}

const struct api_name *api_names__find(const struct api_names *names, int64_t id)
{
	size_t n = names->n > 0 ? (size_t)names->n : 0;
	size_t lo = sum_sorted__count_before(names->v, n, sizeof *names->v, offsetof(struct api_name, id),
					     id, false);

	return lo < n && names->v[lo].id == id ? &names->v[lo] : NULL;
}

/* ---- stream waits --------------------------------------------------------- */

int stream_waits__open(struct diag_scope *ctx, const int64_t *device, int64_t from, int64_t to,
		       struct prof_cursor **out, struct prof_error *err)
{
	struct prof_store *s = ctx->store;
	char *sql;

	*out = NULL;
	if (!ctx->has_sync_table)
		return 0;
	/* nsys rows carry the process; perfkit's the thread of the call */
	sql = diag__fmt("SELECT start, coalesce(deviceId, 0), streamId, " PROF_SQL_SYNC_GLOBAL_PID("")
			" FROM " PROF_T_SYNC " WHERE syncType = %d AND start >= ?1 AND start < ?2%s"
			" ORDER BY start", PROF_SYNC_STREAM_WAIT_EVENT,
			device ? " AND coalesce(deviceId, 0) = ?3" : "");
	return range_cursor__open(s, sql, from, to, device, out, err);
}
