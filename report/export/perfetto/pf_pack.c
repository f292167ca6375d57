/* pf_pack.c - one track event's packet packed by hand (see pf_pack.h). */
#include "pf_pack.h"

#include <stdbool.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2 };

/* A field this file packs: its message, number, label and type, as
 * perfetto_subset.proto gives them; checked against the descriptors the
 * first time, in their order (protobuf-c packs in that order). */
struct known_field {
	const ProtobufCMessageDescriptor *message;
	unsigned id;
	ProtobufCLabel label;
	ProtobufCType type;
};

static const struct known_field known[] = {
	{ &perfetto__protos__trace_packet__descriptor, 6, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__trace_packet__descriptor, 8, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__trace_packet__descriptor, 10, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT32 },
	{ &perfetto__protos__trace_packet__descriptor, 11, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__trace_packet__descriptor, 12, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__trace_packet__descriptor, 13, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT32 },
	{ &perfetto__protos__trace_packet__descriptor, 58, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT32 },
	{ &perfetto__protos__trace_packet__descriptor, 59, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__trace_packet__descriptor, 60, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__track_event__descriptor, 3, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__track_event__descriptor, 4, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_MESSAGE },
	{ &perfetto__protos__track_event__descriptor, 9, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_ENUM },
	{ &perfetto__protos__track_event__descriptor, 10, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__track_event__descriptor, 11, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__track_event__descriptor, 30, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_INT64 },
	{ &perfetto__protos__track_event__descriptor, 44, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_DOUBLE },
	{ &perfetto__protos__track_event__descriptor, 47, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_FIXED64 },
	{ &perfetto__protos__track_event__descriptor, 48, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_FIXED64 },
	{ &perfetto__protos__debug_annotation__descriptor, 1, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__debug_annotation__descriptor, 2, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_BOOL },
	{ &perfetto__protos__debug_annotation__descriptor, 3, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
	{ &perfetto__protos__debug_annotation__descriptor, 4, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_INT64 },
	{ &perfetto__protos__debug_annotation__descriptor, 5, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_DOUBLE },
	{ &perfetto__protos__debug_annotation__descriptor, 6, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_STRING },
	{ &perfetto__protos__debug_annotation__descriptor, 17, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_UINT64 },
};

/* Whether the descriptors hold exactly the known fields, in that order. */
static bool descriptors_known(void)
{
	static int known_state = -1; /* -1: not checked yet */
	size_t k = 0;

	if (known_state >= 0)
		return known_state;
	for (const ProtobufCMessageDescriptor *const *m = (const ProtobufCMessageDescriptor *const[]){
		     &perfetto__protos__trace_packet__descriptor,
		     &perfetto__protos__track_event__descriptor,
		     &perfetto__protos__debug_annotation__descriptor, NULL };
	     *m; m++) {
		for (unsigned i = 0; i < (*m)->n_fields; i++, k++) {
			const ProtobufCFieldDescriptor *f = &(*m)->fields[i];

			if (k == sizeof known / sizeof known[0] || known[k].message != *m ||
			    known[k].id != f->id || known[k].label != f->label ||
			    known[k].type != f->type || (f->flags & PROTOBUF_C_FIELD_FLAG_PACKED))
				return (known_state = 0);
		}
	}
	known_state = k == sizeof known / sizeof known[0];
	return known_state;
}

int pf_pack__is_event_packet(const Perfetto__Protos__TracePacket *p)
{
	return p->track_event && !p->clock_snapshot && !p->interned_data &&
	       !p->trace_packet_defaults && !p->track_descriptor && !p->base.n_unknown_fields &&
	       !p->track_event->base.n_unknown_fields &&
	       p->track_event->n_debug_annotations <= PF_PACK_MAX_ANNOTATIONS && descriptors_known();
}

/* ---- sizes ---------------------------------------------------------------- */

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t tag_size(unsigned id)
{
	return varint_size((uint64_t)id << 3);
}

static size_t annotation_size(const Perfetto__Protos__DebugAnnotation *a)
{
	size_t n = 0;

	if (a->has_name_iid)
		n += tag_size(1) + varint_size(a->name_iid);
	if (a->has_bool_value)
		n += tag_size(2) + 1;
	if (a->has_uint_value)
		n += tag_size(3) + varint_size(a->uint_value);
	if (a->has_int_value)
		n += tag_size(4) + varint_size((uint64_t)a->int_value);
	if (a->has_double_value)
		n += tag_size(5) + 8;
	if (a->string_value) {
		size_t len = strlen(a->string_value);

		n += tag_size(6) + varint_size(len) + len;
	}
	if (a->has_string_value_iid)
		n += tag_size(17) + varint_size(a->string_value_iid);
	return n;
}

/* The event's size; each annotation's in sizes[i], which the writing reuses. */
static size_t event_size(const Perfetto__Protos__TrackEvent *e, size_t *sizes)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_category_iids; i++)
		n += tag_size(3) + varint_size(e->category_iids[i]);
	for (size_t i = 0; i < e->n_debug_annotations; i++) {
		sizes[i] = annotation_size(e->debug_annotations[i]);
		n += tag_size(4) + varint_size(sizes[i]) + sizes[i];
	}
	/* an enum is an int32, a negative one sign-extended to ten bytes */
	if (e->has_type)
		n += tag_size(9) + varint_size((uint64_t)(int64_t)(int32_t)e->type);
	if (e->has_name_iid)
		n += tag_size(10) + varint_size(e->name_iid);
	if (e->has_track_uuid)
		n += tag_size(11) + varint_size(e->track_uuid);
	if (e->has_counter_value)
		n += tag_size(30) + varint_size((uint64_t)e->counter_value);
	if (e->has_double_counter_value)
		n += tag_size(44) + 8;
	n += (e->n_flow_ids) * (tag_size(47) + 8);
	n += (e->n_terminating_flow_ids) * (tag_size(48) + 8);
	return n;
}

