/* top_source.c - reading one store incrementally into perfkit top's model
 * (top_source.h). Each table's SELECT is built once per connection from the
 * columns the store has (nsys exports differ by version); rows are turned
 * into model updates by one function per table, whichever way they were
 * read. All values are bound parameters. */
#include "top_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "prof/escape.h"
#include "prof/protocol.h"
#include "prof/saturate.h"
#include "prof/strfmt.h"
#include "prof/tables.h"
#include "summary/summary.h"

#define ROWID_BATCH 65536   /* rows per statement; a new one picks up from there */
#define DEADLINE_EVERY 256  /* rows between looks at the clock */

int64_t top_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- building the statements ---------------------------------------------- */

struct table_def {
	const char *name;
	const char *time;      /* the column that places a row in time */
	const char *pid_expr;  /* the row's process id */
	const char *order;     /* replay order */
};

static const struct table_def tables[TOP_T__COUNT] = {
	[TOP_T_KERNEL] = { PROF_T_KERNEL, "start", PROF_SQL_OS_PID_OF_TID("globalPid"),
			   "start, rowid" },
	[TOP_T_MEMCPY] = { PROF_T_MEMCPY, "start", PROF_SQL_OS_PID_OF_TID("globalPid"),
			   "start, rowid" },
	[TOP_T_MEMSET] = { PROF_T_MEMSET, "start", PROF_SQL_OS_PID_OF_TID("globalPid"),
			   "start, rowid" },
	[TOP_T_GRAPH] = { PROF_T_GRAPH_TRACE, "start", PROF_SQL_OS_PID_OF_TID("globalPid"),
			  "start, rowid" },
	[TOP_T_MEMORY] = { PROF_T_MEMORY, "start", PROF_SQL_OS_PID_OF_TID("globalPid"),
			   "start, rowid" },
	/* a parent that starts with its child comes first, so it nests */
	[TOP_T_NVTX] = { PROF_T_NVTX, "start", PROF_SQL_OS_PID_OF_TID("globalTid"),
			 "start, end DESC, rowid" },
	/* a sample's process is its sampler's */
	[TOP_T_GPU_METRICS] = { PROF_T_GPU_METRICS, "timestamp",
				"(SELECT " PROF_SQL_OS_PID_OF_TID("t.globalPid") " FROM "
				PROF_T_GPU_METRIC_TYPES " t WHERE t.typeId = " PROF_T_GPU_METRICS
				".typeId LIMIT 1)",
				"timestamp, rowid" },
};

/* The SELECT of one table; column order is what the consume_* functions
 * read. Every column is there: the store reads each table in its canonical
 * form (prof_store__open), a column the file lacks as NULL. */
static char *build_select(enum top_table t)
{
	const char *table = tables[t].name;
	char *sql = NULL;

	switch (t) {
	case TOP_T_KERNEL:
		sql = prof_strfmt("SELECT rowid, start, end, " PROF_SQL_KERNEL_NAME_ID("")
				 ", deviceId, globalPid FROM %s WHERE 1", table);
		break;
	case TOP_T_MEMCPY:
	case TOP_T_MEMSET:
		sql = prof_strfmt("SELECT rowid, start, end, bytes, deviceId, globalPid FROM %s WHERE 1",
				 table);
		break;
	case TOP_T_GRAPH:
		sql = prof_strfmt("SELECT rowid, start, end, graphId, deviceId, globalPid FROM %s WHERE 1",
				 table);
		break;
	case TOP_T_MEMORY:
		sql = prof_strfmt("SELECT rowid, start, bytes, memoryOperationType, memKind FROM %s"
				 " WHERE 1", table);
		break;
	case TOP_T_GPU_METRICS:
		sql = prof_strfmt("SELECT rowid, timestamp, typeId, metricId, value FROM %s"
				 " WHERE timestamp IS NOT NULL", table);
		break;
	case TOP_T_NVTX:
		/* push/pop (59) and start/end (60) ranges; marks have no end */
		sql = prof_strfmt("SELECT rowid, start, end, globalTid, textId, text FROM %s"
				 " WHERE eventType IN (" PROF_SQL_NVTX_RANGES ") AND end IS NOT NULL",
				 table);
		break;
	case TOP_T__COUNT:
		break;
	}
	return sql;
}

