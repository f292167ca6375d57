/* pf_tracks.c - tracks, their overlap tracks and the slices open on them
 * (see pf_tracks.h). */
#include "pf_tracks.h"

#include <stdlib.h>
#include <string.h>

#include "model/sums.h"

static int nomem(struct pf_tracks *t)
{
	if (t->q->rc == 0)
		t->q->rc = prof_error__set(t->q->err, PROF_E_NOMEM, "out of memory");
	return t->q->rc;
}

static size_t slot_of(const struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b,
		      int64_t c)
{
	uint64_t h = (uint64_t)kind * 0x9E3779B97F4A7C15ull;

	h = (h ^ (uint64_t)a) * 0xBF58476D1CE4E5B9ull;
	h = (h ^ (uint64_t)b) * 0x94D049BB133111EBull;
	h = (h ^ (uint64_t)c) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (t->nslots - 1);
}

static bool same(const struct pf_track *tr, enum pf_track_kind kind, int64_t a, int64_t b,
		 int64_t c)
{
	return tr->kind == kind && tr->key[0] == a && tr->key[1] == b && tr->key[2] == c;
}

size_t pf_tracks__find(struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b,
		       int64_t c)
{
	for (size_t s = slot_of(t, kind, a, b, c); t->slots[s]; s = (s + 1) & (t->nslots - 1))
		if (same(&t->v[t->slots[s]], kind, a, b, c))
			return t->slots[s];
	return 0;
}

uint64_t pf_tracks__uuid(const struct pf_tracks *t, size_t track)
{
	return t->v[track].uuid;
}

int pf_tracks__init(struct pf_tracks *t, struct pf_sequence *q)
{
	memset(t, 0, sizeof *t);
	t->q = q;
	t->nslots = 256;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	t->cap = 64;
	t->v = calloc(t->cap, sizeof *t->v);
	t->n = 1;
	return t->slots && t->v ? 0 : nomem(t);
}

void pf_tracks__exit(struct pf_tracks *t)
{
	for (size_t i = 0; i < t->n && t->v; i++)
		free(t->v[i].open_end_ns);
	free(t->v);
	free(t->slots);
	free(t->heap);
	memset(t, 0, sizeof *t);
}

static int rehash(struct pf_tracks *t)
{
	size_t n = t->nslots * 2, *slots = calloc(n, sizeof *slots);

	if (!slots)
		return nomem(t);
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	for (size_t i = 1; i < t->n; i++) {
		const struct pf_track *tr = &t->v[i];
		size_t s;

		if (tr->kind == PF_TRACK_LANE)
			continue;
		for (s = slot_of(t, tr->kind, tr->key[0], tr->key[1], tr->key[2]); t->slots[s];
		     s = (s + 1) & (t->nslots - 1))
			;
		t->slots[s] = i;
	}
	return 0;
}

/* Append a track; its uuid is its index: small varints, stable order. */
static size_t append(struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b,
		     int64_t c)
{
	struct pf_track *tr;

	if (t->n == t->cap) {
		struct pf_track *grown = realloc(t->v, t->cap * 2 * sizeof *grown);

		if (!grown) {
			nomem(t);
			return 0;
		}
		t->v = grown;
		t->cap *= 2;
	}
	tr = &t->v[t->n];
	memset(tr, 0, sizeof *tr);
	tr->kind = kind;
	tr->key[0] = a;
	tr->key[1] = b;
	tr->key[2] = c;
	tr->uuid = t->n;
	return t->n++;
}

int pf_tracks__add(struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b, int64_t c,
		   uint64_t *uuid)
{
	size_t i = pf_tracks__find(t, kind, a, b, c), s;

	if (i) {
		*uuid = t->v[i].uuid;
		return 0;
	}
	if ((t->n + 1) * 2 > t->nslots && rehash(t) < 0)
		return t->q->rc;
	i = append(t, kind, a, b, c);
	if (!i)
		return t->q->rc;
	for (s = slot_of(t, kind, a, b, c); t->slots[s]; s = (s + 1) & (t->nslots - 1))
		;
	t->slots[s] = i;
	*uuid = t->v[i].uuid;
	return 1;
}

