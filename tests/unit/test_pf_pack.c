/* test_pf_pack.c - a track event's packet packed by hand (pf_pack.c) is
 * protobuf-c's bytes for every value each field can take at the edges of
 * its encoding (varints of one to ten bytes, negative integers and enums,
 * doubles, empty and long strings, repeated fields), not only for the
 * values real captures give (tests/cli/test_report_perfetto_pack.sh); a
 * packet of another shape is left to protobuf-c. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pf_pack.h"
#include "testutil.h"

static const int64_t edges[] = { 0, 1, 127, 128, 16383, 16384, INT32_MAX, (int64_t)1 << 32,
				 INT64_MAX, -1, -128, INT32_MIN, INT64_MIN };
#define NEDGES (sizeof edges / sizeof edges[0])

/* p sized and packed both ways: the same length and bytes. */
static void same_bytes(const Perfetto__Protos__TracePacket *p, const char *what, size_t i)
{
	size_t want_len = perfetto__protos__trace_packet__get_packed_size(p), got_len;
	struct pf_pack_sizes sizes;
	uint8_t *want = malloc(want_len + 1), *got = calloc(1, want_len + 64);

	ck_assert(want && got);
	ck_assert_msg(pf_pack__is_event_packet(p), "%s %zu: the shape is packed by hand", what, i);
	ck_assert_uint_eq(perfetto__protos__trace_packet__pack(p, want), want_len);
	ck_assert_msg(pf_pack__event_packet_size(p, &sizes) == want_len, "%s %zu: sized %zu, protobuf-c %zu",
		      what, i, pf_pack__event_packet_size(p, &sizes), want_len);
	got_len = (size_t)(pf_pack__event_packet(p, &sizes, got) - got);
	ck_assert_msg(got_len == want_len, "%s %zu: %zu bytes, protobuf-c %zu", what, i, got_len,
		      want_len);
	ck_assert_msg(memcmp(got, want, want_len) == 0, "%s %zu: bytes differ", what, i);
	free(want);
	free(got);
}

START_TEST(test_every_field_at_its_edges)
{
	char long_text[300];

	memset(long_text, 'k', sizeof long_text - 1);
	long_text[sizeof long_text - 1] = '\0';
	for (size_t i = 0; i < NEDGES; i++) {
		int64_t v = edges[i];
		uint64_t cats[3] = { (uint64_t)v, 1, 300 }, flows[2] = { (uint64_t)v, 7 };
		Perfetto__Protos__DebugAnnotation a[4];
		Perfetto__Protos__DebugAnnotation *ap[4] = { &a[0], &a[1], &a[2], &a[3] };
		Perfetto__Protos__TrackEvent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
		Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

		for (int k = 0; k < 4; k++)
			a[k] = (Perfetto__Protos__DebugAnnotation)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
		a[0].has_name_iid = a[0].has_int_value = 1;
		a[0].name_iid = (uint64_t)v;
		a[0].int_value = v;
		a[1].has_uint_value = a[1].has_bool_value = a[1].has_string_value_iid = 1;
		a[1].uint_value = (uint64_t)v;
		a[1].bool_value = (protobuf_c_boolean)(i & 1);
		a[1].string_value_iid = (uint64_t)v;
		a[2].has_double_value = 1;
		a[2].double_value = (double)v / 3.0;
		a[2].string_value = i & 1 ? long_text : "";
		a[3].string_value = "ein Wert";
		e.has_type = e.has_name_iid = e.has_track_uuid = 1;
		e.type = (Perfetto__Protos__TrackEvent__Type)(int32_t)v;
		e.name_iid = (uint64_t)v;
		e.track_uuid = (uint64_t)v ^ 0x5555;
		e.n_category_iids = 1 + i % 3;
		e.category_iids = cats;
		e.n_debug_annotations = i % 5;
		e.debug_annotations = ap;
		e.n_flow_ids = i % 3;
		e.flow_ids = flows;
		e.n_terminating_flow_ids = (i + 1) % 3;
		e.terminating_flow_ids = flows;
		p.track_event = &e;
		same_bytes(&p, "an event", i);

		/* a counter, with the packet's own numbers */
		e = (Perfetto__Protos__TrackEvent)PERFETTO__PROTOS__TRACK_EVENT__INIT;
		e.has_type = e.has_track_uuid = 1;
		e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
		e.track_uuid = 3;
		e.has_counter_value = !(i & 1);
		e.counter_value = v;
		e.has_double_counter_value = i & 1;
		e.double_counter_value = (double)v * 1.5;
		p.has_timestamp = p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
		p.has_timestamp_clock_id = i & 1;
		p.timestamp = (uint64_t)v;
		p.trusted_packet_sequence_id = (uint32_t)v;
		p.sequence_flags = (uint32_t)v;
		p.timestamp_clock_id = 6;
		same_bytes(&p, "a counter", i);
	}
}
END_TEST

START_TEST(test_other_shapes_are_the_library_s)
{
	Perfetto__Protos__TrackEvent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__DebugAnnotation a = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	Perfetto__Protos__DebugAnnotation *many[PF_PACK_MAX_ANNOTATIONS + 1];

	ck_assert(!pf_pack__is_event_packet(&p));
	p.track_descriptor = &d;
	ck_assert(!pf_pack__is_event_packet(&p));
	p.track_descriptor = NULL;
	p.track_event = &e;
	ck_assert(pf_pack__is_event_packet(&p));
	p.interned_data = &in;
	ck_assert(!pf_pack__is_event_packet(&p));
	p.interned_data = NULL;
	for (size_t i = 0; i <= PF_PACK_MAX_ANNOTATIONS; i++)
		many[i] = &a;
	e.debug_annotations = many;
	e.n_debug_annotations = PF_PACK_MAX_ANNOTATIONS;
	ck_assert(pf_pack__is_event_packet(&p));
	e.n_debug_annotations = PF_PACK_MAX_ANNOTATIONS + 1;
	ck_assert(!pf_pack__is_event_packet(&p));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("pf_pack");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_field_at_its_edges);
	tcase_add_test(tc, test_other_shapes_are_the_library_s);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