/* ---- the file ------------------------------------------------------------------ */

int top_source__check_file(struct top_source *s, struct prof_error *err)
{
	struct stat st;

	if (stat(s->path, &st) < 0) {
		if (errno != ENOENT)
			return 0; /* nothing to tell by: a read will say */
		s->lost = TOP_LOSS_DELETED;
		return prof_error__set(err, PROF_E_IO, "%s: deleted while being read", s->path);
	}
	if (st.st_dev != s->dev || st.st_ino != s->ino) {
		s->lost = TOP_LOSS_REPLACED;
		return prof_error__set(err, PROF_E_IO, "%s: replaced by another file while being read",
				       s->path);
	}
	if ((int64_t)st.st_size < s->largest_bytes) {
		s->lost = TOP_LOSS_TRUNCATED;
		return prof_error__set(err, PROF_E_TRUNCATED,
				       "%s: truncated while being read (%lld bytes, %lld before)",
				       s->path, (long long)st.st_size, (long long)s->largest_bytes);
	}
	s->largest_bytes = (int64_t)st.st_size;
	return 0;
}

/* A read failed with rc (err): when that says the file cannot be read as
 * it was (cut short, corrupt, unreadable, gone), the source is lost; the
 * file is looked at first, since a file deleted or truncated reads as
 * damaged. Returns rc. */
static int note_failure(struct top_source *s, int rc, struct prof_error *err)
{
	struct prof_error why;

	if (rc != PROF_E_TRUNCATED && rc != PROF_E_CORRUPT && rc != PROF_E_NOT_SQLITE &&
	    rc != PROF_E_IO)
		return rc;
	if (top_source__check_file(s, &why) < 0)
		*err = why;
	else
		s->lost = rc == PROF_E_TRUNCATED ? TOP_LOSS_TRUNCATED : TOP_LOSS_DAMAGED;
	return rc;
}

/* After reading: a read whose caller answered without an error (a table
 * looked up, a counter) may have found the file damaged all the same. */
static int check_reads(struct top_source *s, struct prof_error *err)
{
	int rc = s->store ? prof_store__check_read(s->store, err) : 0;

	return rc < 0 ? note_failure(s, rc, err) : 0;
}

/* ---- connection -------------------------------------------------------------- */

int top_source__connect(struct top_source *s, struct prof_error *err)
{
	int rc;

	if (s->store)
		return 0;
	rc = prof_store__open(s->path, &s->store, err);
	if (rc)
		return note_failure(s, rc, err);
	for (int t = 0; t < TOP_T__COUNT; t++) {
		struct top_table_pos *p = &s->t[t];

		free(p->select);
		p->select = NULL;
		/* a table the file lacks reads as empty, and is not read until
		 * it is there (take_up_new_tables) */
		p->present = prof_store__has_table(s->store, tables[t].name);
		if (!(p->select = build_select(t))) {
			top_source__disconnect(s);
			return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
		}
	}
	return 0;
}

void top_source__disconnect(struct top_source *s)
{
	for (int t = 0; t < TOP_T__COUNT; t++) {
		prof_cursor__close(s->t[t].cur);
		s->t[t].cur = NULL;
	}
	prof_store__close(s->store);
	s->store = NULL;
}

int top_source__open(const char *path, enum top_read_mode mode, struct top_source **out,
		     struct prof_error *err)
{
	struct top_source *s = calloc(1, sizeof *s);
	struct stat st;
	int rc;

	*out = NULL;
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", path);
	}
	s->mode = mode;
	s->pid = prof_proc_file__pid(path);
	idmap__init(&s->kernel_ids);
	idmap__init(&s->graph_ids);
	idmap__init(&s->range_ids);
	idmap__init(&s->metric_ids);
	idmap__init(&s->gpu_ids);
	rc = top_source__connect(s, err);
	if (!rc && stat(path, &st) < 0)
		rc = prof_error__set(err, PROF_E_IO, "%s: %s", path, strerror(errno));
	if (rc) {
		top_source__close(s);
		return rc;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->largest_bytes = (int64_t)st.st_size;
	*out = s;
	return 0;
}

