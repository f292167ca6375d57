/* thread_label.c - a thread's label for people: the rule (sum_thread__label)
 * and a capture's threads read once (sum_thread_labels). */
#include "model/call_pairs.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/sums.h"
#include "model/thread_label.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/array.h"
#include "prof/event.h"
#include "prof/tables.h"
#include "prof/error.h"

/* Linux keeps 15 bytes of a thread's name (TASK_COMM_LEN less its NUL). */
#define OS_NAME_MAX 15

/* ---- the rule ------------------------------------------------------------- */

/* Whether name is what a thread inherits rather than a name the program
 * gave: its process's name (whole, cut to the OS's 15 bytes, or the last
 * part of a path), or PyTorch's name for the main thread. */
static bool name_is_inherited(const char *name, const char *process_name)
{
	const char *base;

	if (strcmp(name, "pt_main_thread") == 0)
		return true;
	if (!process_name || !*process_name)
		return false;
	base = strrchr(process_name, '/');
	base = base ? base + 1 : process_name;
	for (int i = 0; i < 2; i++) {
		const char *p = i ? base : process_name;

		if (strcmp(name, p) == 0 ||
		    (strlen(name) == OS_NAME_MAX && strncmp(name, p, OS_NAME_MAX) == 0))
			return true;
	}
	return false;
}

/* The number that ends name after prefix and any spaces ("NCCL Progress 1"
 * -> 1), or -1 when name is not prefix, spaces and digits alone. */
static long number_after(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;
	long v = 0;

	if (strncmp(name, prefix, n) != 0)
		return -1;
	for (p = name + n; *p == ' '; p++)
		;
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > 99999)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* The label of a name the program, PyTorch or NCCL gave: theirs put in
 * words where the name is theirs, the name itself otherwise. */
static void label_of_name(const char *name, char *out, size_t size)
{
	static const struct { const char *name, *label; } fixed[] = {
		{ "pt_data_pin", "pin memory" },
		{ "pt_nccl_watchdg", "NCCL watchdog" },
		{ "pt_nccl_heartbt", "NCCL heartbeat" },
	};
	static const struct { const char *prefix, *label; } per_gpu[] = {
		{ "pt_autograd_", "autograd" },
		{ "NCCL Progress", "NCCL proxy" },
		{ "NCCL Service", "NCCL service" },
	};
	long gpu;

	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strcmp(name, fixed[i].name) == 0) {
			snprintf(out, size, "%s", fixed[i].label);
			return;
		}
	for (size_t i = 0; i < sizeof per_gpu / sizeof per_gpu[0]; i++)
		if ((gpu = number_after(name, per_gpu[i].prefix)) >= 0) {
			snprintf(out, size, "%s (GPU %ld)", per_gpu[i].label, gpu);
			return;
		}
	snprintf(out, size, "%s", name);
}

void sum_thread__label(int64_t global_tid, const char *name, const char *process_name,
		       enum sum_thread_role role, char *out, size_t size)
{
	uint32_t tid = prof_tid_of(global_tid);
	bool own_name = name && *name && !name_is_inherited(name, process_name);
	char named[SUM_THREAD_LABEL_MAX];

	if (!out || size == 0)
		return;
	if (own_name)
		label_of_name(name, named, sizeof named);
	if (tid == prof_pid_of(global_tid)) {
		if (own_name)
			snprintf(out, size, "main (%s)", named);
		else
			snprintf(out, size, "main");
	} else if (own_name) {
		snprintf(out, size, "%s", named);
	} else if (role == SUM_THREAD_ROLE_PIN_MEMORY) {
		/* a guess from the calls: the tid stays, to find the thread by */
		snprintf(out, size, "pin memory (thread %" PRIu32 ")", tid);
	} else if (role == SUM_THREAD_ROLE_EVENT_POLL) {
		snprintf(out, size, "event polling (thread %" PRIu32 ")", tid);
	} else {
		snprintf(out, size, "thread %" PRIu32, tid);
	}
}

/* ---- a thread's role from its calls ----------------------------------------- */

enum call_kind { CALL_OTHER, CALL_SETUP, CALL_HOST_ALLOC, CALL_EVENT_QUERY };

/* What a call (its name without the "_v" suffix) tells of its thread.
 * Set-up calls say nothing: every thread that touches CUDA makes them. */
