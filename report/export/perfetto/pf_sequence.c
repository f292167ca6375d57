/* pf_sequence.c - one Perfetto packet sequence: framing, interning and
 * incremental timestamps (see pf_sequence.h). */
#include "pf_sequence.h"

#include <stdlib.h>
#include <string.h>

#include "pf_pack.h"
#include "prof/escape.h"

#define CLOCK_BOOTTIME 6
#define CLOCK_INCREMENTAL 64   /* the first id scoped to the sequence */
#define TRACE_PACKET_TAG 0x0A  /* Trace.packet = 1, length-delimited */
/* PF_PACK_LIBRARY_ONLY: every packet packed by protobuf-c, none by
 * pf_pack.c (tests/tools/perfetto_library_pack, which the tests compare
 * with the ordinary trace byte for byte). */
/* Interned strings kept before the state is cleared and they go out again
 * (tests/tools/perfetto_small_budget sets a tiny one, to exercise the clearing). */
#ifndef INTERN_BUDGET_BYTES
#define INTERN_BUDGET_BYTES (16u << 20)
#endif
#define ENTRY_OVERHEAD_BYTES 64

struct pf_intern_entry {
	struct pf_intern_entry *next;  /* in its slot's chain */
	uint64_t hash, iid;
	enum pf_intern_kind kind;
	char *text;                    /* the valid UTF-8 form that went out */
	union {                        /* its message in InternedData */
		Perfetto__Protos__EventName name;
		Perfetto__Protos__EventCategory category;
		Perfetto__Protos__DebugAnnotationName arg_name;
		Perfetto__Protos__InternedString arg_string;
	} msg;
	char key[];                    /* the string as the capture holds it */
};

static int fail(struct pf_sequence *q, int code, const char *msg)
{
	if (q->rc == 0)
		q->rc = prof_error__set(q->err, code, "%s", msg);
	return q->rc;
}

static uint64_t hash_of(enum pf_intern_kind kind, const char *s)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

/* Packets collect here and go to the file in large writes. */
#define OUT_FLUSH_BYTES (256u << 10)

static int out_reserve(struct pf_sequence *q, size_t more)
{
	size_t cap = q->out_cap ? q->out_cap : OUT_FLUSH_BYTES * 2;
	uint8_t *grown;

	if (q->out_len + more <= q->out_cap)
		return 0;
	while (cap < q->out_len + more)
		cap *= 2;
	grown = realloc(q->obuf, cap);
	if (!grown)
		return fail(q, PROF_E_NOMEM, "out of memory");
	q->obuf = grown;
	q->out_cap = cap;
	return 0;
}

int pf_sequence__flush(struct pf_sequence *q)
{
	if (q->out_len && fwrite(q->obuf, 1, q->out_len, q->out) != q->out_len)
		fail(q, PROF_E_IO, "cannot write the trace");
	q->out_len = 0;
	return q->rc;
}

/* Tag, length and the packed packet: one Trace.packet field. A track
 * event's packet is sized and packed by hand (pf_pack.h), once each; any
 * other, by protobuf-c. */
static int emit(struct pf_sequence *q, Perfetto__Protos__TracePacket *p)
{
	struct pf_pack_sizes sizes;
#ifndef PF_PACK_LIBRARY_ONLY
	bool by_hand = pf_pack__is_event_packet(p);
#else
	bool by_hand = false;
#endif
	size_t size = by_hand ? pf_pack__event_packet_size(p, &sizes)
			      : perfetto__protos__trace_packet__get_packed_size(p);
	uint8_t *at;

	if (out_reserve(q, size + 11) < 0)
		return q->rc;
	at = q->obuf + q->out_len;
	*at++ = TRACE_PACKET_TAG;
	at = pf_pack__varint(at, size);
	at = by_hand ? pf_pack__event_packet(p, &sizes, at)
		     : at + perfetto__protos__trace_packet__pack(p, at);
	q->out_len = (size_t)(at - q->obuf);
	return q->out_len >= OUT_FLUSH_BYTES ? pf_sequence__flush(q) : q->rc;
}

/* The first packet after a clear: the incremental clock starts at the
 * incremental state's time, and becomes the sequence's default. */
static int write_snapshot(struct pf_sequence *q)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot snap = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock boot = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock incr = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock *clocks[] = { &boot, &incr };
	Perfetto__Protos__TracePacketDefaults defaults = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;

	boot.has_clock_id = incr.has_clock_id = 1;
	boot.clock_id = CLOCK_BOOTTIME;
	incr.clock_id = CLOCK_INCREMENTAL;
	boot.has_timestamp = incr.has_timestamp = 1;
	boot.timestamp = incr.timestamp = q->last_ts_ns;
	incr.has_is_incremental = 1;
	incr.is_incremental = 1;
	snap.n_clocks = 2;
	snap.clocks = clocks;
	defaults.has_timestamp_clock_id = 1;
	defaults.timestamp_clock_id = CLOCK_INCREMENTAL;

	p.clock_snapshot = &snap;
	p.trace_packet_defaults = &defaults;
	p.has_timestamp = p.has_timestamp_clock_id = 1;
	p.timestamp = q->last_ts_ns;
	p.timestamp_clock_id = CLOCK_BOOTTIME;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = q->id;
	p.has_sequence_flags = 1;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	return emit(q, &p);
}