/* ---- writing -------------------------------------------------------------- */

static uint8_t *put_varint(uint8_t *out, uint64_t v)
{
	while (v >= 0x80) {
		*out++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*out++ = (uint8_t)v;
	return out;
}

/* the packer's own, which the compiler keeps inline in it */
uint8_t *pf_pack__varint(uint8_t *out, uint64_t v)
{
	return put_varint(out, v);
}

static uint8_t *put_tag(uint8_t *out, unsigned id, int wire)
{
	return put_varint(out, (uint64_t)id << 3 | (unsigned)wire);
}

/* little-endian, as the wire has fixed64 and double */
static uint8_t *put_fixed64(uint8_t *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*out++ = (uint8_t)(v >> (8 * i));
	return out;
}

static uint8_t *put_double(uint8_t *out, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof v);
	return put_fixed64(out, v);
}

static uint8_t *put_annotation(uint8_t *out, const Perfetto__Protos__DebugAnnotation *a)
{
	if (a->has_name_iid)
		out = put_varint(put_tag(out, 1, WIRE_VARINT), a->name_iid);
	if (a->has_bool_value) {
		out = put_tag(out, 2, WIRE_VARINT);
		*out++ = a->bool_value ? 1 : 0;
	}
	if (a->has_uint_value)
		out = put_varint(put_tag(out, 3, WIRE_VARINT), a->uint_value);
	if (a->has_int_value)
		out = put_varint(put_tag(out, 4, WIRE_VARINT), (uint64_t)a->int_value);
	if (a->has_double_value)
		out = put_double(put_tag(out, 5, WIRE_FIXED64), a->double_value);
	if (a->string_value) {
		size_t len = strlen(a->string_value);

		out = put_varint(put_tag(out, 6, WIRE_BYTES), len);
		memcpy(out, a->string_value, len);
		out += len;
	}
	if (a->has_string_value_iid)
		out = put_varint(put_tag(out, 17, WIRE_VARINT), a->string_value_iid);
	return out;
}

static uint8_t *put_event(uint8_t *out, const Perfetto__Protos__TrackEvent *e, const size_t *sizes)
{
	for (size_t i = 0; i < e->n_category_iids; i++)
		out = put_varint(put_tag(out, 3, WIRE_VARINT), e->category_iids[i]);
	for (size_t i = 0; i < e->n_debug_annotations; i++) {
		out = put_varint(put_tag(out, 4, WIRE_BYTES), sizes[i]);
		out = put_annotation(out, e->debug_annotations[i]);
	}
	if (e->has_type)
		out = put_varint(put_tag(out, 9, WIRE_VARINT), (uint64_t)(int64_t)(int32_t)e->type);
	if (e->has_name_iid)
		out = put_varint(put_tag(out, 10, WIRE_VARINT), e->name_iid);
	if (e->has_track_uuid)
		out = put_varint(put_tag(out, 11, WIRE_VARINT), e->track_uuid);
	if (e->has_counter_value)
		out = put_varint(put_tag(out, 30, WIRE_VARINT), (uint64_t)e->counter_value);
	if (e->has_double_counter_value)
		out = put_double(put_tag(out, 44, WIRE_FIXED64), e->double_counter_value);
	for (size_t i = 0; i < e->n_flow_ids; i++)
		out = put_fixed64(put_tag(out, 47, WIRE_FIXED64), e->flow_ids[i]);
	for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
		out = put_fixed64(put_tag(out, 48, WIRE_FIXED64), e->terminating_flow_ids[i]);
	return out;
}

size_t pf_pack__event_packet_size(const Perfetto__Protos__TracePacket *p, struct pf_pack_sizes *s)
{
	size_t n;

	s->event = event_size(p->track_event, s->annotation);
	n = tag_size(11) + varint_size(s->event) + s->event;
	if (p->has_timestamp)
		n += tag_size(8) + varint_size(p->timestamp);
	if (p->has_trusted_packet_sequence_id)
		n += tag_size(10) + varint_size(p->trusted_packet_sequence_id);
	if (p->has_sequence_flags)
		n += tag_size(13) + varint_size(p->sequence_flags);
	if (p->has_timestamp_clock_id)
		n += tag_size(58) + varint_size(p->timestamp_clock_id);
	return n;
}

uint8_t *pf_pack__event_packet(const Perfetto__Protos__TracePacket *p, const struct pf_pack_sizes *s,
			       uint8_t *out)
{
	if (p->has_timestamp)
		out = put_varint(put_tag(out, 8, WIRE_VARINT), p->timestamp);
	if (p->has_trusted_packet_sequence_id)
		out = put_varint(put_tag(out, 10, WIRE_VARINT), p->trusted_packet_sequence_id);
	out = put_event(put_varint(put_tag(out, 11, WIRE_BYTES), s->event), p->track_event,
			s->annotation);
	if (p->has_sequence_flags)
		out = put_varint(put_tag(out, 13, WIRE_VARINT), p->sequence_flags);
	if (p->has_timestamp_clock_id)
		out = put_varint(put_tag(out, 58, WIRE_VARINT), p->timestamp_clock_id);
	return out;
}