static enum call_kind call_kind_of(const char *name, size_t len)
{
	static const struct { const char *name; enum call_kind kind; } calls[] = {
		{ "cudaGetDevice", CALL_SETUP },
		{ "cudaSetDevice", CALL_SETUP },
		{ "cudaGetDeviceCount", CALL_SETUP },
		{ "cudaGetLastError", CALL_SETUP },
		{ "cudaPeekAtLastError", CALL_SETUP },
		{ "cudaThreadExchangeStreamCaptureMode", CALL_SETUP },
		{ "cudaStreamIsCapturing", CALL_SETUP },
		{ "cudaDeviceGetAttribute", CALL_SETUP },
		{ "cudaGetDeviceProperties", CALL_SETUP },
		{ "cudaDriverGetVersion", CALL_SETUP },
		{ "cudaRuntimeGetVersion", CALL_SETUP },
		{ "cudaGetDriverEntryPoint", CALL_SETUP },
		{ "cudaGetDriverEntryPointByVersion", CALL_SETUP },
		{ "cuGetProcAddress", CALL_SETUP },
		{ "cuDevicePrimaryCtxGetState", CALL_SETUP },
		{ "cuCtxGetCurrent", CALL_SETUP },
		{ "cuCtxSetCurrent", CALL_SETUP },
		{ "cuCtxGetDevice", CALL_SETUP },
		{ "cuDeviceGet", CALL_SETUP },
		{ "cuDeviceGetAttribute", CALL_SETUP },
		{ "cuDeviceGetCount", CALL_SETUP },
		{ "cuDriverGetVersion", CALL_SETUP },
		{ "cuInit", CALL_SETUP },
		{ "cuGetErrorName", CALL_SETUP },
		{ "cuGetErrorString", CALL_SETUP },
		{ "cudaHostAlloc", CALL_HOST_ALLOC },
		{ "cudaMallocHost", CALL_HOST_ALLOC },
		{ "cudaFreeHost", CALL_HOST_ALLOC },
		{ "cudaHostRegister", CALL_HOST_ALLOC },
		{ "cudaHostUnregister", CALL_HOST_ALLOC },
		{ "cudaHostGetDevicePointer", CALL_HOST_ALLOC },
		{ "cuMemHostAlloc", CALL_HOST_ALLOC },
		{ "cuMemAllocHost", CALL_HOST_ALLOC },
		{ "cuMemFreeHost", CALL_HOST_ALLOC },
		{ "cuMemHostRegister", CALL_HOST_ALLOC },
		{ "cuMemHostUnregister", CALL_HOST_ALLOC },
		{ "cudaEventQuery", CALL_EVENT_QUERY },
		{ "cuEventQuery", CALL_EVENT_QUERY },
	};

	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (strlen(calls[i].name) == len && memcmp(calls[i].name, name, len) == 0)
			return calls[i].kind;
	return CALL_OTHER;
}

/* ---- a capture's threads ------------------------------------------------- */

struct thread_row {
	int64_t global_tid;
	char *name, *process_name; /* until the labels are made */
	unsigned calls;		   /* bits: 1 << enum call_kind */
	char label[SUM_THREAD_LABEL_MAX];
};

struct sum_thread_labels {
	struct thread_row *rows; /* by global_tid */
	size_t n, cap;
	char unknown[SUM_THREAD_LABEL_MAX];
};

static enum sum_thread_role role_of_calls(unsigned calls)
{
	if (calls & (1u << CALL_OTHER))
		return SUM_THREAD_ROLE_UNKNOWN;
	if (calls & (1u << CALL_HOST_ALLOC))
		return SUM_THREAD_ROLE_PIN_MEMORY;
	if (calls & (1u << CALL_EVENT_QUERY))
		return SUM_THREAD_ROLE_EVENT_POLL;
	return SUM_THREAD_ROLE_UNKNOWN;
}

static struct thread_row *find_row(struct sum_thread_labels *l, int64_t global_tid)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->rows[mid].global_tid == global_tid)
			return &l->rows[mid];
		if (l->rows[mid].global_tid < global_tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory reading thread names");
}

/* The threads: every globalTid of t's tables (with API calls, NVTX rows
 * or a name). */
static int read_threads(struct prof_store *s, const struct sum_thread_tables *t, const char *tids_json,
			struct sum_thread_labels *l, struct prof_error *err)
{
	char sql[1024];
	size_t len;
	struct prof_cursor *cur = NULL;
	bool any = false;
	int rc;