/* ---- the heap of pending ENDs ------------------------------------------- */

static bool before(const struct pf_pending_end *x, const struct pf_pending_end *y)
{
	return x->end_ns != y->end_ns ? x->end_ns < y->end_ns : x->order > y->order;
}

static int heap_push(struct pf_tracks *t, struct pf_pending_end e)
{
	size_t i;

	if (t->nheap == t->cap_heap) {
		size_t cap = t->cap_heap ? t->cap_heap * 2 : 256;
		struct pf_pending_end *grown = realloc(t->heap, cap * sizeof *grown);

		if (!grown)
			return nomem(t);
		t->heap = grown;
		t->cap_heap = cap;
	}
	for (i = t->nheap++; i > 0 && before(&e, &t->heap[(i - 1) / 2]); i = (i - 1) / 2)
		t->heap[i] = t->heap[(i - 1) / 2];
	t->heap[i] = e;
	return 0;
}

static struct pf_pending_end heap_pop(struct pf_tracks *t)
{
	struct pf_pending_end top = t->heap[0], last = t->heap[--t->nheap];
	size_t i = 0;

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= t->nheap)
			break;
		if (child + 1 < t->nheap && before(&t->heap[child + 1], &t->heap[child]))
			child++;
		if (!before(&t->heap[child], &last))
			break;
		t->heap[i] = t->heap[child];
		i = child;
	}
	if (t->nheap)
		t->heap[i] = last;
	return top;
}

static int write_end(struct pf_tracks *t, const struct pf_pending_end *e)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct pf_track *tr = &t->v[e->track];

	tr->nopen--;
	ev.has_type = ev.has_track_uuid = 1;
	ev.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	ev.track_uuid = tr->uuid;
	p.track_event = &ev;
	pf_sequence__begin(t->q);
	return pf_sequence__write(t->q, &p, e->end_ns);
}

int pf_tracks__close_until(struct pf_tracks *t, int64_t t_ns)
{
	while (t->nheap && t->heap[0].end_ns <= t_ns && t->q->rc == 0) {
		struct pf_pending_end e = heap_pop(t);

		write_end(t, &e);
	}
	return t->q->rc;
}

int pf_tracks__close_all(struct pf_tracks *t)
{
	return pf_tracks__close_until(t, INT64_MAX);
}

/* The overlap track of track i: a child track named for what it holds. */
static size_t lane_of(struct pf_tracks *t, size_t i)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	size_t lane;

	if (t->v[i].lane)
		return t->v[i].lane;
	lane = append(t, PF_TRACK_LANE, (int64_t)i, 0, 0);
	if (!lane)
		return 0;
	t->v[i].lane = lane;
	d.has_uuid = d.has_parent_uuid = 1;
	d.uuid = t->v[lane].uuid;
	d.parent_uuid = t->v[i].uuid;
	d.name = "overlapping slices";
	p.track_descriptor = &d;
	pf_sequence__write(t->q, &p, -1);
	return t->q->rc ? 0 : lane;
}

int pf_tracks__open(struct pf_tracks *t, size_t track, int64_t start_ns, int64_t end_ns,
		    uint64_t *uuid)
{
	struct pf_track *tr;

	if (end_ns < start_ns)
		end_ns = start_ns;
	while (t->v[track].nopen && t->v[track].open_end_ns[t->v[track].nopen - 1] < end_ns) {
		track = lane_of(t, track);
		if (!track)
			return t->q->rc;
	}
	tr = &t->v[track];
	if (sum_array__grow(&tr->open_end_ns, &tr->cap, tr->nopen, sizeof *tr->open_end_ns) < 0)
		return nomem(t);
	tr->open_end_ns[tr->nopen++] = end_ns;
	*uuid = tr->uuid;
	return heap_push(t, (struct pf_pending_end){ .end_ns = end_ns, .order = t->begun++,
						     .track = track });
}
