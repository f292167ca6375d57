/* gpu_idle.c - the idle attribution over a capture: one pass per device
 * over its GPU work in start order (with the call that launched each), the
 * API calls in start order beside it and the stream waits beside those.
 * Memory holds the calls open during the stretch at hand, a state per
 * stream, the per-step totals and the longest stretches. */
#include "gpu_idle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/name_ids.h"
#include "prof/event.h"
#include "model/window.h"
#include "prof/error.h"

/* ---- streams ---------------------------------------------------------------- */

/* The stream waits of the last few launches: a wait belongs to the first
 * work launched on its stream after it. */
#define STREAM_WAIT_HISTORY 4
#define STREAM_PRODUCERS 4

struct stream_state {
	bool used;
	int64_t pid, stream_id;
	int64_t last_end_ns;      /* of the work seen so far; INT64_MIN: none */
	bool launched;
	int64_t last_launch_ns;   /* start of the call that launched the last work */
	int64_t wait_ns[STREAM_WAIT_HISTORY];
	int nwaits;               /* waits in the ring, at most STREAM_WAIT_HISTORY */
	int next_wait;            /* the ring's slot the next wait goes to */
	int64_t held, held_ns;    /* work held by a wait, and for how long */
	struct { int64_t stream_id, ns; } producer[STREAM_PRODUCERS];
	int nproducers;
};

struct stream_table {
	struct stream_state *v;
	size_t cap, n;
};

static size_t stream_hash(int64_t pid, int64_t stream_id, size_t cap)
{
	uint64_t h = (uint64_t)pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)stream_id * 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct stream_state *stream_find(struct stream_table *t, int64_t pid, int64_t stream_id)
{
	size_t i;

	if (t->n * 2 >= t->cap) {
		struct stream_table bigger = { calloc(t->cap ? t->cap * 2 : 16, sizeof *t->v),
					       t->cap ? t->cap * 2 : 16, 0 };
		if (!bigger.v)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->v[j].used)
				continue;
			i = stream_hash(t->v[j].pid, t->v[j].stream_id, bigger.cap);
			while (bigger.v[i].used)
				i = (i + 1) & (bigger.cap - 1);
			bigger.v[i] = t->v[j];
			bigger.n++;
		}
		free(t->v);
		*t = bigger;
	}
	i = stream_hash(pid, stream_id, t->cap);
	while (t->v[i].used && (t->v[i].pid != pid || t->v[i].stream_id != stream_id))
		i = (i + 1) & (t->cap - 1);
	if (!t->v[i].used) {
		memset(&t->v[i], 0, sizeof t->v[i]);
		t->v[i].used = true;
		t->v[i].pid = pid;
		t->v[i].stream_id = stream_id;
		t->v[i].last_end_ns = INT64_MIN;
		t->n++;
	}
	return &t->v[i];
}

/* Was a wait recorded on the stream after its previous launch and no later
 * than this one? */
static bool stream_waited(const struct stream_state *st, int64_t launch_ns)
{
	for (int i = 0; i < st->nwaits; i++) {
		int64_t t = st->wait_ns[i];

		if (t <= launch_ns && (!st->launched || t > st->last_launch_ns))
			return true;
	}
	return false;
}

static void stream_note_producer(struct stream_state *st, int64_t producer, int64_t ns)
{
	int i;

	for (i = 0; i < st->nproducers && st->producer[i].stream_id != producer; i++)
		;
	if (i == st->nproducers) {
		if (st->nproducers == STREAM_PRODUCERS)
			return; /* more producers than kept: the first ones stand */
		st->producer[st->nproducers++].stream_id = producer;
		st->producer[i].ns = 0;
	}
	st->producer[i].ns += ns;
}

/* The other stream of the device (same process) whose work ended last,
 * no later than t: the likeliest recorder of the event waited on. */
static int64_t stream_producer(const struct stream_table *t, const struct stream_state *st, int64_t at)
{
	int64_t best = -1, best_end = INT64_MIN;

	for (size_t i = 0; i < t->cap; i++) {
		const struct stream_state *o = &t->v[i];

		if (!o->used || o == st || o->pid != st->pid || o->last_end_ns > at || o->last_end_ns <= best_end)
			continue;
		best_end = o->last_end_ns;
		best = o->stream_id;
	}
	return best;
}