void top_source__close(struct top_source *s)
{
	if (!s)
		return;
	top_source__disconnect(s);
	for (int t = 0; t < TOP_T__COUNT; t++)
		free(s->t[t].select);
	idmap__exit(&s->kernel_ids);
	idmap__exit(&s->graph_ids);
	idmap__exit(&s->range_ids);
	idmap__exit(&s->metric_ids);
	idmap__exit(&s->gpu_ids);
	free(s->path);
	free(s);
}

/* ---- names ---------------------------------------------------------------------- */

/* The StringIds text of id (malloc'd), NULL when absent. */
static char *string_of(struct top_source *s, int64_t id)
{
	struct prof_cursor *c = NULL;
	struct prof_error err;
	char *text = NULL;

	if (prof_cursor__open(s->store, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &c, &err))
		return NULL;
	prof_cursor__bind_int64(c, 1, id);
	if (prof_cursor__next(c, &err) == 1 && !prof_cursor__is_null(c, 0))
		text = strdup(prof_cursor__text(c, 0));
	prof_cursor__close(c);
	return text;
}

/* The model's name index for a StringIds id, asking the store once per id. */
static int32_t name_of_id(struct top_source *s, struct top_model *m, struct idmap *ids,
			  int64_t id, int32_t (*intern)(struct top_model *, const char *))
{
	int32_t i = idmap__get(ids, id);
	char *text;

	if (i >= 0)
		return i;
	text = string_of(s, id);
	i = intern(m, text);
	free(text);
	if (idmap__put(ids, id, i))
		m->out_of_memory = true;
	return i;
}

/* The model's name index for a graph launch (graphId in column 3), named
 * as the kernel summaries name it, once per graph. */
static int32_t graph_launch_name(struct top_source *s, struct top_model *m, struct prof_cursor *c)
{
	bool known = !prof_cursor__is_null(c, 3);
	int64_t id = known ? prof_cursor__int64(c, 3) : 0;
	/* the idmap keeps INT64_MIN for its free slots */
	bool kept = known && id != INT64_MIN;
	int32_t i = kept ? idmap__get(&s->graph_ids, id) : -1;
	char name[96];

	if (i >= 0)
		return i;
	sum_graph_launch_name(name, sizeof name, known, id);
	i = top_model__kernel_name(m, name);
	if (kept && idmap__put(&s->graph_ids, id, i))
		m->out_of_memory = true;
	return i;
}

/* The thread's label (model/thread_label.h) from its ThreadNames name
 * and its process's, looked up when the thread is new; "" where the label
 * would only repeat the tid the row shows anyway. */
static void name_thread(struct top_source *s, struct top_thread *t)
{
	struct prof_cursor *c = NULL;
	struct prof_error err;
	char label[SUM_THREAD_LABEL_MAX], bare[48];

	if (prof_cursor__open(s->store, "SELECT (SELECT s.value FROM " PROF_T_THREAD_NAMES " t JOIN "
			      PROF_T_STRINGS " s ON s.id = t.nameId WHERE t.globalTid = ?1 LIMIT 1),"
			      " (SELECT name FROM " PROF_T_PROCESSES
			      " WHERE globalPid = (?1 & ~16777215) LIMIT 1)", &c, &err))
		return;
	prof_cursor__bind_int64(c, 1, t->global_tid);
	if (prof_cursor__next(c, &err) == 1) {
		sum_thread__label(t->global_tid, prof_cursor__text(c, 0), prof_cursor__text(c, 1),
				  SUM_THREAD_ROLE_UNKNOWN, label, sizeof label);
		snprintf(bare, sizeof bare, "thread %u", (unsigned)(t->global_tid & 0xFFFFFF));
		if (strcmp(label, bare) != 0)
			prof_sanitize_term(t->name, sizeof t->name, label);
	}
	prof_cursor__close(c);
}

/* The kind top shows a (typeId, metricId) as, or -1, asking the store once
 * per pair; a pair not described yet is asked again at its next row. */