static void free_owned(struct pf_sequence *q);

static void clear_table(struct pf_sequence *q)
{
	for (size_t i = 0; i < q->nslots; i++) {
		struct pf_intern_entry *e = q->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->text);
			free(e);
		}
		q->slots[i] = NULL;
	}
	q->nentries = q->bytes = 0;
	for (int k = 0; k < PF_INTERN__COUNT; k++)
		q->next_iid[k] = 1;
	memset(q->literals, 0, sizeof q->literals);
	q->generation++;
}

int pf_sequence__init(struct pf_sequence *q, FILE *out, uint32_t id, uint64_t start_ns,
		      struct prof_error *err)
{
	Perfetto__Protos__InternedData none = PERFETTO__PROTOS__INTERNED_DATA__INIT;

	memset(q, 0, sizeof *q);
	q->out = out;
	q->id = id;
	q->last_ts_ns = start_ns;
	q->err = err;
	q->pending = none;
	q->nslots = 4096;
	q->slots = calloc(q->nslots, sizeof *q->slots);
	if (!q->slots)
		return fail(q, PROF_E_NOMEM, "out of memory");
	clear_table(q);
	return write_snapshot(q);
}

void pf_sequence__exit(struct pf_sequence *q)
{
	if (q->slots)
		clear_table(q);
	free(q->slots);
	free(q->pending.event_categories);
	free(q->pending.event_names);
	free(q->pending.debug_annotation_names);
	free(q->pending.debug_annotation_string_values);
	free(q->obuf);
	free_owned(q);
	free(q->owned);
}

void pf_sequence__begin(struct pf_sequence *q)
{
	if (q->rc || q->bytes < INTERN_BUDGET_BYTES)
		return;
	clear_table(q);
	write_snapshot(q);
}

static int grow_slots(struct pf_sequence *q)
{
	size_t n = q->nslots * 2;
	struct pf_intern_entry **slots = calloc(n, sizeof *slots);

	if (!slots)
		return fail(q, PROF_E_NOMEM, "out of memory");
	for (size_t i = 0; i < q->nslots; i++) {
		struct pf_intern_entry *e = q->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = slots[e->hash & (n - 1)];
			slots[e->hash & (n - 1)] = e;
		}
	}
	free(q->slots);
	q->slots = slots;
	q->nslots = n;
	return 0;
}

/* Add e's message to the next packet's InternedData. */
static int add_pending(struct pf_sequence *q, struct pf_intern_entry *e)
{
	Perfetto__Protos__InternedData *d = &q->pending;
	void ***list;
	size_t *n;

	switch (e->kind) {
	case PF_EVENT_NAME: list = (void ***)&d->event_names; n = &d->n_event_names; break;
	case PF_CATEGORY: list = (void ***)&d->event_categories; n = &d->n_event_categories; break;
	case PF_ARG_NAME:
		list = (void ***)&d->debug_annotation_names;
		n = &d->n_debug_annotation_names;
		break;
	default:
		list = (void ***)&d->debug_annotation_string_values;
		n = &d->n_debug_annotation_string_values;
		break;
	}
	if (*n == q->cap[e->kind]) {
		size_t cap = q->cap[e->kind] ? q->cap[e->kind] * 2 : 16;
		void **grown = realloc(*list, cap * sizeof *grown);

		if (!grown)
			return fail(q, PROF_E_NOMEM, "out of memory");
		*list = grown;
		q->cap[e->kind] = cap;
	}
	(*list)[(*n)++] = &e->msg;
	return 0;
}

static char *sanitized_copy(const char *s)
{
	size_t need = prof_sanitize_utf8(NULL, 0, s);
	char *copy = malloc(need + 1);

	if (copy)
		prof_sanitize_utf8(copy, need + 1, s);
	return copy;
}

static const ProtobufCMessageDescriptor *const name_descriptors[] = {
	[PF_EVENT_NAME] = &perfetto__protos__event_name__descriptor,
	[PF_CATEGORY] = &perfetto__protos__event_category__descriptor,
	[PF_ARG_NAME] = &perfetto__protos__debug_annotation_name__descriptor,
};