/* ---- one device's pass -------------------------------------------------------- */

struct host_call {
	int64_t start_ns, end_ns, tid, name_id;
};

struct device_pass {
	struct diag_scope *ctx;
	struct gpu_idle_result *r;
	struct gpu_idle_device *dev;
	struct stream_table streams;
	/* API calls in start order; open: those overlapping the stretch at hand */
	struct prof_cursor *calls;
	bool calls_done, have_next;
	struct host_call next;
	struct host_call *open;
	int nopen, cap_open;
	int64_t last_launcher;     /* the thread that launched the latest work; 0: none */
	/* stream waits in start order */
	struct prof_cursor *waits;
	int64_t waits_read_to;
	/* the submitting thread's calls in one stretch */
	struct idle_host_call *hc;
	int64_t *hc_ns, *hc_name;
	int cap_hc, cap_hc_ns, cap_hc_name;
	/* the unions of the device's kernels (and graphs launched whole), and
	 * of those but NCCL's: the verdict's split of the busy time */
	struct diag_union_length kernels, compute;
	const struct name_ids *nccl;
	/* the first device's pass: every call read, for r->calls_seen */
	struct window_calls *seen;
};

/* The calls of the window that overlap [from, to) join the open set; those
 * that ended by from leave it. Successive stretches only move forward. */
static int open_calls_until(struct device_pass *p, int64_t from, int64_t to, struct prof_error *err)
{
	int kept = 0;

	for (int i = 0; i < p->nopen; i++)
		if (p->open[i].end_ns > from)
			p->open[kept++] = p->open[i];
	p->nopen = kept;
	while (p->calls && !p->calls_done) {
		if (!p->have_next) {
			int rc = prof_cursor__next(p->calls, err);

			if (rc < 0)
				return rc;
			if (rc == 0) {
				p->calls_done = true;
				break;
			}
			p->next.start_ns = prof_cursor__int64(p->calls, 0);
			p->next.end_ns = prof_cursor__int64(p->calls, 1);
			p->next.tid = prof_cursor__int64(p->calls, 2);
			p->next.name_id = prof_cursor__int64(p->calls, 3);
			p->have_next = true;
			if (p->seen && window_calls__add(p->seen, p->calls, 3))
				return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		if (p->next.start_ns >= to)
			break;
		p->have_next = false;
		if (p->next.end_ns <= from)
			continue;
		if (array__grow((void **)&p->open, &p->cap_open, p->nopen + 1, sizeof *p->open))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		p->open[p->nopen++] = p->next;
	}
	return 0;
}

/* The calls the stretches left unread, read for the rules after the pass
 * (the pass's calls_seen), which then knows every call of the window. */
static int read_every_call(struct device_pass *p, struct prof_error *err)
{
	int rc = 0;

	while (!p->calls_done && (rc = prof_cursor__next(p->calls, err)) == 1)
		if (window_calls__add(p->seen, p->calls, 3))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0)
		return rc;
	p->calls_done = true;
	window_calls__end(p->seen);
	return 0;
}

/* Stream waits made up to t enter their streams' history. */
static int read_waits_until(struct device_pass *p, int64_t t, struct prof_error *err)
{
	int rc;

	if (!p->waits || t < p->waits_read_to)
		return 0;
	while ((rc = prof_cursor__next(p->waits, err)) == 1) {
		int64_t at = prof_cursor__int64(p->waits, 0);
		struct stream_state *st = stream_find(&p->streams, prof_cursor__int64(p->waits, 3),
						      prof_cursor__int64(p->waits, 2));

		if (!st)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		st->wait_ns[st->next_wait] = at;
		st->next_wait = (st->next_wait + 1) % STREAM_WAIT_HISTORY;
		if (st->nwaits < STREAM_WAIT_HISTORY)
			st->nwaits++;
		if (at > t) {
			p->waits_read_to = at;
			return 0;
		}
	}
	if (rc < 0)
		return rc;
	prof_cursor__close(p->waits);
	p->waits = NULL;
	return 0;
}

/* Room for n calls of the submitting thread (their times and names beside). */
static int reserve_host_calls(struct device_pass *p, int n)
{
	return array__grow((void **)&p->hc, &p->cap_hc, n, sizeof *p->hc) ||
			       array__grow((void **)&p->hc_ns, &p->cap_hc_ns, n, sizeof *p->hc_ns) ||
			       array__grow((void **)&p->hc_name, &p->cap_hc_name, n, sizeof *p->hc_name)
		       ? PROF_E_NOMEM
		       : 0;
}

