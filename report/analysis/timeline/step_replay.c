/* step_replay.c - one step replayed forward with a change applied
 * (step_replay.h says what each change does). */
#include "step_replay.h"

#include <stdlib.h>
#include <string.h>

#include "prof/event.h"

/* A replayed graph's kernels follow each other faster than launched ones
 * queued on a stream: 64 ns apart (the median) in the corpus' graph_replay
 * capture on an H100, where the same kernels launched one by one queue
 * 2.2 us apart. The replay takes the smaller of this and the step's own
 * queued latency. */
#define GRAPH_GAP_NS 100
/* Pinned host memory's copy rate when the step has no pinned copy of
 * 1 MiB or more to measure it from: a PCIe 4.0 x16 link's (Gen5 links
 * reach twice this: the H100's measured 54.9 GB/s in the corpus'
 * pinned_overlap capture). */
#define PINNED_BYTES_PER_NS 25.0

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Whether the set of changes ch holds change x. */
static bool applies(unsigned ch, enum replay_change x)
{
	return (ch & (unsigned)x) != 0;
}


static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

/* The median of v[0..n) (sorted here), or fallback when n is 0. */
static int64_t median(int64_t *v, int n, int64_t fallback)
{
	if (n == 0)
		return fallback;
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	return v[(n - 1) / 2];
}

static bool is_pageable_copy(const struct gpu_work *w)
{
	return w->kind == GPU_WORK_COPY && (w->src_kind == PROF_MEM_PAGEABLE || w->dst_kind == PROF_MEM_PAGEABLE);
}

void step_replay__params(const struct cp_data *d, struct replay_params *p)
{
	int n = d->nwork > d->ncalls ? d->nwork : d->ncalls;
	int64_t *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
	int k = 0;

	/* without measurements, an asynchronous call costs the host a few
	 * microseconds */
	*p = (struct replay_params){ GRAPH_GAP_NS, PINNED_BYTES_PER_NS, 3000, 0, 0, 0, 0 };
	if (!v)
		return;
	/* kernels queued behind the previous one on their stream, launched
	 * before it ended: the gap is the GPU's own latency */
	for (int i = 0; i < d->nwork; i++) {
		const struct gpu_work *w = &d->work[i];
		int prev = d->prev_on_stream[i];

		if (prev >= 0 && w->kind == GPU_WORK_KERNEL && d->work[prev].kind == GPU_WORK_KERNEL &&
		    w->has_launch && w->launch_end_ns < d->work[prev].end_ns && w->start_ns >= d->work[prev].end_ns)
			v[k++] = w->start_ns - d->work[prev].end_ns;
	}
	p->graph_gap_ns = median(v, k, p->graph_gap_ns);
	if (p->graph_gap_ns > GRAPH_GAP_NS)
		p->graph_gap_ns = GRAPH_GAP_NS;
	k = 0;
	for (int i = 0; i < d->ncalls; i++)
		if (d->calls[i].kind == API_LAUNCH && d->cover[i] == i)
			v[k++] = d->calls[i].end_ns - d->calls[i].start_ns;
	p->issue_ns = median(v, k, p->issue_ns);
	for (int i = 0; i < d->nwork; i++) {
		const struct gpu_work *w = &d->work[i];
		int64_t ns = w->end_ns - w->start_ns;

		if (w->kind == GPU_WORK_COPY && !is_pageable_copy(w) && w->bytes >= (1 << 20) && ns > 0 &&
		    (w->src_kind == PROF_MEM_PINNED || w->dst_kind == PROF_MEM_PINNED) &&
		    (double)w->bytes / (double)ns > p->pinned_bytes_per_ns)
			p->pinned_bytes_per_ns = (double)w->bytes / (double)ns;
	}
	free(v);
}

/* ---- the replay ------------------------------------------------------------- */

struct thread_state {
	int64_t tid;
	int64_t orig_end, new_end; /* of its last top-level call; INT64_MIN: none yet */
	int64_t gaps_ns;           /* the host's own work between its calls */
};

struct stream_state {
	int64_t pid, stream;
	int64_t end_ns;            /* the latest replayed end of its work */
};