uint64_t pf_sequence__intern(struct pf_sequence *q, enum pf_intern_kind kind, const char *s)
{
	uint64_t h = hash_of(kind, s ? s : "");
	struct pf_intern_entry *e;
	size_t len;

	if (!s)
		s = "";
	for (e = q->slots[h & (q->nslots - 1)]; e; e = e->next)
		if (e->hash == h && e->kind == kind && strcmp(e->key, s) == 0)
			return e->iid;
	if (q->rc)
		return 0;
	if (q->nentries >= q->nslots && grow_slots(q) < 0)
		return 0;
	len = strlen(s);
	e = malloc(sizeof *e + len + 1);
	if (!e || !(e->text = sanitized_copy(s))) {
		free(e);
		fail(q, PROF_E_NOMEM, "out of memory");
		return 0;
	}
	memcpy(e->key, s, len + 1);
	e->hash = h;
	e->kind = kind;
	e->iid = q->next_iid[kind]++;
	if (kind == PF_ARG_STRING) {
		e->msg.arg_string = (Perfetto__Protos__InternedString)
			PERFETTO__PROTOS__INTERNED_STRING__INIT;
		e->msg.arg_string.has_iid = e->msg.arg_string.has_str = 1;
		e->msg.arg_string.iid = e->iid;
		e->msg.arg_string.str.data = (uint8_t *)e->text;
		e->msg.arg_string.str.len = strlen(e->text);
	} else {
		/* EventName, EventCategory and DebugAnnotationName have the same
		 * fields (iid = 1, name = 2): only the descriptor differs */
		protobuf_c_message_init(name_descriptors[kind], &e->msg);
		e->msg.name.has_iid = 1;
		e->msg.name.iid = e->iid;
		e->msg.name.name = e->text;
	}
	e->next = q->slots[h & (q->nslots - 1)];
	q->slots[h & (q->nslots - 1)] = e;
	q->nentries++;
	q->bytes += len + strlen(e->text) + ENTRY_OVERHEAD_BYTES;
	add_pending(q, e);
	return e->iid;
}

uint64_t pf_sequence__intern_literal(struct pf_sequence *q, enum pf_intern_kind kind,
				     const char *s)
{
	struct pf_literal *l = &q->literals[((uintptr_t)s >> 3) % PF_LITERAL_SLOTS];

	if (l->s == s && l->kind == kind && s)
		return l->iid;
	/* a failed intern (0) is not kept: the next asks again */
	*l = (struct pf_literal){ .s = s, .kind = kind, .iid = pf_sequence__intern(q, kind, s) };
	if (!l->iid)
		l->s = NULL;
	return l->iid;
}

char *pf_sequence__text(struct pf_sequence *q, const char *s)
{
	char *copy;

	if (q->rc)
		return NULL;
	if (q->nowned == q->cap_owned) {
		size_t cap = q->cap_owned ? q->cap_owned * 2 : 16;
		char **grown = realloc(q->owned, cap * sizeof *grown);

		if (!grown) {
			fail(q, PROF_E_NOMEM, "out of memory");
			return NULL;
		}
		q->owned = grown;
		q->cap_owned = cap;
	}
	copy = sanitized_copy(s ? s : "");
	if (!copy)
		fail(q, PROF_E_NOMEM, "out of memory");
	else
		q->owned[q->nowned++] = copy;
	return copy;
}

static void free_owned(struct pf_sequence *q)
{
	for (size_t i = 0; i < q->nowned; i++)
		free(q->owned[i]);
	q->nowned = 0;
}

int pf_sequence__write(struct pf_sequence *q, Perfetto__Protos__TracePacket *p, int64_t ts_ns)
{
	Perfetto__Protos__InternedData *d = &q->pending;

	if (q->rc) {
		free_owned(q);
		return q->rc;
	}
	p->has_trusted_packet_sequence_id = 1;
	p->trusted_packet_sequence_id = q->id;
	if (d->n_event_names || d->n_event_categories || d->n_debug_annotation_names ||
	    d->n_debug_annotation_string_values)
		p->interned_data = d;
	/* ENDs and counter values refer to nothing interned: two bytes saved
	 * on most packets of a trace */
	if (p->track_event && (p->track_event->has_name_iid || p->track_event->n_category_iids ||
			       p->track_event->n_debug_annotations)) {
		p->has_sequence_flags = 1;
		p->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	}
	if (ts_ns >= 0) {
		p->has_timestamp = 1;
		if ((uint64_t)ts_ns >= q->last_ts_ns) {
			p->timestamp = (uint64_t)ts_ns - q->last_ts_ns;
			q->last_ts_ns = (uint64_t)ts_ns;
		} else {
			p->timestamp = (uint64_t)ts_ns;
			p->has_timestamp_clock_id = 1;
			p->timestamp_clock_id = CLOCK_BOOTTIME;
		}
	}
	emit(q, p);
	d->n_event_names = d->n_event_categories = 0;
	d->n_debug_annotation_names = d->n_debug_annotation_string_values = 0;
	free_owned(q);
	return q->rc;
}