static int metric_kind(struct top_source *s, int64_t type_id, int64_t metric_id)
{
	/* metricIds are small: nsys numbers a sampler's metrics from 0 */
	int64_t key = (int64_t)((uint64_t)type_id << 20 ^ (uint64_t)(metric_id & 0xFFFFF));
	int32_t kind = idmap__get(&s->metric_ids, key);
	struct prof_cursor *c = NULL;
	struct prof_error err;

	if (kind >= 0)
		return kind < TOP_GM__COUNT ? kind : -1;
	if (prof_cursor__open(s->store, "SELECT metricName FROM " PROF_T_GPU_METRIC_TYPES
			      " WHERE typeId = ?1 AND metricId = ?2 LIMIT 1", &c, &err))
		return -1;
	prof_cursor__bind_int64(c, 1, type_id);
	prof_cursor__bind_int64(c, 2, metric_id);
	if (prof_cursor__next(c, &err) == 1) {
		kind = prof_cursor__is_null(c, 0) ? -1 : top_gpu_metrics__kind(prof_cursor__text(c, 0));
		idmap__put(&s->metric_ids, key, kind >= 0 ? kind : TOP_GM__COUNT);
	}
	prof_cursor__close(c);
	return kind;
}

/* ---- rows into the model ------------------------------------------------------ */

/* The GPU of a kernel, graph launch, copy or memset row (device number in
 * column 4, globalPid in 5): by the UUID PERFKIT_PROCESS_GPUS gives the
 * process's device (ranks isolated with CUDA_VISIBLE_DEVICES each call
 * their GPU device 0), else by the device number alone. The store is
 * asked once per pair. */
static struct top_gpu *gpu_of(struct top_source *s, struct top_model *m, struct prof_cursor *c)
{
	int32_t device = (int32_t)prof_cursor__int64(c, 4);
	int64_t pid = prof_cursor__is_null(c, 5) ? 0 : prof_cursor__int64(c, 5);
	/* a globalPid's low 24 bits are a thread's, 0 in a process's id */
	int64_t key = (int64_t)((uint64_t)pid | ((uint64_t)(uint32_t)device & 0xFFFFFF));
	int32_t i = idmap__get(&s->gpu_ids, key);
	struct prof_cursor *q = NULL;
	struct prof_error err;
	struct top_gpu *g;
	char uuid[64] = "";

	if (i >= 0)
		return i < m->ngpus ? &m->gpus[i] : NULL;
	if (pid && prof_cursor__open(s->store, "SELECT uuid FROM " PROF_T_PROC_GPUS
			      " WHERE globalPid = ?1 AND deviceId = ?2 AND uuid IS NOT NULL LIMIT 1", &q, &err) == 0) {
		prof_cursor__bind_int64(q, 1, pid);
		prof_cursor__bind_int64(q, 2, device);
		if (prof_cursor__next(q, &err) == 1)
			snprintf(uuid, sizeof uuid, "%s", prof_cursor__text(q, 0));
		prof_cursor__close(q);
	}
	g = top_model__gpu(m, device, uuid);
	if (idmap__put(&s->gpu_ids, key, g ? (int32_t)(g - m->gpus) : TOP_MAX_GPUS))
		m->out_of_memory = true;
	return g;
}

static void consume(struct top_source *s, struct top_model *m, enum top_table t,
		    struct prof_cursor *c)
{
	int64_t start = prof_cursor__int64(c, 1);