/* ns more for the call name in the list *v of *n entries. */
static int tally_time(struct gpu_idle_call_time **v, int *n, int *cap, int64_t name_id, int64_t ns)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i].name_id == name_id) {
			(*v)[i].time_ns += ns;
			return 0;
		}
	if (array__grow((void **)v, cap, *n + 1, sizeof **v))
		return PROF_E_NOMEM;
	(*v)[(*n)++] = (struct gpu_idle_call_time){ name_id, ns };
	return 0;
}

static int tally_call(struct gpu_idle_device *d, enum idle_cause c, int64_t name_id, int64_t ns)
{
	return tally_time(&d->calls[c], &d->ncalls[c], &d->cap_calls[c], name_id, ns);
}

static const char *call_name(const struct gpu_idle_result *r, int64_t id)
{
	const struct api_name *n = api_names__find(&r->names, id);
	return n ? n->name : "?";
}

static enum api_kind call_kind(const struct gpu_idle_result *r, int64_t id)
{
	const struct api_name *n = api_names__find(&r->names, id);
	/* a call the name table lacks still launched the work */
	return n ? n->kind : API_LAUNCH;
}

/* The 1-based step of a time (the last step starting at or before it), or 0. */
static int step_of(const struct gpu_idle_result *r, int64_t t)
{
	int lo = 0, hi = r->nsteps;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (r->steps[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* What the submitting thread did before its launch: "own work 1.9 ms,
 * synchronising 12 us (cudaStreamSynchronize)" into buf. */
static const char *host_parts(struct device_pass *p, const int64_t *by, int best_call, char *buf, size_t cap)
{
	static const char *const words[IDLE_LAUNCH] = {
		"own work", "synchronising", "allocating or freeing", "copying", "other CUDA calls",
	};
	size_t used = 0;
	char t[32];

	buf[0] = '\0';
	for (int c = 0; c < IDLE_LAUNCH && used < cap; c++) {
		if (by[c] <= 0)
			continue;
		used += (size_t)snprintf(buf + used, cap - used, "%s%s %s", used ? ", " : "", words[c],
					 diag__ns(t, sizeof t, by[c]));
		if (best_call >= 0 && c == (int)idle__cause_of_call(p->hc[best_call].kind, false) && used < cap)
			used += (size_t)snprintf(buf + used, cap - used, " (%s)",
						 call_name(p->r, p->hc_name[best_call]));
	}
	return used ? buf : "nothing";
}

/* Why queued work started only after a stretch: its stream's event wait,
 * a graph's edges, the previous work on its stream (prev_end: when that
 * ended; the GPU's own gap between back-to-back work), or nothing recorded. */
static const char *queued_why(const struct device_pass *p, const struct idle_stretch *s,
			      const struct gpu_work *next, int64_t prev_end)
{
	if (s->stream_waited)
		return "its stream waited on an event recorded on another stream";
	if (strstr(call_name(p->r, next->launch_name_id), "Graph"))
		return "a node of a CUDA graph, whose edges the trace does not record";
	if (prev_end == s->start_ns)
		return "it followed the previous work on its stream, which ended as the GPU fell idle: "
		       "the GPU's own gap between back-to-back work";
	return "no wait on its stream is recorded";
}

/* One sentence on what the stretch was: who launched the work that ends it
 * (named in its own column, so that text output can shorten it), and what
 * the submitting thread did until then. */
static char *stretch_evidence(struct device_pass *p, const struct idle_stretch *s,
			      const struct gpu_work *next, int64_t prev_end, const int64_t *by,
			      int best_call)
{
	struct gpu_idle_result *r = p->r;
	char t1[32], parts[512];

	if (!next)
		return s->has_launch ? diag__fmt("no GPU work followed in the window; the host thread until "
						 "the window's end: %s",
						 host_parts(p, by, best_call, parts, sizeof parts))
				     : diag__fmt("no GPU work followed on this device in the window");
	if (!s->has_launch)
		return diag__fmt("no API call in the trace launched it");
	if (s->launch_start_ns <= s->start_ns)
		return diag__fmt("launched (%s) %s before the GPU fell idle; %s",
				 call_name(r, next->launch_name_id),
				 diag__ns(t1, sizeof t1, ns_between(s->launch_start_ns, s->start_ns)),
				 queued_why(p, s, next, prev_end));
	return diag__fmt("thread %u launched it with %s %s into the stretch; until then: %s",
			 prof_tid_of(next->launch_tid), call_name(r, next->launch_name_id),
			 diag__ns(t1, sizeof t1, ns_between(s->start_ns, s->launch_start_ns)),
			 host_parts(p, by, best_call, parts, sizeof parts));
}

static int keep_top(struct device_pass *p, const struct idle_stretch *s, const struct gpu_work *next,
		    int64_t prev_end, const int64_t *by, int best_call, int step)
{
	struct gpu_idle_result *r = p->r;
	int64_t dur = s->end_ns - s->start_ns;
	struct gpu_idle_top t;
	char label[640];
	int at;

	if (r->ntop == GPU_IDLE_TOP && dur <= r->top[GPU_IDLE_TOP - 1].duration_ns)
		return 0;
	t.device_id = p->dev->device_id;
	t.start_ns = s->start_ns;
	t.duration_ns = dur;
	t.step = step;
	t.cause = idle__dominant(by);
	t.next_work = next ? strdup(gpu_work__label(p->ctx->store, next, label, sizeof label)) : NULL;
	t.evidence = stretch_evidence(p, s, next, prev_end, by, best_call);
	if (!t.evidence || (next && !t.next_work)) {
		free(t.next_work);
		free(t.evidence);
		return PROF_E_NOMEM;
	}
	if (r->ntop == GPU_IDLE_TOP) {
		r->ntop--;
		free(r->top[r->ntop].next_work);
		free(r->top[r->ntop].evidence);
	}
	for (at = r->ntop; at > 0 && r->top[at - 1].duration_ns < dur; at--)
		r->top[at] = r->top[at - 1];
	r->top[at] = t;
	r->ntop++;
	return 0;
}

/* [a, b) is idle; next (NULL at the window's end) is the work that ends it,
 * prev_end when the previous work on its stream ended. */
static int on_stretch(struct device_pass *p, int64_t a, int64_t b, const struct gpu_work *next,
		      int64_t prev_end, bool waited, struct prof_error *err)
{
	struct gpu_idle_result *r = p->r;
	struct gpu_idle_device *d = p->dev;
	struct idle_stretch s = { .start_ns = a, .end_ns = b };
	struct idle_sync_part sync;
	int64_t by[IDLE_NCAUSES], tid = 0, claim;
	int nh = 0, best, step, rc;

	if (next && next->has_launch) {
		s.has_launch = true;
		s.launch_start_ns = next->launch_start_ns;
		s.launch_end_ns = next->launch_end_ns;
		s.launch_kind = call_kind(r, next->launch_name_id);
		s.stream_waited = waited;
		tid = next->launch_tid;
	} else if (!next && (p->last_launcher || (r->window.mark == SUM_LOOP_NVTX && r->nsteps > 0))) {
		/* no work follows: what the host did until the window's end kept
		 * the GPU idle, on the thread of the last step's range (the window
		 * ends with it) or else on the thread that launched the last work */
		s.has_launch = true;
		s.launch_start_ns = s.launch_end_ns = b;
		s.launch_kind = API_OTHER;
		tid = r->window.mark == SUM_LOOP_NVTX && r->nsteps > 0 ? r->steps[r->nsteps - 1].global_tid
										  : p->last_launcher;
	}
	if (s.has_launch && s.launch_start_ns > a) {
		int64_t until = s.launch_start_ns < b ? s.launch_start_ns : b;

		rc = open_calls_until(p, a, until, err);
		if (rc)
			return rc;
		for (int i = 0; i < p->nopen; i++) {
			const struct host_call *c = &p->open[i];

			if (c->tid != tid || c->start_ns >= until || c->end_ns <= a)
				continue;
			if (reserve_host_calls(p, nh + 1))
				return prof_error__set(err, PROF_E_NOMEM, "out of memory");
			p->hc[nh].start_ns = c->start_ns;
			p->hc[nh].end_ns = c->end_ns;
			p->hc[nh].kind = call_kind(r, c->name_id);
			p->hc_name[nh] = c->name_id;
			nh++;
		}
	}
	best = idle__attribute(&s, p->hc, nh, nh ? p->hc_ns : NULL, by, &sync);
	claim = idle__sync_claim(by, &sync);
	if (sync.sync_call >= 0) {
		int64_t gap = claim - by[IDLE_HOST_SYNC]; /* after_sync_ns or 0 */

		d->sync_gap_ns += gap;
		d->sync_host_work_ns += sync.after_sync_ns - gap;
	}
	if (claim > 0) {
		d->sync_claim_ns += claim;
		if (tally_time(&d->sync_calls, &d->nsync_calls, &d->cap_sync_calls,
			       p->hc_name[sync.sync_call], claim))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	d->idle_ns += b - a;
	for (int c = 0; c < IDLE_NCAUSES; c++)
		d->cause_ns[c] += by[c];
	d->stretches[idle__dominant(by)]++;
	for (int i = 0; i < nh; i++)
		if (p->hc_ns[i] > 0 &&
		    tally_call(d, idle__cause_of_call(p->hc[i].kind, false), p->hc_name[i], p->hc_ns[i]))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (next && s.has_launch) {
		enum idle_cause lc = idle__cause_of_call(s.launch_kind, true);
		int64_t in_call = s.launch_start_ns > a ? b - (s.launch_start_ns < b ? s.launch_start_ns : b)
							: by[lc];

		if (in_call > 0 && tally_call(d, lc, next->launch_name_id, in_call))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	/* a stretch belongs to the step whose work ends it: for NVTX steps, the
	 * step the launching call was made in (an asynchronous loop runs ahead
	 * of its GPU work) */
	step = step_of(r, r->window.mark == SUM_LOOP_NVTX && s.has_launch ? s.launch_start_ns : b);
	if (step > 0)
		for (int c = 0; c < IDLE_NCAUSES; c++)
			d->step_cause_ns[(size_t)(step - 1) * IDLE_NCAUSES + (size_t)c] += by[c];
	if (keep_top(p, &s, next, prev_end, by, best, step))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return 0;
}

/* The GPU had no work over [a, b): its parts inside the capture's
 * stretches are idle stretches (time between capture windows was never
 * recorded), each attributed on its own; next ends the last part only, and
 * the parts before it end with their capture window, no work following
 * in it. */
static int on_gap(struct device_pass *p, int64_t a, int64_t b, const struct gpu_work *next,
		  int64_t prev_end, bool waited, struct prof_error *err)
{
	const struct sum_stretches *st = &p->r->stretches;
	int rc = 0;

	for (int i = sum_stretches__first_ending_after(st, a); rc == 0 && i < st->n &&
							       st->v[i].start_ns < b; i++) {
		int64_t x = st->v[i].start_ns > a ? st->v[i].start_ns : a;
		int64_t y = st->v[i].end_ns < b ? st->v[i].end_ns : b;
		bool last = y == b;

		rc = on_stretch(p, x, y, last ? next : NULL, last ? prev_end : INT64_MIN, last && waited, err);
	}
	return rc;
}

/* A stream's work held back by an event wait: how long, and behind which
 * stream (inferred). */
static void note_held(struct device_pass *p, struct stream_state *st, const struct gpu_work *w)
{
	int64_t ready = st->last_end_ns > w->launch_end_ns ? st->last_end_ns : w->launch_end_ns;

	/* waits count from the window's start */
	if (ready < p->r->window.start_ns)
		ready = p->r->window.start_ns;
	if (w->start_ns <= ready)
		return;
	st->held++;
	st->held_ns += w->start_ns - ready;
	stream_note_producer(st, stream_producer(&p->streams, st, w->start_ns), w->start_ns - ready);
}

static int collect_waits(struct device_pass *p, struct prof_error *err)
{
	struct gpu_idle_result *r = p->r;

	for (size_t i = 0; i < p->streams.cap; i++) {
		const struct stream_state *st = &p->streams.v[i];
		struct gpu_idle_stream_wait *w;
		int64_t best = -1, best_ns = -1;

		if (!st->used || st->held == 0)
			continue;
		if (array__grow((void **)&r->waits, &r->cap_waits, r->nwaits + 1, sizeof *r->waits))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		w = &r->waits[r->nwaits++];
		for (int k = 0; k < st->nproducers; k++)
			if (st->producer[k].ns > best_ns) {
				best_ns = st->producer[k].ns;
				best = st->producer[k].stream_id;
			}
		*w = (struct gpu_idle_stream_wait){
			st->pid, p->dev->device_id, st->stream_id, st->held, st->held_ns, best,
		};
	}
	return 0;
}

static int pass_device(struct diag_scope *ctx, struct gpu_idle_result *r, struct gpu_idle_device *d,
		       const struct name_ids *nccl, struct prof_error *err)
{
	const struct sum_window *w = &r->window;
	/* by start; the calls that end where the window starts are none of
	 * the attribution's, but the calls by name count those that start
	 * there too (window_calls.h) */
	const char *calls_sql = "SELECT start, end, coalesce(globalTid, 0), nameId FROM " DIAG_API_CALLS
				" WHERE end >= ?1 AND start < ?2 ORDER BY rowid";
	struct device_pass p = { .ctx = ctx, .r = r, .dev = d, .nccl = nccl };
	struct prof_cursor *work = NULL;
	int64_t cur = w->start_ns;
	struct gpu_work g;
	int rc, more = 0;

	rc = gpu_work__open(ctx, w->start_ns, w->end_ns, &d->device_id, &work, err);
	if (!rc && ctx->has_api_calls)
		rc = diag_scope__open_window(ctx, calls_sql, DIAG_GPU_SIDE, &p.calls, err);
	/* the first device's pass reads every call for the rules after it */
	if (!rc && p.calls && r->ndev == 1) {
		p.seen = &r->calls_seen;
		window_calls__begin(p.seen, w, ctx->busy, ctx->nbusy);
	}
	if (!rc)
		rc = stream_waits__open(ctx, &d->device_id, INT64_MIN, w->end_ns, &p.waits, err);
	p.waits_read_to = INT64_MIN;
	while (!rc && work && (more = prof_cursor__next(work, err)) == 1) {
		struct stream_state *st;
		bool waited = false;
		int64_t s, e;

		gpu_work__read(work, &g);
		s = g.start_ns < w->start_ns ? w->start_ns : g.start_ns;
		e = g.end_ns > w->end_ns ? w->end_ns : g.end_ns;
		if (g.has_launch && r->step_ends.end)
			step_ends__add(&r->step_ends, r->steps, g.launch_start_ns, e);
		if (g.kind == GPU_WORK_KERNEL || g.kind == GPU_WORK_GRAPH) {
			diag_union_length__add(&p.kernels, s, e);
			if (g.kind == GPU_WORK_GRAPH || !name_ids__has(p.nccl, g.name_id))
				diag_union_length__add(&p.compute, s, e);
		}
		/* waits first: reading them may add streams (and move the table) */
		rc = g.has_launch ? read_waits_until(&p, g.launch_start_ns, err) : 0;
		if (rc)
			break;
		st = stream_find(&p.streams, g.pid, g.stream_id);
		if (!st) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		if (g.has_launch) {
			waited = stream_waited(st, g.launch_start_ns);
			if (waited)
				note_held(&p, st, &g);
			st->launched = true;
			st->last_launch_ns = g.launch_start_ns;
			p.last_launcher = g.launch_tid;
		}
		if (s > cur) {
			rc = on_gap(&p, cur, s, &g, st->last_end_ns, waited, err);
			if (rc)
				break;
		}
		if (e > cur)
			cur = e;
		if (g.end_ns > st->last_end_ns)
			st->last_end_ns = g.end_ns;
	}
	if (rc == 0 && more < 0)
		rc = more;
	if (rc == 0 && cur < w->end_ns)
		rc = on_gap(&p, cur, w->end_ns, NULL, INT64_MIN, false, err);
	if (rc == 0)
		rc = collect_waits(&p, err);
	if (rc == 0 && p.seen)
		rc = read_every_call(&p, err);
	d->busy_ns = w->span_ns - d->idle_ns;
	d->kernels_ns = diag_union_length__ns(&p.kernels);
	d->compute_ns = diag_union_length__ns(&p.compute);
	prof_cursor__close(work);
	prof_cursor__close(p.calls);
	prof_cursor__close(p.waits);
	free(p.streams.v);
	free(p.open);
	free(p.hc);
	free(p.hc_ns);
	free(p.hc_name);
	return rc < 0 ? rc : 0;
}

/* The window's devices: those the busy union found, or asked for. */
static int devices_of(struct diag_scope *ctx, int64_t **ids, int *n, struct prof_error *err)
{
	if (!ctx->devices_known)
		return gpu_work__devices(ctx, ctx->w->start_ns, ctx->w->end_ns, ids, n, err);
	*n = ctx->ndevices;
	*ids = malloc(sizeof **ids * (size_t)(*n ? *n : 1));
	if (!*ids)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (*n > 0) /* none: no array to copy from */
		memcpy(*ids, ctx->devices, sizeof **ids * (size_t)*n);
	return 0;
}

int gpu_idle__analyse(struct diag_scope *ctx, struct gpu_idle_result **out, struct prof_error *err)
{
	struct gpu_idle_result *r = calloc(1, sizeof *r);
	struct name_ids nccl = { 0 };
	int64_t *ids = NULL;
	int n = 0, rc;

	*out = NULL;
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	r->window = *ctx->w;
	r->has_api_calls = ctx->has_api_calls;
	r->replayed = ctx->replayed;
	rc = sum_window__steps(ctx->store, ctx->w, &r->steps, &r->nsteps, err);
	if (!rc)
		rc = sum_stretches__load(ctx->store, r->window.start_ns, r->window.end_ns, &r->stretches, err);
	if (!rc)
		rc = api_names__load(ctx, &r->names, err);
	/* a window whose length overflows (a damaged capture) has nothing to say */
	if (!rc && ns_between(r->window.start_ns, r->window.end_ns) < INT64_MAX)
		rc = devices_of(ctx, &ids, &n, err);
	if (!rc && n > 0 && ctx->has_kernel)
		rc = name_ids__load(ctx->store, NCCL_KERNEL_NAME_GLOB, &nccl, err);
	if (!rc && n > 0 && r->window.mark == SUM_LOOP_NVTX && step_ends__init(&r->step_ends, r->nsteps))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc && n > 0) {
		r->dev = calloc((size_t)n, sizeof *r->dev);
		if (!r->dev)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; !rc && i < n; i++) {
		struct gpu_idle_device *d = &r->dev[r->ndev++];

		d->device_id = ids[i];
		d->step_cause_ns = calloc((size_t)(r->nsteps ? r->nsteps : 1) * IDLE_NCAUSES, sizeof(int64_t));
		if (!d->step_cause_ns)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		else
			rc = pass_device(ctx, r, d, &nccl, err);
	}
	free(ids);
	name_ids__exit(&nccl);
	if (rc) {
		gpu_idle_result__delete(r);
		return rc;
	}
	/* every device's pass added its launches */
	r->step_ends.known = r->step_ends.end != NULL;
	*out = r;
	return 0;
}

int gpu_idle__of(struct diag_scope *ctx, struct gpu_idle_result **memo, const struct gpu_idle_result **out,
		 struct prof_error *err)
{
	int rc = *memo ? 0 : gpu_idle__analyse(ctx, memo, err);

	*out = *memo;
	return rc;
}

struct window_calls *gpu_idle__calls_seen(struct gpu_idle_result *r, const struct diag_scope *ctx)
{
	struct window_calls *c = r ? &r->calls_seen : NULL;

	if (!c || !c->known || c->busy != ctx->busy || c->nbusy != ctx->nbusy || c->start_ns != ctx->w->start_ns ||
	    c->end_ns != ctx->w->end_ns || c->to != ctx->w->host_end_ns)
		return NULL;
	return c;
}

void gpu_idle_result__delete(struct gpu_idle_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ndev; i++) {
		free(r->dev[i].step_cause_ns);
		for (int c = 0; c < IDLE_NCAUSES; c++)
			free(r->dev[i].calls[c]);
		free(r->dev[i].sync_calls);
	}
	for (int i = 0; i < r->ntop; i++) {
		free(r->top[i].next_work);
		free(r->top[i].evidence);
	}
	free(r->dev);
	free(r->steps);
	sum_stretches__exit(&r->stretches);
	step_ends__exit(&r->step_ends);
	window_calls__exit(&r->calls_seen);
	free(r->waits);
	api_names__exit(&r->names);
	free(r);
}
