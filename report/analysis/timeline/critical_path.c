/* critical_path.c - the critical path of one step of a capture: picks the
 * step of median span, reads its work, calls and stream waits, walks back
 * from its end (critical_path_walk.c) and sums the path's segments into
 * parts by kind and name. Memory holds one step's rows. */
#include "critical_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/record_cost.h"
#include "prof/tables.h"
#include "gpu_idle.h"
#include "step_ends.h"
#include "step_replay.h"
#include "model/window.h"
#include "prof/error.h"

/* ---- which step ------------------------------------------------------------ */

/* The ends of the work each step launched, in a pass of its own over the
 * window's work (any order serves: they are maxima). */
static int read_step_ends(struct diag_scope *ctx, const struct sum_step *steps, int n, struct step_ends *e,
			  struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	struct gpu_work g;
	int rc;

	if (step_ends__init(e, n))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = gpu_work__open_unordered(ctx, ctx->w->start_ns, ctx->w->end_ns, &c, err);
	if (rc || !c)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		gpu_work__read(c, &g);
		if (g.has_launch)
			step_ends__add(e, steps, g.launch_start_ns, g.end_ns < ctx->w->end_ns ? g.end_ns : ctx->w->end_ns);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Each step's span ends at its range's end or at the end of the last GPU
 * work launched inside it, whichever is later (NVTX steps are host time).
 * It starts at its range's start or, when the GPU was still busy then with
 * the work the previous step launched, where that work ended: a loop that
 * runs ahead of its GPU queues several steps, and a step's own work waits
 * behind theirs, which is no part of its length. The work's ends are the
 * idle attribution's (known: idle's, else NULL), or read here. */
static int step_spans(struct diag_scope *ctx, const struct step_ends *known, const struct sum_step *steps,
		      int n, int64_t *span_start, int64_t *span_end, struct prof_error *err)
{
	struct step_ends read = { 0 };
	const struct step_ends *ends = known;
	int rc = 0;

	for (int i = 0; i < n; i++) {
		span_start[i] = steps[i].start_ns;
		span_end[i] = steps[i].end_ns;
	}
	if (ctx->w->mark != SUM_LOOP_NVTX)
		return 0;
	if (!ends || !ends->known || ends->n != n) {
		rc = read_step_ends(ctx, steps, n, &read, err);
		ends = &read;
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		int64_t prev = i > 0 ? ends->end[i - 1] : ends->before;

		if (ends->end[i] > span_end[i])
			span_end[i] = ends->end[i];
		/* a step whose range ended under the earlier work keeps its range */
		if (prev > span_start[i] && prev < span_end[i])
			span_start[i] = prev;
	}
	step_ends__exit(&read);
	return rc;
}

/* qsort has no context argument: the array the comparator reads, one a
 * thread (the ranks of a job are diagnosed on several). */
static _Thread_local const int64_t *sort_spans;