	switch (t) {
	case TOP_T_KERNEL:
	case TOP_T_GRAPH: {
		/* a graph recorded whole is one row a launch, no row of its
		 * kernels: each graph's launches are a kernel row of their own */
		int32_t name = t == TOP_T_GRAPH ? graph_launch_name(s, m, c)
			       : prof_cursor__is_null(c, 3)
				       ? top_model__kernel_name(m, NULL)
				       : name_of_id(s, m, &s->kernel_ids, prof_cursor__int64(c, 3),
						    top_model__kernel_name);

		top_model__add_kernel(m, name, start, prof_cursor__int64(c, 2));
		if (!prof_cursor__is_null(c, 4))
			top_gpu__add_work(gpu_of(s, m, c), start, prof_cursor__int64(c, 2), true, 0);
		break;
	}
	case TOP_T_MEMCPY:
		top_model__add_copy(m, start, prof_cursor__int64(c, 2), prof_cursor__int64(c, 3));
		if (!prof_cursor__is_null(c, 4))
			top_gpu__add_work(gpu_of(s, m, c), start, prof_cursor__int64(c, 2), false,
						prof_cursor__int64(c, 3));
		break;
	case TOP_T_MEMSET:
		top_model__add_memset(m, start, prof_cursor__int64(c, 2));
		if (!prof_cursor__is_null(c, 4))
			top_gpu__add_busy(gpu_of(s, m, c), start, prof_cursor__int64(c, 2));
		break;
	case TOP_T_MEMORY:
		top_model__add_memory(m, start, prof_cursor__int64(c, 2),
				      (int)prof_cursor__int64(c, 3), (int)prof_cursor__int64(c, 4));
		break;
	case TOP_T_NVTX: {
		int64_t tid = prof_cursor__int64(c, 3);
		struct top_thread *th;
		int32_t name;
		size_t before = m->n_threads;

		/* A range's name is coalesce(StringIds.value via textId, text). */
		if (!prof_cursor__is_null(c, 4))
			name = name_of_id(s, m, &s->range_ids, prof_cursor__int64(c, 4),
					  top_model__range_name);
		else
			name = top_model__range_name(m, prof_cursor__text(c, 5));
		top_model__add_range(m, name, start, prof_cursor__int64(c, 2), tid);
		if (m->n_threads > before && (th = top_model__thread(m, tid)))
			name_thread(s, th);
		break;
	}
	case TOP_T_GPU_METRICS: {
		int64_t type_id = prof_cursor__int64(c, 2);
		int kind = metric_kind(s, type_id, prof_cursor__int64(c, 3));

		if (kind >= 0 && !prof_cursor__is_null(c, 4))
			top_model__add_gpu_metric(m, start, type_id, kind, prof_cursor__double(c, 4));
		break;
	}
	case TOP_T__COUNT:
		break;
	}
	s->t[t].rows++;
}

/* ---- rowid mode ------------------------------------------------------------------ */

/* One batch of rows past the last rowid: 1 caught up, 0 more to read. */
static int read_batch(struct top_source *s, struct top_model *m, enum top_table t,
		      int64_t deadline_ns, struct prof_error *err)
{
	struct top_table_pos *p = &s->t[t];
	struct prof_cursor *c = NULL;
	char *sql;
	int64_t n = 0;
	int rc;

	if (!(sql = prof_strfmt("%s AND rowid > ?1 ORDER BY rowid LIMIT ?2", p->select)))
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	rc = prof_cursor__open(s->store, sql, &c, err);
	free(sql);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, p->last_rowid);
	prof_cursor__bind_int64(c, 2, ROWID_BATCH);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		consume(s, m, t, c);
		p->last_rowid = prof_cursor__int64(c, 0);
		if (++n % DEADLINE_EVERY == 0 && top_monotonic_ns() > deadline_ns)
			break;
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	return rc == 0 && n < ROWID_BATCH;
}

/* A table the writer makes with its first row (graph launches: libprof's
 * writer) may appear while top follows the file; the connection's
 * canonical views (prof_store__open) were made without it and read it as
 * empty, so the connection is taken up again, positions kept. */
static int take_up_new_tables(struct top_source *s, struct prof_error *err)
{
	for (int t = 0; t < TOP_T__COUNT; t++) {
		if (s->t[t].present || !prof_store__has_table(s->store, tables[t].name))
			continue;
		top_source__disconnect(s);
		return top_source__connect(s, err);
	}
	return 0;
}

int top_source__read(struct top_source *s, struct top_model *m, int64_t deadline_ns,
		     struct prof_error *err)
{
	int64_t now;
	int left = 0, rc, done = 1;