	len = (size_t)snprintf(sql, sizeof sql, "SELECT g, %s, %s FROM (",
			       prof_store__has_table(s, PROF_T_THREAD_NAMES)
				       ? "(SELECT v.value FROM " PROF_T_THREAD_NAMES " tn JOIN " PROF_T_STRINGS
					 " v ON v.id = tn.nameId WHERE tn.globalTid = g LIMIT 1)"
				       : "NULL",
			       prof_store__has_table(s, PROF_T_PROCESSES)
				       ? "(SELECT name FROM " PROF_T_PROCESSES
					 " WHERE globalPid = (g & ~16777215) LIMIT 1)"
				       : "NULL");
	for (size_t i = 0; i < sizeof t->threads / sizeof t->threads[0] && t->threads[i]; i++) {
		len += (size_t)snprintf(sql + len, sizeof sql - len,
					"%sSELECT globalTid AS g FROM %s WHERE globalTid IS NOT NULL",
					any ? " UNION " : "", t->threads[i]);
		any = true;
	}
	/* and those of a walk of the calls (the JSON array ?1) */
	if (tids_json) {
		len += (size_t)snprintf(sql + len, sizeof sql - len, "%sSELECT value AS g FROM json_each(?1)",
					any ? " UNION " : "");
		any = true;
	}
	if (!any)
		return 0;
	snprintf(sql + len, sizeof sql - len, ") ORDER BY g");
	rc = prof_cursor__open(s, sql, &cur, err);
	if (rc == 0 && tids_json && prof_cursor__bind_text(cur, 1, tids_json))
		rc = nomem(err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		struct thread_row *r;

		if (prof_array__grow(&l->rows, &l->cap, l->n + 1, sizeof *l->rows) < 0) {
			rc = nomem(err);
			break;
		}
		r = &l->rows[l->n++];
		memset(r, 0, sizeof *r);
		r->global_tid = prof_cursor__int64(cur, 0);
		r->name = dup_or_null(prof_cursor__text(cur, 1));
		r->process_name = dup_or_null(prof_cursor__text(cur, 2));
		if ((prof_cursor__text(cur, 1) && !r->name) ||
		    (prof_cursor__text(cur, 2) && !r->process_name))
			rc = nomem(err);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* Which kinds of call each thread made (each API name once per thread). */
static int read_calls(struct prof_store *s, const char *table, struct sum_thread_labels *l,
		      struct prof_error *err)
{
	char sql[256];
	struct prof_cursor *cur = NULL;
	int rc;

	if (!table)
		return 0;
	snprintf(sql, sizeof sql,
		 "SELECT r.globalTid, v.value FROM (SELECT DISTINCT globalTid, nameId FROM %s) r"
		 " JOIN " PROF_T_STRINGS " v ON v.id = r.nameId",
		 table);
	rc = prof_cursor__open(s, sql, &cur, err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		struct thread_row *r = find_row(l, prof_cursor__int64(cur, 0));
		const char *name = prof_cursor__text(cur, 1);

		if (r && name)
			r->calls |= 1u << call_kind_of(name, sum_api_name_len(name));
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* Whether a thread's calls decide its label: one that is not main and has
 * no name of its own. */
static bool needs_calls(const struct thread_row *r)
{
	return prof_tid_of(r->global_tid) != prof_pid_of(r->global_tid) &&
	       (!r->name || !*r->name || name_is_inherited(r->name, r->process_name));
}

/* A copy of the labels l made, for a reader of its own (the copy's
 * unknown label is its own to write). */
static struct sum_thread_labels *labels_copy(const struct sum_thread_labels *l)
{
	struct sum_thread_labels *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->rows = malloc(sizeof *c->rows * (l->n ? l->n : 1));
	if (!c->rows) {
		free(c);
		return NULL;
	}
	if (l->n)
		memcpy(c->rows, l->rows, sizeof *c->rows * l->n);
	c->n = c->cap = l->n;
	return c;
}

static void labels_free(void *l)
{
	sum_thread_labels__delete(l);
}

/* The labels of a finished capture read whole, shared by the connections
 * to the file (prof_store__shared_take): reading them is three passes over
 * the calls (3.5 s at 22M calls), which the HTML page's folded stacks and
 * its step section each made, the second at the page's end. */
static const char labels_key = 0;

static int load_walked(struct prof_store *s, const struct sum_thread_tables *t, struct sum_thread_labels **out,
		       struct prof_error *err);

int sum_thread_labels__load(struct prof_store *s, struct sum_thread_labels **out,
			    struct prof_error *err)
{
	static const char *const threads[] = { PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_NVTX,
					       PROF_T_THREAD_NAMES };
	static const char *const calls[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	struct sum_thread_tables t = { 0 };
	struct sum_thread_labels *copy;
	void *known = NULL;
	int got = -1, rc;
	size_t n = 0;

	*out = NULL;
	if (prof_store__is_finished(s) && !prof_store__restricted(s))
		got = prof_store__shared_take(s, &labels_key, "", 0, &known);
	if (got == 1) {
		*out = labels_copy(known);
		return *out ? 0 : nomem(err);
	}
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
		if (prof_store__has_table(s, threads[i]))
			t.threads[n++] = threads[i];
	for (int i = 0; i < 2; i++)
		t.calls[i] = prof_store__has_table(s, calls[i]) ? calls[i] : NULL;
	rc = load_walked(s, &t, out, err);
	if (rc == 0)
		rc = sum_thread_labels__load_from(s, &t, out, err);
	else if (rc == 1)
		rc = 0;
	if (got != 0)
		return rc;
	copy = rc == 0 ? labels_copy(*out) : NULL;
	if (copy)
		prof_store__shared_give(s, &labels_key, "", 0, copy, labels_free);
	else /* whoever waits reads them for itself */
		prof_store__shared_drop(s, &labels_key, "", 0);
	return rc;
}

/* l's rows labelled, their names freed: *out = l, or l freed after rc. */
static int label_rows(struct sum_thread_labels *l, int rc, struct sum_thread_labels **out)
{
	for (size_t i = 0; i < l->n; i++) {
		struct thread_row *r = &l->rows[i];

		sum_thread__label(r->global_tid, r->name, r->process_name, role_of_calls(r->calls),
				  r->label, sizeof r->label);
		free(r->name);
		free(r->process_name);
		r->name = r->process_name = NULL;
	}
	if (rc < 0) {
		sum_thread_labels__delete(l);
		return rc;
	}
	*out = l;
	return 0;
}

static bool any_needs_calls(const struct sum_thread_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (needs_calls(&l->rows[i]))
			return true;
	return false;
}

int sum_thread_labels__load_from(struct prof_store *s, const struct sum_thread_tables *t,
				 struct sum_thread_labels **out, struct prof_error *err)
{
	struct sum_thread_labels *l = calloc(1, sizeof *l);
	int rc;

	*out = NULL;
	if (!l)
		return nomem(err);
	rc = read_threads(s, t, NULL, l, err);
	for (int i = 0; rc == 0 && any_needs_calls(l) && i < 2; i++)
		rc = read_calls(s, t->calls[i], l, err);
	return label_rows(l, rc, out);
}

/* ---- the calls walked once --------------------------------------------------- */

/* a pair's name's kind, bit set; 0: no string */
static void note_kind(void *arg, size_t k, const char *name)
{
	((unsigned *)arg)[k] = 1u << call_kind_of(name, sum_api_name_len(name));
}

/* Each pair's name's kind of call on its thread's row: one statement over
 * the distinct name ids. */
static int apply_pairs(struct prof_store *s, const struct call_pairs *w, struct sum_thread_labels *l,
		       struct prof_error *err)
{
	unsigned *kind_of = calloc(w->n ? w->n : 1, sizeof *kind_of);
	size_t n;
	int rc = kind_of ? sum_call_pairs__each_string(s, w, false, note_kind, kind_of, &n, err) : nomem(err);

	for (size_t i = 0, k = 0; rc == 0 && i < w->cap; i++) {
		struct thread_row *r;

		if (!w->v[i].used)
			continue;
		/* the calls of no thread label none */
		r = w->v[i].tid_null ? NULL : find_row(l, w->v[i].tid);
		if (r)
			r->calls |= kind_of[k];
		k++;
	}
	free(kind_of);
	return rc < 0 ? rc : 0;
}

/* sum_thread_labels__load_from of the capture's own tables, the calls
 * walked once for their threads and names where a pass over them found
 * their threads and another their names (DISTINCT, a sort of every call
 * each): 1 and *out; 0 where the walk cannot stand for SQL's. */
static int load_walked(struct prof_store *s, const struct sum_thread_tables *t, struct sum_thread_labels **out,
		       struct prof_error *err)
{
	struct call_pairs *w = NULL;
	struct sum_thread_tables others = { 0 };
	struct sum_thread_labels *l = NULL;
	char *tids = NULL;
	size_t n = 0;
	int walked, rc = 0;

	*out = NULL;
	walked = sum_call_pairs__load(s, t->calls, &w, err);
	for (size_t i = 0; i < sizeof t->threads / sizeof t->threads[0] && t->threads[i]; i++)
		if (strcmp(t->threads[i], PROF_T_RUNTIME) && strcmp(t->threads[i], PROF_T_DRIVER))
			others.threads[n++] = t->threads[i];
	if (walked == 1 && (!(tids = sum_json_ids(w->tids, w->ntids)) || !(l = calloc(1, sizeof *l))))
		rc = nomem(err);
	if (walked == 1 && rc == 0)
		rc = read_threads(s, &others, tids, l, err);
	if (walked == 1 && rc == 0 && any_needs_calls(l))
		rc = apply_pairs(s, w, l, err);
	free(tids);
	sum_call_pairs__delete(w);
	if (walked != 1 || !l)
		return walked < 0 ? walked : rc;
	rc = label_rows(l, rc, out);
	return rc < 0 ? rc : 1;
}

const char *sum_thread_labels__get(struct sum_thread_labels *l, int64_t global_tid)
{
	struct thread_row *r = find_row(l, global_tid);

	if (r)
		return r->label;
	sum_thread__label(global_tid, NULL, NULL, SUM_THREAD_ROLE_UNKNOWN, l->unknown,
			  sizeof l->unknown);
	return l->unknown;
}

void sum_thread_labels__delete(struct sum_thread_labels *l)
{
	if (!l)
		return;
	free(l->rows);
	free(l);
}
