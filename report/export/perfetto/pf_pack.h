/* pf_pack.h - the packet of one track event packed without protobuf-c's
 * generic walk, byte for byte as protobuf-c packs it.
 *
 * Nearly every packet of a trace is one shape: a TracePacket holding a
 * TrackEvent and a few numbers, the event holding a few debug annotations
 * (pf_pack__is_event_packet). protobuf-c packs a message by walking
 * every field of its descriptor, and a nested message by sizing it first
 * (one more walk of it and of everything under it), so an annotation is
 * walked three times per packet. At 10M kernels that walk was a third of
 * the Perfetto writer's thread, the export's busiest. Here the packet is
 * sized once bottom up and written once, fields in protobuf-c's order (by
 * field number), each as protobuf-c encodes it; the library still packs
 * every other packet, and tests/cli/test_report_perfetto_pack.sh compares
 * the two on every fixture. */
#ifndef REPORT_PF_PACK_H
#define REPORT_PF_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto_subset.pb-c.h"

/* The annotations an event of that shape holds at most (a trace's events
 * carry a handful; one with more goes to protobuf-c). */
#define PF_PACK_MAX_ANNOTATIONS 32

/* Whether p is the shape packed here: a track event and nothing else
 * nested, at most PF_PACK_MAX_ANNOTATIONS annotations, with
 * perfetto_subset.proto's messages as this file knows them (a message that
 * gains a field leaves every packet to protobuf-c). */
int pf_pack__is_event_packet(const Perfetto__Protos__TracePacket *p);

/* A packet's sizes, found once and used again as it is written. */
struct pf_pack_sizes {
	size_t annotation[PF_PACK_MAX_ANNOTATIONS];
	size_t event;
};
/* The length p packs in (s filled for pf_pack__event_packet). */
size_t pf_pack__event_packet_size(const Perfetto__Protos__TracePacket *p, struct pf_pack_sizes *s);
/* p packed at out, with the sizes pf_pack__event_packet_size found: the
 * byte after it. */
uint8_t *pf_pack__event_packet(const Perfetto__Protos__TracePacket *p, const struct pf_pack_sizes *s,
			       uint8_t *out);
/* v as a varint at out: the byte after it. */
uint8_t *pf_pack__varint(uint8_t *out, uint64_t v);

#endif