	rc = top_source__connect(s, err);
	if (!rc)
		rc = take_up_new_tables(s, err);
	if (rc)
		return rc;
	for (int t = 0; t < TOP_T__COUNT; t++)
		left += s->t[t].present;
	for (int t = 0; t < TOP_T__COUNT; t++) {
		int64_t share;

		if (!s->t[t].present)
			continue;
		/* each table gets its share of the time left, so one busy table
		 * does not starve the others */
		now = top_monotonic_ns();
		share = now + (deadline_ns > now ? (deadline_ns - now) / left : 0);
		left--;
		do
			rc = read_batch(s, m, t, share, err);
		while (rc == 0 && top_monotonic_ns() <= share);
		if (rc < 0)
			return note_failure(s, rc, err);
		if (rc == 0)
			done = 0;
	}
	rc = check_reads(s, err);
	return rc < 0 ? rc : done;
}

/* ---- replay mode -------------------------------------------------------------------- */

static int replay_begin(struct top_source *s, enum top_table t, struct prof_error *err)
{
	struct top_table_pos *p = &s->t[t];
	char *sql = NULL;
	int rc;

	if (p->replay_state)
		return 0;
	p->replay_state = 2;
	if (!p->present)
		return 0;
	if (!(sql = prof_strfmt("%s ORDER BY %s", p->select, tables[t].order)))
		return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
	rc = prof_cursor__open(s->store, sql, &p->cur, err);
	free(sql);
	if (!rc)
		rc = prof_cursor__next(p->cur, err);
	if (rc < 0)
		return rc;
	p->replay_state = rc == 1 ? 1 : 2;
	return 0;
}

/* Whether the cursor's row has an end (column 2) that makes its span bad. */
static bool row_span_is_bad(enum top_table t, struct prof_cursor *c)
{
	bool spans = t == TOP_T_KERNEL || t == TOP_T_GRAPH || t == TOP_T_MEMCPY ||
		     t == TOP_T_MEMSET || t == TOP_T_NVTX;

	return spans && prof_span_is_bad(prof_cursor__int64(c, 1), prof_cursor__int64(c, 2));
}

int top_source__replay_origin(struct top_source *s, struct top_model *m, int64_t *out,
			      struct prof_error *err)
{
	bool any = false;

	*out = 0;
	for (int t = 0; t < TOP_T__COUNT; t++) {
		struct top_table_pos *p = &s->t[t];
		int rc = replay_begin(s, t, err);
		int64_t start;

		while (rc == 0 && p->replay_state == 1 && row_span_is_bad(t, p->cur)) {
			consume(s, m, t, p->cur);
			rc = prof_cursor__next(p->cur, err);
			p->replay_state = rc == 1 ? 1 : 2;
			rc = rc < 0 ? rc : 0;
		}
		if (rc)
			return rc;
		if (s->t[t].replay_state != 1)
			continue;
		start = prof_cursor__int64(s->t[t].cur, 1);
		if (!any || start < *out)
			*out = start;
		any = true;
	}
	return 0;
}

int top_source__replay(struct top_source *s, struct top_model *m, int64_t clock_ns,
		       int64_t deadline_ns, struct prof_error *err)
{
	int64_t n = 0;
	int rc;

	for (int t = 0; t < TOP_T__COUNT; t++) {
		struct top_table_pos *p = &s->t[t];

		rc = replay_begin(s, t, err);
		if (rc)
			return note_failure(s, rc, err);
		while (p->replay_state == 1 && prof_cursor__int64(p->cur, 1) <= clock_ns) {
			consume(s, m, t, p->cur);
			rc = prof_cursor__next(p->cur, err);
			if (rc < 0) {
				p->replay_state = 2; /* the cursor holds no row to consume */
				return note_failure(s, rc, err);
			}
			if (rc == 0)
				p->replay_state = 2;
			if (++n % DEADLINE_EVERY == 0 && top_monotonic_ns() > deadline_ns)
				return check_reads(s, err);
		}
	}
	rc = check_reads(s, err);
	return rc < 0 ? rc : 1;
}

bool top_source__replay_done(const struct top_source *s)
{
	for (int t = 0; t < TOP_T__COUNT; t++)
		if (s->t[t].replay_state != 2)
			return false;
	return true;
}

/* ---- one process's rows ------------------------------------------------------------- */