static int by_span(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (sort_spans[a] != sort_spans[b])
		return sort_spans[a] < sort_spans[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/* The step of median span (the earlier of two middles). */
static int median_step(int n, const int64_t *span_start, const int64_t *span_end, int64_t *spans)
{
	int *order = malloc(sizeof *order * (size_t)n), pick;

	if (!order)
		return -1;
	for (int i = 0; i < n; i++) {
		spans[i] = span_end[i] - span_start[i];
		order[i] = i;
	}
	sort_spans = spans;
	qsort(order, (size_t)n, sizeof *order, by_span);
	pick = order[(n - 1) / 2];
	free(order);
	return pick;
}

/* ---- one step's rows ---------------------------------------------------------- */

struct step_rows {
	struct gpu_work *work;
	int nwork, cap_work;
	struct cp_call *calls;
	int ncalls, cap_calls;
	struct cp_wait *waits;
	int nwaits, cap_waits;
	struct api_names names;
};

static void step_rows__exit(struct step_rows *r)
{
	free(r->work);
	free(r->calls);
	free(r->waits);
	api_names__exit(&r->names);
}

static int load_work(struct diag_scope *ctx, struct step_rows *r, int64_t from, int64_t to,
		     struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = gpu_work__open(ctx, from, to, NULL, &c, err);

	if (rc || !c)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (r->nwork >= CP_MAX_ROWS) {
			rc = 1;
			break;
		}
		if (array__grow((void **)&r->work, &r->cap_work, r->nwork + 1, sizeof *r->work)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		gpu_work__read(c, &r->work[r->nwork++]);
	}
	prof_cursor__close(c);
	return rc;
}

/* The calls overlapping the step, by thread and start, with the stream a
 * stream synchronisation names (its synchronisation row, by correlation id). */
static int load_calls(struct diag_scope *ctx, struct step_rows *r, int64_t from, int64_t to,
		      struct prof_error *err)
{
	struct prof_store *s = ctx->store;
	bool sync_streams = ctx->has_sync_table;
	/* nsys rows carry the process (NULL: any); perfkit's the thread of the call */
	const char *same_process =
		!sync_streams ? ""
			      : " AND (" PROF_SQL_SYNC_GLOBAL_PID("y.") " = 0 OR " PROF_SQL_SYNC_GLOBAL_PID("y.")
				" = " PROF_SQL_GLOBAL_PID_OF_TID("a.globalTid") ")";
	struct prof_cursor *c = NULL;
	char *sql;
	int rc;

	if (!ctx->has_api_calls)
		return 0;
	sql = diag__fmt("SELECT a.start, a.end, coalesce(a.globalTid, 0), a.nameId, %s FROM " DIAG_API_CALLS " a%s%s"
			" WHERE a.end > ?1 AND a.start < ?2 ORDER BY 3, a.start",
			sync_streams ? "y.streamId" : "NULL",
			sync_streams ? " LEFT JOIN " PROF_T_SYNC " y ON y.correlationId = a.correlationId"
				       " AND y.syncType = 3" : "",
			same_process);
	rc = range_cursor__open(s, sql, from, to, NULL, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const struct api_name *name;
		struct cp_call *k;

		if (r->nwork + r->ncalls >= CP_MAX_ROWS) {
			rc = 1;
			break;
		}
		if (array__grow((void **)&r->calls, &r->cap_calls, r->ncalls + 1, sizeof *r->calls)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		k = &r->calls[r->ncalls++];
		k->start_ns = prof_cursor__int64(c, 0);
		k->end_ns = prof_cursor__int64(c, 1);
		if (k->end_ns < k->start_ns)
			k->end_ns = k->start_ns;
		k->tid = prof_cursor__int64(c, 2);
		k->pid = prof_global_pid_of_tid(k->tid);
		k->name_id = prof_cursor__int64(c, 3);
		k->sync_stream = prof_cursor__is_null(c, 4) ? -1 : prof_cursor__int64(c, 4);
		name = api_names__find(&r->names, k->name_id);
		k->kind = name ? name->kind : API_OTHER;
		/* cudaFree waits for the device; the stream-ordered frees do
		 * not. A synchronous cudaMemcpy waits for the work queued before
		 * it on the legacy stream even where its own copy runs after it
		 * returns (a small pageable upload is staged, then sent): its
		 * wait is the GPU's, not the host's. */
		k->waits_for_gpu = k->kind == API_SYNC ||
				   (name && k->kind == API_ALLOC && strstr(name->name, "Free") &&
				    !strstr(name->name, "Async")) ||
				   (name && k->kind == API_COPY && !strncmp(name->name, "cudaMemcpy", 10) &&
				    !strstr(name->name, "Async") && !strstr(name->name, "Peer"));
	}
	prof_cursor__close(c);
	return rc;
}

/* The step as measured less perfkit's recording cost of each call, where
 * `perfkit peaks` measured that cost for the capture. */
static int unrecorded_replay(struct diag_scope *ctx, struct critical_path *cp, const struct cp_data *d,
			     const struct cp_anchor *a, const struct replay_params *measured,
			     struct prof_error *err)
{
	struct record_cost cost;
	struct replay_params p = *measured;
	int64_t ns;
	/* a store that cannot say (no peaks table) has no measured cost */
	if (record_cost__load(ctx->store, &cost, NULL) < 0 || !cost.perfkit_capture || !cost.measured)
		return 0;
	p.record_launch_ns = (int64_t)(cost.launch_ns + 0.5);
	p.record_call_ns = (int64_t)(cost.api_call_ns + 0.5);
	p.record_alloc_ns = (int64_t)(cost.alloc_ns + 0.5);
	p.record_copy_ns = (int64_t)(cost.copy_ns + 0.5);
	ns = step_replay__span(d, a, cp->start_ns, REPLAY_AS_MEASURED, &p);
	if (ns < 0)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	cp->unrecorded_ns = ns;
	cp->record_launch_ns = cost.launch_ns;
	cp->record_call_ns = cost.api_call_ns;
	cp->record_alloc_ns = cost.alloc_ns;
	cp->record_copy_ns = cost.copy_ns;
	return 0;
}

static int cmp_wait(const void *x, const void *y)
{
	const struct cp_wait *b = y;

	return cp_wait__cmp(x, b->pid, b->device_id, b->stream_id, b->at_ns);
}

/* The stream waits made from the earliest launch of the step's work on. */
static int load_waits(struct diag_scope *ctx, struct step_rows *r, int64_t to, struct prof_error *err)
{
	int64_t from = to;
	struct prof_cursor *c = NULL;
	int rc;

	for (int i = 0; i < r->nwork; i++)
		if (r->work[i].has_launch && r->work[i].launch_start_ns < from)
			from = r->work[i].launch_start_ns;
	rc = stream_waits__open(ctx, NULL, from, to, &c, err);
	if (rc || !c)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (array__grow((void **)&r->waits, &r->cap_waits, r->nwaits + 1, sizeof *r->waits)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		r->waits[r->nwaits++] = (struct cp_wait){
			prof_cursor__int64(c, 3), prof_cursor__int64(c, 1), prof_cursor__int64(c, 2),
			prof_cursor__int64(c, 0),
		};
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (r->nwaits > 1)
		qsort(r->waits, (size_t)r->nwaits, sizeof *r->waits, cmp_wait);
	return 0;
}

/* ---- the parts ------------------------------------------------------------------ */

static const char *call_kind_names[] = {
	"CUDA call: launch", "CUDA call: synchronisation", "CUDA call: allocation", "CUDA call: copy",
	"CUDA call: other",
};

/* What makes two segments the same part. */
struct part_key {
	enum cp_kind kind;
	int gpu_kind;
	int64_t sub;
	/* a copy's source and destination memory kinds (sub: its direction),
	 * kept apart: the file's values may be anything */
	int src_kind, dst_kind;
};

static struct part_key key_of(const struct cp_segment *s, const struct step_rows *r)
{
	struct part_key k = { s->kind, -1, 0, 0, 0 };

	if (s->kind == CP_CALL) {
		k.sub = r->calls[s->ref].name_id;
	} else if (s->kind == CP_GPU) {
		const struct gpu_work *w = &r->work[s->ref];

		k.gpu_kind = w->kind;
		k.sub = w->kind == GPU_WORK_KERNEL ? w->name_id : w->kind == GPU_WORK_COPY ? w->copy_kind : 0;
		if (w->kind == GPU_WORK_COPY) {
			k.src_kind = w->src_kind;
			k.dst_kind = w->dst_kind;
		}
	} else if (s->kind == CP_EVENT_WAIT) {
		k.sub = r->work[s->ref].stream_id;
	}
	return k;
}

static bool same_part(const struct part_key *a, const struct part_key *b)
{
	return a->kind == b->kind && a->gpu_kind == b->gpu_kind && a->sub == b->sub &&
	       a->src_kind == b->src_kind && a->dst_kind == b->dst_kind;
}

static char *label_of(struct diag_scope *ctx, const struct cp_segment *s, const struct step_rows *r)
{
	char buf[640];

	switch (s->kind) {
	case CP_HOST_WORK:
		return strdup("host work outside CUDA calls");
	case CP_CALL: {
		const struct api_name *n = api_names__find(&r->names, r->calls[s->ref].name_id);
		return strdup(n ? n->name : "?");
	}
	case CP_GPU:
		return strdup(gpu_work__label(ctx->store, &r->work[s->ref], buf, sizeof buf));
	case CP_LAUNCH_LATENCY:
		return strdup("launch latency: from the call's return to the work's start");
	case CP_STREAM_GAP:
		return strdup("gaps between consecutive work on one stream");
	case CP_EVENT_WAIT:
		return diag__fmt("event recorded after work on stream %lld (inferred)",
				 (long long)r->work[s->ref].stream_id);
	case CP_QUEUED:
		return strdup("work queued before the step, started in it");
	default:
		return strdup("the walk stopped here");
	}
}

static const char *part_kind(const struct cp_segment *s, const struct step_rows *r)
{
	if (s->kind == CP_CALL)
		return call_kind_names[r->calls[s->ref].kind];
	return cp_kind__name(s->kind, s->kind == CP_GPU ? &r->work[s->ref] : NULL);
}

static int by_time(const void *x, const void *y)
{
	const struct cp_part *a = x, *b = y;

	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? 1 : -1;
	return strcmp(a->label, b->label);
}

static int sum_parts(struct diag_scope *ctx, struct critical_path *cp, const struct cp_path *path,
		     const struct step_rows *r)
{
	struct part_key *keys = NULL;
	int cap = 0, cap_keys = 0;

	for (int i = 0; i < path->nseg; i++) {
		const struct cp_segment *s = &path->seg[i];
		struct part_key k = key_of(s, r);
		int j;

		for (j = 0; j < cp->nparts; j++)
			if (same_part(&keys[j], &k))
				break;
		if (j == cp->nparts) {
			if (array__grow((void **)&cp->parts, &cap, j + 1, sizeof *cp->parts) ||
			    array__grow((void **)&keys, &cap_keys, j + 1, sizeof *keys))
				goto nomem;
			keys[j] = k;
			cp->parts[j] = (struct cp_part){ label_of(ctx, s, r), part_kind(s, r), 0, 0,
							 s->kind == CP_EVENT_WAIT };
			cp->nparts++;
			if (!cp->parts[j].label)
				goto nomem;
		}
		cp->parts[j].time_ns += s->end_ns - s->start_ns;
		cp->parts[j].count++;
	}
	free(keys);
	if (cp->nparts > 1)
		qsort(cp->parts, (size_t)cp->nparts, sizeof *cp->parts, by_time);
	return 0;
nomem:
	free(keys);
	return PROF_E_NOMEM;
}

/* ---- the analysis ------------------------------------------------------------- */

/* Whether w is a launch of the kernel that marks the loop's steps (by
 * name: the window knows the kernel by name only). */
static bool is_marking_kernel(const struct diag_scope *ctx, const struct gpu_work *w)
{
	char name[sizeof ctx->w->mark_name];

	return w->kind == GPU_WORK_KERNEL &&
	       strcmp(gpu_work__string(ctx->store, w->name_id, name, sizeof name), ctx->w->mark_name) == 0;
}

/* Where the walk starts: for an NVTX step, its last GPU work when that ends
 * after the range (found again among the loaded rows), else the range's end
 * on its thread; for a kernel step, the next step's first launch when it is
 * in the rows, else the step's last work (and the span ends with it: the
 * last kernel step's end is an estimate). */
static struct cp_anchor anchor_of(const struct diag_scope *ctx, const struct sum_step *step,
				  int64_t *span_end, const struct step_rows *r)
{
	struct cp_anchor a = { .on_gpu = true, .work = -1 };

	if (ctx->w->mark == SUM_LOOP_NVTX && *span_end <= step->end_ns) {
		a.on_gpu = false;
		a.tid = step->global_tid;
		a.at_ns = step->end_ns;
		return a;
	}
	for (int i = 0; i < r->nwork; i++) {
		const struct gpu_work *w = &r->work[i];

		if (ctx->w->mark == SUM_LOOP_KERNEL && w->start_ns == *span_end && is_marking_kernel(ctx, w)) {
			a.work = i;
			a.before_work = true;
			return a;
		}
		if (w->end_ns > *span_end || w->end_ns <= step->start_ns)
			continue;
		if (a.work < 0 || w->end_ns > r->work[a.work].end_ns)
			a.work = i;
	}
	if (a.work >= 0)
		*span_end = r->work[a.work].end_ns;
	return a;
}

/* Hands r's rows and the path over to keep (their owner from then on). */
static void keep_rows(struct cp_step_rows *keep, struct step_rows *r, struct cp_path *path)
{
	*keep = (struct cp_step_rows){ .work = r->work, .nwork = r->nwork, .calls = r->calls, .ncalls = r->ncalls,
				       .waits = r->waits, .nwaits = r->nwaits, .seg = path->seg, .nseg = path->nseg,
				       .names = r->names };
	memset(r, 0, sizeof *r);
	memset(path, 0, sizeof *path);
}

static int walk_step(struct diag_scope *ctx, struct critical_path *cp, const struct sum_step *step,
		     struct cp_step_rows *keep, struct prof_error *err)
{
	struct step_rows r = { 0 };
	struct cp_data d = { 0 };
	struct cp_path path = { 0 };
	struct cp_anchor a;
	int rc;

	rc = api_names__load(ctx, &r.names, err);
	/* one before the start: the previous step's work that ends where the
	 * step starts is what its first work waited for; one past the end: the
	 * next kernel step's first launch starts there */
	if (!rc)
		rc = load_work(ctx, &r, cp->start_ns - 1, cp->end_ns + 1, err);
	if (!rc)
		rc = load_calls(ctx, &r, cp->start_ns, cp->end_ns, err);
	if (!rc)
		rc = load_waits(ctx, &r, cp->end_ns, err);
	if (rc == 1) {
		snprintf(cp->why_none, sizeof cp->why_none,
			 "step %d holds more than %d GPU activities and CUDA calls", cp->step, CP_MAX_ROWS);
		cp->step = 0;
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	d = (struct cp_data){ .work = r.work, .nwork = r.nwork, .calls = r.calls, .ncalls = r.ncalls,
			      .waits = r.waits, .nwaits = r.nwaits,
			      /* a kernel step starts on the GPU: its work was launched before it */
			      .own_from_ns = ctx->w->mark == SUM_LOOP_NVTX ? step->start_ns : INT64_MIN };
	a = anchor_of(ctx, step, &cp->end_ns, &r);
	if (cp_data__index(&d) || critical_path__walk(&d, &a, cp->start_ns, &path) ||
	    sum_parts(ctx, cp, &path, &r)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	cp->nseg = path.nseg;
	memcpy(cp->edges, path.edges, sizeof cp->edges);
	{
		struct replay_params p;

		/* what every replay below reads of the rows, made once for them */
		d.plan = replay_plan__make(&d);
		step_replay__params(&d, &p);
		cp->pinned_bytes_per_ns = p.pinned_bytes_per_ns;
		for (unsigned ch = 0; ch < REPLAY_NSETS; ch++) {
			int64_t ns = step_replay__span(&d, &a, cp->start_ns, ch, &p);

			if (ns < 0) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				goto out;
			}
			cp->replay_ns[ch] = ns;
		}
		rc = unrecorded_replay(ctx, cp, &d, &a, &p, err);
		if (rc)
			goto out;
	}
	if (keep)
		keep_rows(keep, &r, &path);
out:
	cp_path__exit(&path);
	cp_data__exit(&d);
	step_rows__exit(&r);
	return rc;
}

int critical_path__analyse(struct diag_scope *ctx, const struct gpu_idle_result *idle, struct critical_path **out,
			   struct prof_error *err)
{
	return critical_path__analyse_rows(ctx, idle, out, NULL, err);
}

void cp_step_rows__exit(struct cp_step_rows *rows)
{
	free(rows->work);
	free(rows->calls);
	free(rows->waits);
	free(rows->seg);
	api_names__exit(&rows->names);
	memset(rows, 0, sizeof *rows);
}

int critical_path__analyse_rows(struct diag_scope *ctx, const struct gpu_idle_result *idle, struct critical_path **out,
				struct cp_step_rows *rows, struct prof_error *err)
{
	struct critical_path *cp = calloc(1, sizeof *cp);
	struct sum_step *steps = NULL;
	int64_t *span_start = NULL, *span_end = NULL, *spans = NULL;
	int n = 0, k, rc;

	*out = NULL;
	if (rows)
		memset(rows, 0, sizeof *rows);
	if (!cp)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = sum_window__steps(ctx->store, ctx->w, &steps, &n, err);
	if (rc)
		goto out;
	cp->nsteps = n;
	if (n > 0 && ns_between(ctx->w->start_ns, ctx->w->end_ns) == INT64_MAX) {
		snprintf(cp->why_none, sizeof cp->why_none, "the window's timestamps are out of range");
		goto done;
	}
	if (n == 0) {
		snprintf(cp->why_none, sizeof cp->why_none,
			 "no repeating step was found (the window is the whole capture)");
		goto done;
	}
	span_start = malloc(sizeof *span_start * (size_t)n);
	span_end = malloc(sizeof *span_end * (size_t)n);
	spans = malloc(sizeof *spans * (size_t)n);
	if (!span_start || !span_end || !spans) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = step_spans(ctx, idle ? &idle->step_ends : NULL, steps, n, span_start, span_end, err);
	if (rc)
		goto out;
	k = median_step(n, span_start, span_end, spans);
	if (k < 0) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	cp->step = k + 1;
	cp->start_ns = span_start[k];
	cp->end_ns = span_end[k];
	rc = walk_step(ctx, cp, &steps[k], rows, err);
	if (rc)
		goto out;
	if (rows)
		rows->step_tid = steps[k].global_tid;
done:
	*out = cp;
	cp = NULL;
out:
	free(steps);
	free(span_start);
	free(span_end);
	free(spans);
	critical_path__delete(cp);
	return rc;
}

void critical_path__delete(struct critical_path *cp)
{
	if (!cp)
		return;
	for (int i = 0; i < cp->nparts; i++)
		free(cp->parts[i].label);
	free(cp->parts);
	free(cp);
}