struct replay {
	const struct cp_data *d;
	unsigned ch;
	const struct replay_params *p;
	int64_t span_start;
	const int *work_call;      /* per work: its top-level call, -1: none in the rows */
	int64_t *start, *end;      /* per work: replayed times */
	bool *done;
	struct thread_state *threads;
	int nthreads;
	struct stream_state *streams;
	int nstreams;
	int64_t last_ns;           /* the latest replayed end of anything */
	int64_t shift_ns;          /* how much earlier or later than measured the
				    * last replayed call ended */
	int skip_work;             /* the next step's first work, where this one ends; -1 */
};

static struct thread_state *thread_of(struct replay *r, int64_t tid)
{
	for (int i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	r->threads[r->nthreads] = (struct thread_state){ tid, INT64_MIN, INT64_MIN, 0 };
	return &r->threads[r->nthreads++];
}

/* The latest replayed end of pid's work, of one stream when stream >= 0. */
static int64_t gpu_done_by(const struct replay *r, int64_t pid, int64_t stream)
{
	int64_t t = INT64_MIN;

	for (int i = 0; i < r->nstreams; i++)
		if ((r->streams[i].pid == pid || pid == 0 || r->streams[i].pid == 0) &&
		    (stream < 0 || r->streams[i].stream == stream))
			t = max64(t, r->streams[i].end_ns);
	return t;
}

static void work_done(struct replay *r, int w, int64_t start, int64_t end)
{
	const struct gpu_work *g = &r->d->work[w];
	int i;

	r->start[w] = start;
	r->end[w] = end;
	r->done[w] = true;
	if (w != r->skip_work)
		r->last_ns = max64(r->last_ns, end);
	for (i = 0; i < r->nstreams; i++)
		if (r->streams[i].pid == g->pid && r->streams[i].stream == g->stream_id)
			break;
	if (i == r->nstreams)
		r->streams[r->nstreams++] = (struct stream_state){ g->pid, g->stream_id, INT64_MIN };
	r->streams[i].end_ns = max64(r->streams[i].end_ns, end);
}

static int64_t replayed_end(const struct replay *r, int w)
{
	return r->done[w] ? r->end[w] : r->d->work[w].end_ns;
}

static int64_t work_ns(const struct replay *r, const struct gpu_work *w)
{
	int64_t ns = w->end_ns - w->start_ns;

	if (applies(r->ch, REPLAY_PINNED) && is_pageable_copy(w) && r->p->pinned_bytes_per_ns > 0 && w->bytes > 0) {
		int64_t at_pinned = (int64_t)((double)w->bytes / r->p->pinned_bytes_per_ns);

		if (at_pinned < ns)
			ns = at_pinned;
	}
	return ns;
}

/* Work w of call c, whose replay starts at call_start and ends (for work
 * launched after it returned) at call_end: it starts when the latest of
 * what it waits for is done, plus the latency it showed after the one
 * that held it in the measured step. */
static void replay_work(struct replay *r, int c, int w, int64_t call_start, int64_t call_end)
{
	const struct cp_data *d = r->d;
	const struct gpu_work *g = &d->work[w];
	const struct cp_call *call = &d->calls[c];
	int prev = d->prev_on_stream[w], dep = -1;
	int64_t ready_orig[3], ready_new[3], held = INT64_MIN, start = INT64_MIN;
	int held_by = -1;
	bool graph = applies(r->ch, REPLAY_GRAPH) && g->kind == GPU_WORK_KERNEL;

	/* 0: the launch; 1: the previous work on the stream; 2: an event wait */
	ready_orig[0] = call->end_ns <= g->start_ns ? call->end_ns : call->start_ns;
	ready_new[0] = graph ? r->span_start : call->end_ns <= g->start_ns ? call_end : call_start;
	ready_orig[1] = ready_new[1] = INT64_MIN;
	if (prev >= 0) {
		ready_orig[1] = d->work[prev].end_ns;
		ready_new[1] = replayed_end(r, prev);
	}
	ready_orig[2] = ready_new[2] = INT64_MIN;
	if (cp_data__waited_between(d, g, prev >= 0 && d->work[prev].has_launch ? d->work[prev].launch_start_ns
										 : INT64_MIN,
				    g->launch_start_ns))
		dep = cp_data__other_stream_before(d, g, g->start_ns);
	if (dep >= 0) {
		ready_orig[2] = d->work[dep].end_ns;
		ready_new[2] = replayed_end(r, dep);
	}
	for (int k = 0; k < 3; k++)
		if (ready_orig[k] != INT64_MIN && ready_orig[k] > held) {
			held = ready_orig[k];
			held_by = k;
		}
	for (int k = 0; k < 3; k++) {
		int64_t latency;

		if (ready_new[k] == INT64_MIN)
			continue;
		if (graph)
			latency = k == 0 ? 0 : r->p->graph_gap_ns;
		else
			latency = k == held_by ? max64(0, g->start_ns - held) : 0;
		start = max64(start, ready_new[k] + latency);
	}
	if (start == INT64_MIN)
		start = g->start_ns;
	work_done(r, w, start, start + work_ns(r, g));
}

/* How long call c keeps its thread in the replay, from new_start; its
 * works replayed on the way. */
static int64_t replay_call(struct replay *r, int c, const int *works, int nworks, int64_t new_start)
{
	const struct cp_data *d = r->d;
	const struct cp_call *call = &d->calls[c];
	int64_t cost = call->kind == API_LAUNCH  ? r->p->record_launch_ns
		       : call->kind == API_ALLOC ? r->p->record_alloc_ns
		       : call->kind == API_COPY  ? r->p->record_copy_ns
						 : r->p->record_call_ns;
	int64_t dur = max64(0, call->end_ns - call->start_ns - cost), last_inside = INT64_MIN, new_end;
	bool async = false;

	/* a copy call that returned when its copy was done waits for it */
	for (int i = 0; i < nworks; i++) {
		const struct gpu_work *g = &d->work[works[i]];

		if (g->end_ns <= call->end_ns && g->end_ns > call->start_ns)
			last_inside = max64(last_inside, g->end_ns);
		async |= applies(r->ch, REPLAY_PINNED) && is_pageable_copy(g);
	}
	if (async) { /* pinned, the copy is queued and the call returns */
		new_end = new_start + (r->p->issue_ns < dur ? r->p->issue_ns : dur);
		for (int i = 0; i < nworks; i++)
			replay_work(r, c, works[i], new_start, new_end);
		return new_end;
	}
	if (last_inside != INT64_MIN) {
		int64_t after = max64(0, call->end_ns - last_inside - cost), done = INT64_MIN;

		for (int i = 0; i < nworks; i++) {
			replay_work(r, c, works[i], new_start, new_start);
			if (d->work[works[i]].end_ns <= call->end_ns)
				done = max64(done, r->end[works[i]]);
		}
		return max64(new_start + after, done + after);
	}
	if (call->kind == API_LAUNCH && applies(r->ch, REPLAY_GRAPH))
		dur = 0;
	if (call->kind == API_ALLOC && applies(r->ch, REPLAY_NO_ALLOC)) {
		new_end = new_start;
	} else if (call->waits_for_gpu) {
		/* what it waited for in the step, and what it took after */
		int rel = cp_data__released_by(d, call->pid, call->sync_stream, call->start_ns, call->end_ns);
		int64_t after = rel >= 0 ? max64(0, call->end_ns - d->work[rel].end_ns - cost) : dur;
		int64_t gpu = gpu_done_by(r, call->pid, call->sync_stream);
		/* the wait that made a pageable copy synchronous (PyTorch's
		 * .cuda() waits for its staging) goes with the copy */
		bool waits = gpu != INT64_MIN && (call->kind != API_SYNC || !applies(r->ch, REPLAY_NO_SYNC)) &&
			     !(rel >= 0 && applies(r->ch, REPLAY_PINNED) && is_pageable_copy(&d->work[rel]));

		new_end = new_start + after;
		if (waits)
			new_end = max64(new_end, gpu + (rel >= 0 ? after : 0));
	} else {
		new_end = new_start + dur;
	}
	for (int i = 0; i < nworks; i++)
		replay_work(r, c, works[i], new_start, new_end);
	return new_end;
}

/* qsort has no context argument: the array the comparator reads, one a
 * thread (the ranks of a job are diagnosed on several). */
static _Thread_local const struct cp_call *sort_calls;

static int by_call_start(const void *x, const void *y)
{
	const struct cp_call *a = &sort_calls[*(const int *)x], *b = &sort_calls[*(const int *)y];

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* The top-level call (not inside another of its thread) that launched w,
 * or -1. */
static int launching_call(const struct cp_data *d, const struct gpu_work *w)
{
	int c;

	if (!w->has_launch)
		return -1;
	c = cp_data__last_call_before(d, w->launch_tid, w->launch_start_ns + 1);
	if (c < 0 || d->calls[c].start_ns != w->launch_start_ns)
		return -1;
	return d->cover[c];
}

static int replay_calls(struct replay *r, const int *order, int ntop, const int *first_work, const int *works)
{
	const struct cp_data *d = r->d;
	bool hide = applies(r->ch, REPLAY_HOST_HIDDEN) || applies(r->ch, REPLAY_GRAPH);

	for (int k = 0; k < ntop; k++) {
		int c = order[k];
		const struct cp_call *call = &d->calls[c];
		struct thread_state *t = thread_of(r, call->tid);
		int64_t from = t->orig_end != INT64_MIN ? t->orig_end : r->span_start;
		int64_t gap = max64(0, call->start_ns - from), new_start, new_end;

		if (call->start_ns < r->span_start) {
			/* under way when the step began: as measured */
			new_start = call->start_ns;
			for (int i = first_work[c]; i < first_work[c + 1]; i++)
				if (!r->done[works[i]])
					work_done(r, works[i], d->work[works[i]].start_ns, d->work[works[i]].end_ns);
			new_end = call->end_ns;
		} else if (t->new_end == INT64_MIN && t != r->threads) {
			/* another thread's first call (PyTorch's autograd thread):
			 * it started when the threads before it handed it work,
			 * as much earlier or later as they now run; the time
			 * before it was not this thread's work */
			gap = 0;
			new_start = max64(r->span_start, call->start_ns + r->shift_ns);
			new_end = replay_call(r, c, works + first_work[c], first_work[c + 1] - first_work[c],
					      new_start);
		} else {
			new_start = (t->new_end != INT64_MIN ? t->new_end : r->span_start) + (hide ? 0 : gap);
			new_end = replay_call(r, c, works + first_work[c], first_work[c + 1] - first_work[c],
					      new_start);
		}
		t->gaps_ns += gap;
		t->orig_end = max64(t->orig_end, call->end_ns);
		t->new_end = max64(t->new_end, new_end);
		r->last_ns = max64(r->last_ns, new_end);
		r->shift_ns = new_end - call->end_ns;
	}
	return 0;
}

struct replay_plan {
	int *work_call;  /* per work: its top-level call, -1: none in the rows */
	int *first_work; /* call c's works: works[first_work[c] .. first_work[c + 1]) */
	int *works;      /* each call's works, in start order (the rows are by start) */
	int *order;      /* the top-level calls, by start */
	int ntop;
};

void replay_plan__free(struct replay_plan *plan)
{
	if (!plan)
		return;
	free(plan->work_call);
	free(plan->first_work);
	free(plan->works);
	free(plan->order);
	free(plan);
}

struct replay_plan *replay_plan__make(const struct cp_data *d)
{
	int n = d->nwork > 0 ? d->nwork : 1, m = d->ncalls > 0 ? d->ncalls : 1;
	struct replay_plan *pl = calloc(1, sizeof *pl);
	int *fill = calloc((size_t)m + 1, sizeof *fill);

	if (!pl || !fill || !(pl->work_call = malloc(sizeof *pl->work_call * (size_t)n)) ||
	    !(pl->first_work = calloc((size_t)m + 1, sizeof *pl->first_work)) ||
	    !(pl->works = malloc(sizeof *pl->works * (size_t)n)) || !(pl->order = malloc(sizeof *pl->order * (size_t)m))) {
		free(fill);
		replay_plan__free(pl);
		return NULL;
	}
	for (int w = 0; w < d->nwork; w++) {
		pl->work_call[w] = launching_call(d, &d->work[w]);
		if (pl->work_call[w] >= 0)
			pl->first_work[pl->work_call[w] + 1]++;
	}
	for (int c = 0; c < d->ncalls; c++)
		pl->first_work[c + 1] += pl->first_work[c];
	for (int w = 0; w < d->nwork; w++)
		if (pl->work_call[w] >= 0)
			pl->works[pl->first_work[pl->work_call[w]] + fill[pl->work_call[w]]++] = w;
	free(fill);
	for (int c = 0; c < d->ncalls; c++)
		if (d->cover[c] == c)
			pl->order[pl->ntop++] = c;
	sort_calls = d->calls;
	qsort(pl->order, (size_t)pl->ntop, sizeof *pl->order, by_call_start);
	return pl;
}

int64_t step_replay__span(const struct cp_data *d, const struct cp_anchor *a, int64_t span_start_ns,
			  unsigned ch, const struct replay_params *p)
{
	int n = d->nwork > 0 ? d->nwork : 1, m = d->ncalls > 0 ? d->ncalls : 1;
	struct replay r = { .d = d, .ch = ch, .p = p, .span_start = span_start_ns, .last_ns = span_start_ns,
			    .skip_work = a->on_gpu && a->before_work ? a->work : -1 };
	bool hide = applies(ch, REPLAY_HOST_HIDDEN) || applies(ch, REPLAY_GRAPH);
	const struct replay_plan *plan = d->plan;
	int64_t span = -1, hidden = 0;

	r.start = malloc(sizeof *r.start * (size_t)n);
	r.end = malloc(sizeof *r.end * (size_t)n);
	r.done = calloc((size_t)n, sizeof *r.done);
	r.threads = malloc(sizeof *r.threads * (size_t)(m + 1));
	r.streams = malloc(sizeof *r.streams * (size_t)n);
	if (!plan || !r.start || !r.end || !r.done || !r.threads || !r.streams)
		goto out;
	r.work_call = plan->work_call;
	/* work queued before the step (launched before it, or by nothing the
	 * rows hold): as measured, and what a synchronisation waits for too */
	for (int w = 0; w < d->nwork; w++) {
		const struct gpu_work *g = &d->work[w];

		if (r.work_call[w] < 0 && (!g->has_launch || g->launch_start_ns < span_start_ns))
			work_done(&r, w, g->start_ns, g->end_ns);
	}
	replay_calls(&r, plan->order, plan->ntop, plan->first_work, plan->works);
	/* where the step ends: the next step's first work starts; or the
	 * step's range ends on its thread, after the host's last work */
	if (r.skip_work >= 0 && r.done[r.skip_work])
		r.last_ns = max64(r.last_ns, r.start[r.skip_work]);
	if (!a->on_gpu) {
		struct thread_state *t = thread_of(&r, a->tid);
		int64_t from = t->orig_end != INT64_MIN ? t->orig_end : span_start_ns;
		int64_t tail = max64(0, a->at_ns - from);

		t->gaps_ns += tail;
		r.last_ns = max64(r.last_ns, (t->new_end != INT64_MIN ? t->new_end : span_start_ns) + (hide ? 0 : tail));
	}
	span = r.last_ns - span_start_ns;
	/* a pipeline hides the host's work behind the GPU's, never below it
	 * (in a graph, that work is gone) */
	if (applies(ch, REPLAY_HOST_HIDDEN) && !applies(ch, REPLAY_GRAPH))
		for (int i = 0; i < r.nthreads; i++)
			hidden = max64(hidden, r.threads[i].gaps_ns);
	span = max64(span, hidden);
out:
	free(r.start);
	free(r.end);
	free(r.done);
	free(r.threads);
	free(r.streams);
	return span;
}