int top_source__read_pid(struct top_source *s, struct top_model *m, uint32_t pid,
			 struct prof_error *err)
{
	for (int t = 0; t < TOP_T__COUNT; t++) {
		struct prof_cursor *c = NULL;
		char *sql = NULL;
		int rc;

		if (!s->t[t].present)
			continue;
		if (!(sql = prof_strfmt("%s AND %s = ?1 ORDER BY rowid", s->t[t].select,
				       tables[t].pid_expr)))
			return prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", s->path);
		rc = prof_cursor__open(s->store, sql, &c, err);
		free(sql);
		if (rc)
			return rc;
		prof_cursor__bind_int64(c, 1, pid);
		while ((rc = prof_cursor__next(c, err)) == 1)
			consume(s, m, t, c);
		prof_cursor__close(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- capture windows ------------------------------------------------------------------ */

int top_source__windows(struct top_source *s, int64_t clock_ns, struct top_windows *w,
			struct prof_error *err)
{
	struct prof_cursor *c;
	int number = 0, rc;

	/* the table is made with the first window's row (before it, the
	 * run's metadata says whether it waits for one: top_feed.c) */
	if (!s->store || !prof_store__has_table(s->store, PROF_T_CAPTURE_WINDOWS))
		return 0;
	w->any = true;
	rc = prof_cursor__open(s->store, "SELECT start, end, openedBy FROM " PROF_T_CAPTURE_WINDOWS
			       " WHERE start IS NOT NULL AND start <= ?1 ORDER BY start", &c, err);
	if (rc)
		return note_failure(s, rc, err);
	prof_cursor__bind_int64(c, 1, clock_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		bool open = prof_cursor__is_null(c, 1) || prof_cursor__int64(c, 1) > clock_ns;

		number++;
		if (!open) {
			w->closed++;
			continue;
		}
		w->open = number;
		w->open_start_ns = prof_cursor__int64(c, 0);
		prof_sanitize_term(w->opened_by, sizeof w->opened_by, prof_cursor__text(c, 2));
	}
	prof_cursor__close(c);
	return rc < 0 ? note_failure(s, rc, err) : 0;
}

/* ---- header facts --------------------------------------------------------------------- */

void top_source__describe(struct top_source *s, struct top_model *m)
{
	struct prof_cursor *c = NULL;
	struct prof_error err;

	s->dropped_records = prof_store__counter(s->store, "dropped_records");
	if (s->described)
		return;
	/* each GPU's name and uuid, for its row and its NVML metrics */
	if (prof_cursor__open(s->store, "SELECT id, name, uuid FROM " PROF_T_GPU " ORDER BY id", &c,
			      &err) == 0) {
		while (prof_cursor__next(c, &err) == 1) {
			struct top_gpu *g = top_model__gpu(m, (int32_t)prof_cursor__int64(c, 0),
							   prof_cursor__text(c, 2));

			if (g && !g->name[0])
				prof_sanitize_term(g->name, sizeof g->name, prof_cursor__text(c, 1));
		}
		prof_cursor__close(c);
		c = NULL;
	}
	if (!m->gpu_name[0] && prof_cursor__open(s->store, "SELECT name, uuid FROM " PROF_T_GPU " ORDER BY id LIMIT 1",
			      &c, &err) == 0) {
		if (prof_cursor__next(c, &err) == 1) {
			prof_sanitize_term(m->gpu_name, sizeof m->gpu_name, prof_cursor__text(c, 0));
			prof_sanitize_term(m->gpu_uuid, sizeof m->gpu_uuid, prof_cursor__text(c, 1));
		}
		prof_cursor__close(c);
		c = NULL;
	}
	if ((!m->program[0] || !m->pid) && prof_cursor__open(s->store, "SELECT pid, name FROM " PROF_T_PROCESSES " ORDER BY rowid LIMIT 1",
			      &c, &err) == 0) {
		if (prof_cursor__next(c, &err) == 1) {
			if (!m->pid)
				m->pid = (uint32_t)prof_cursor__int64(c, 0);
			if (!m->program[0])
				prof_sanitize_term(m->program, sizeof m->program,
						   prof_cursor__text(c, 1));
		}
		prof_cursor__close(c);
	}
	/* a process's file gets its GPU row with the first device record */
	s->described = m->gpu_name[0] && m->program[0] && m->pid;
}
