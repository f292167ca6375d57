/* critical_path_walk.c - the pure part of the critical path: the lookups
 * over one step's work, calls and waits, and the walk back from the step's
 * end (critical_path.h says what it asks at each point). */
#include "critical_path.h"
#include "step_replay.h"

#include <stdlib.h>
#include <string.h>

/* qsort has no context argument: the arrays being sorted, for the
 * comparators, one a thread (the ranks of a job are diagnosed on several). */
static _Thread_local const struct gpu_work *sort_work;

static int by_stream_then_start(const void *x, const void *y)
{
	const struct gpu_work *a = &sort_work[*(const int *)x], *b = &sort_work[*(const int *)y];
	int by_stream = stream_key__cmp(a->pid, a->device_id, a->stream_id, b->pid, b->device_id, b->stream_id);

	if (by_stream)
		return by_stream;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

static int by_end(const void *x, const void *y)
{
	const struct gpu_work *a = &sort_work[*(const int *)x], *b = &sort_work[*(const int *)y];

	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

static bool same_stream(const struct gpu_work *a, const struct gpu_work *b)
{
	return a->pid == b->pid && a->device_id == b->device_id && a->stream_id == b->stream_id;
}

/* The last call of thread tid that starts before t (calls sorted by
 * thread, then start), or -1. */
int cp_data__last_call_before(const struct cp_data *d, int64_t tid, int64_t t)
{
	int lo = 0, hi = d->ncalls;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const struct cp_call *c = &d->calls[mid];

		if (c->tid < tid || (c->tid == tid && c->start_ns < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && d->calls[lo - 1].tid == tid ? lo - 1 : -1;
}

int cp_data__index(struct cp_data *d)
{
	int n = d->nwork > 0 ? d->nwork : 1, nc = d->ncalls > 0 ? d->ncalls : 1;
	int *order = malloc(sizeof *order * (size_t)n);

	d->prev_on_stream = malloc(sizeof *d->prev_on_stream * (size_t)n);
	d->by_end = malloc(sizeof *d->by_end * (size_t)n);
	d->cover = malloc(sizeof *d->cover * (size_t)nc);
	d->own_work = malloc(sizeof *d->own_work * (size_t)nc);
	if (!order || !d->prev_on_stream || !d->by_end || !d->cover || !d->own_work) {
		free(order);
		cp_data__exit(d);
		return PROF_E_NOMEM;
	}
	sort_work = d->work;
	for (int i = 0; i < d->nwork; i++)
		order[i] = d->by_end[i] = i;
	qsort(order, (size_t)d->nwork, sizeof *order, by_stream_then_start);
	qsort(d->by_end, (size_t)d->nwork, sizeof *d->by_end, by_end);
	for (int k = 0; k < d->nwork; k++)
		d->prev_on_stream[order[k]] =
			k > 0 && same_stream(&d->work[order[k - 1]], &d->work[order[k]]) ? order[k - 1] : -1;
	free(order);
	for (int i = 0; i < d->ncalls; i++) {
		int prev = i > 0 && d->calls[i - 1].tid == d->calls[i].tid ? d->cover[i - 1] : -1;

		d->cover[i] = prev >= 0 && d->calls[prev].end_ns >= d->calls[i].end_ns ? prev : i;
		d->own_work[i] = -1;
	}
	for (int w = 0; w < d->nwork; w++) {
		const struct gpu_work *g = &d->work[w];
		int c;

		if (!g->has_launch)
			continue;
		c = cp_data__last_call_before(d, g->launch_tid, g->launch_start_ns + 1);
		if (c >= 0 && d->calls[c].start_ns == g->launch_start_ns &&
		    (d->own_work[c] < 0 || d->work[d->own_work[c]].end_ns < g->end_ns))
			d->own_work[c] = w;
	}
	return 0;
}

void cp_data__exit(struct cp_data *d)
{
	free(d->prev_on_stream);
	free(d->by_end);
	free(d->cover);
	free(d->own_work);
	replay_plan__free(d->plan);
	d->prev_on_stream = d->by_end = d->cover = d->own_work = NULL;
	d->plan = NULL;
}

/* Position in by_end of the last work ending at or before t, or -1. */
static int last_ending_by(const struct cp_data *d, int64_t t)
{
	int lo = 0, hi = d->nwork;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (d->work[d->by_end[mid]].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* The work of process pid that ended last inside (after, upto], of one
 * stream when stream >= 0, or -1. */
int cp_data__released_by(const struct cp_data *d, int64_t pid, int64_t stream, int64_t after, int64_t upto)
{
	for (int k = last_ending_by(d, upto); k >= 0; k--) {
		const struct gpu_work *w = &d->work[d->by_end[k]];

		if (w->end_ns <= after)
			break;
		if ((w->pid == pid || w->pid == 0 || pid == 0) && (stream < 0 || w->stream_id == stream))
			return d->by_end[k];
	}
	return -1;
}

/* The work of another stream of w's device and process that ended last at
 * or before t, or -1: the likeliest recorder of the event w's stream waited on. */
int cp_data__other_stream_before(const struct cp_data *d, const struct gpu_work *w, int64_t t)
{
	for (int k = last_ending_by(d, t); k >= 0; k--) {
		const struct gpu_work *o = &d->work[d->by_end[k]];

		if (o->pid == w->pid && o->device_id == w->device_id && o->stream_id != w->stream_id)
			return d->by_end[k];
	}
	return -1;
}

int cp_wait__cmp(const struct cp_wait *x, int64_t pid, int64_t dev, int64_t stream, int64_t at)
{
	int by_stream = stream_key__cmp(x->pid, x->device_id, x->stream_id, pid, dev, stream);

	return by_stream ? by_stream : (x->at_ns > at) - (x->at_ns < at);
}

/* Did w's stream wait on an event in (after, upto]? */
bool cp_data__waited_between(const struct cp_data *d, const struct gpu_work *w, int64_t after, int64_t upto)
{
	int lo = 0, hi = d->nwaits;

	while (lo < hi) { /* first wait of the stream later than after */
		int mid = lo + (hi - lo) / 2;

		if (cp_wait__cmp(&d->waits[mid], w->pid, w->device_id, w->stream_id, after) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nwaits && d->waits[lo].pid == w->pid && d->waits[lo].device_id == w->device_id &&
	       d->waits[lo].stream_id == w->stream_id && d->waits[lo].at_ns <= upto;
}

struct walk {
	const struct cp_data *d;
	struct cp_path *path;
	int64_t floor_ns;    /* the step's start */
	int64_t t;           /* the walk has explained [t, end) */
	bool on_gpu;
	int work;
	int64_t tid;
	bool skip_segment;   /* the anchor's work itself is not part of the step */
};

/* A segment where the walk is: on its thread, or on its work's stream. */
static int emit(struct walk *k, int64_t a, int64_t b, enum cp_kind kind, int ref)
{
	struct cp_path *p = k->path;

	if (b <= a)
		return 0;
	if (array__grow((void **)&p->seg, &p->cap, p->nseg + 1, sizeof *p->seg))
		return PROF_E_NOMEM;
	p->seg[p->nseg++] = (struct cp_segment){ a, b, kind, ref, k->on_gpu ? -1 : k->tid,
						 k->on_gpu ? k->work : -1 };
	return 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A host thread at t: inside a call (which may have waited for GPU work),
 * or between calls. */
static int step_host(struct walk *k)
{
	const struct cp_data *d = k->d;
	int i = cp_data__last_call_before(d, k->tid, k->t), c, rel = -1;
	const struct cp_call *call;

	if (i < 0) {
		int rc = emit(k, k->floor_ns, k->t, CP_HOST_WORK, -1);
		k->t = k->floor_ns;
		return rc;
	}
	c = d->cover[i];
	call = &d->calls[c];
	if (call->end_ns < k->t) {
		int64_t from = max64(call->end_ns, k->floor_ns);
		int rc = emit(k, from, k->t, CP_HOST_WORK, -1);

		k->t = from;
		return rc;
	}
	if (d->own_work[c] >= 0 && d->work[d->own_work[c]].end_ns > call->start_ns &&
	    d->work[d->own_work[c]].end_ns <= k->t) {
		rel = d->own_work[c];
		k->path->edges[CP_EDGE_COPY]++;
	} else if (call->waits_for_gpu) {
		rel = cp_data__released_by(d, call->pid, call->sync_stream, call->start_ns, k->t);
		if (rel >= 0)
			k->path->edges[CP_EDGE_SYNC]++;
	}
	if (rel >= 0) {
		int64_t from = max64(d->work[rel].end_ns, k->floor_ns);
		int rc = emit(k, from, k->t, CP_CALL, c);

		k->t = from;
		k->on_gpu = true;
		k->work = rel;
		return rc;
	}
	{
		int64_t from = max64(call->start_ns, k->floor_ns);
		int rc = emit(k, from, k->t, CP_CALL, c);

		k->t = from;
		return rc;
	}
}

/* GPU work running until t: what it started after. */
static int step_gpu(struct walk *k)
{
	const struct cp_data *d = k->d;
	const struct gpu_work *w = &d->work[k->work];
	int64_t start = max64(w->start_ns, k->floor_ns), ready = INT64_MIN;
	int p = d->prev_on_stream[k->work], x = -1, rc;
	enum { NONE, PREV, EVENT, LAUNCH } pick = NONE;

	/* an earlier step's work, queued ahead of this step's: the step has no
	 * more to explain */
	if (w->has_launch && w->launch_start_ns < d->own_from_ns) {
		rc = emit(k, k->floor_ns, k->t, CP_QUEUED, -1);
		k->t = k->floor_ns;
		return rc;
	}
	/* a step that ends where the next step's work starts leaves that work out */
	rc = k->skip_segment ? 0 : emit(k, start, k->t, CP_GPU, k->work);
	k->skip_segment = false;
	k->t = start;
	if (rc || w->start_ns <= k->floor_ns)
		return rc;
	if (p >= 0) {
		ready = min64(d->work[p].end_ns, k->t);
		pick = PREV;
	}
	if (w->has_launch &&
	    cp_data__waited_between(d, w, p >= 0 && d->work[p].has_launch ? d->work[p].launch_start_ns : INT64_MIN,
			   w->launch_start_ns)) {
		x = cp_data__other_stream_before(d, w, k->t);
		if (x >= 0 && d->work[x].end_ns > ready) {
			ready = d->work[x].end_ns;
			pick = EVENT;
		}
	}
	/* a call still running when the work started may have submitted it
	 * as early as its start: it explains the start only when the stream
	 * was free by then */
	if (w->has_launch) {
		int64_t launch_ready = w->launch_end_ns <= k->t ? w->launch_end_ns : w->launch_start_ns;

		if (launch_ready > ready) {
			ready = launch_ready;
			pick = LAUNCH;
		}
	}
	/* ready by the step's start: queued, unless the step starts where the
	 * work it waited for ended (the previous step's, on a GPU running
	 * behind the host), which then explains the wait */
	if (pick == NONE || (ready < k->floor_ns && !(pick == LAUNCH && w->launch_end_ns > k->t)) ||
	    (ready == k->floor_ns && pick == LAUNCH && w->launch_end_ns <= k->t)) {
		rc = emit(k, k->floor_ns, k->t, CP_QUEUED, -1);
		k->t = k->floor_ns;
		return rc;
	}
	switch (pick) {
	case PREV:
		rc = emit(k, ready, k->t, CP_STREAM_GAP, -1);
		k->path->edges[CP_EDGE_STREAM]++;
		k->work = p;
		k->t = ready;
		break;
	case EVENT:
		rc = emit(k, ready, k->t, CP_EVENT_WAIT, x);
		k->path->edges[CP_EDGE_EVENT]++;
		k->work = x;
		k->t = ready;
		break;
	default:
		/* from the call's return, or still inside the call */
		if (w->launch_end_ns <= k->t) {
			rc = emit(k, w->launch_end_ns, k->t, CP_LAUNCH_LATENCY, -1);
			k->t = w->launch_end_ns;
		}
		k->path->edges[CP_EDGE_LAUNCH]++;
		k->on_gpu = false;
		k->tid = w->launch_tid;
		break;
	}
	return rc;
}

int critical_path__walk(const struct cp_data *d, const struct cp_anchor *a, int64_t span_start_ns,
			struct cp_path *out)
{
	struct walk k = { .d = d, .path = out, .floor_ns = span_start_ns };
	/* every move explains time or goes to earlier work; the bound only
	 * guards against data that would make it stand still */
	long moves = 4L * (d->nwork + d->ncalls) + 16;
	int64_t last_t = INT64_MAX;
	int still = 0, rc = 0;

	memset(out, 0, sizeof *out);
	if (a->on_gpu && (a->work < 0 || a->work >= d->nwork))
		return 0;
	k.on_gpu = a->on_gpu;
	k.work = a->work;
	k.tid = a->tid;
	k.skip_segment = a->on_gpu && a->before_work;
	k.t = !a->on_gpu ? a->at_ns : a->before_work ? d->work[a->work].start_ns : d->work[a->work].end_ns;
	while (rc == 0 && k.t > k.floor_ns) {
		if (moves-- == 0 || (k.t == last_t && ++still > 8)) {
			rc = emit(&k, k.floor_ns, k.t, CP_UNATTRIBUTED, -1);
			break;
		}
		if (k.t != last_t)
			still = 0;
		last_t = k.t;
		rc = k.on_gpu ? step_gpu(&k) : step_host(&k);
	}
	/* the segments came backwards */
	for (int i = 0, j = out->nseg - 1; i < j; i++, j--) {
		struct cp_segment s = out->seg[i];
		out->seg[i] = out->seg[j];
		out->seg[j] = s;
	}
	return rc;
}

void cp_path__exit(struct cp_path *p)
{
	free(p->seg);
	memset(p, 0, sizeof *p);
}

const char *cp_kind__name(enum cp_kind k, const struct gpu_work *work)
{
	switch (k) {
	case CP_HOST_WORK:
		return "host work";
	case CP_CALL:
		return "CUDA call";
	case CP_LAUNCH_LATENCY:
		return "launch latency";
	case CP_GPU:
		return !work ? "GPU work" : work->kind == GPU_WORK_KERNEL ? "kernel"
					  : work->kind == GPU_WORK_COPY ? "copy"
					  : work->kind == GPU_WORK_GRAPH ? "CUDA graph" : "memset";
	case CP_STREAM_GAP:
		return "stream order";
	case CP_EVENT_WAIT:
		return "cross-stream wait";
	case CP_QUEUED:
		return "queued before the step";
	default:
		return "not attributed";
	}
}
