/* pf_sequence.h - one Perfetto packet sequence written to a file: framing,
 * interned strings and incremental timestamps.
 *
 * Framing: the file is a Trace message, whose only field is the repeated
 * TracePacket packet = 1, so each packet goes out as that field (tag, varint
 * length, packed packet) the moment it is made and nothing is held.
 *
 * Timestamps: the sequence defines clock 64 (the first sequence-scoped id)
 * as incremental in a ClockSnapshot, tied to BOOTTIME (Perfetto's default
 * trace clock, which perfkit's nanoseconds stand in for), and makes it the
 * default through TracePacketDefaults.timestamp_clock_id. Each packet's
 * timestamp is then the delta from the previous one, a few bytes instead of
 * nine. ui.perfetto.dev's trace processor reads this; it is what Perfetto's
 * own SDK writes. A packet earlier than its predecessor (a counter level
 * written for the start of a narrowed window, a busy bin known only once the
 * merge has passed it) carries an absolute BOOTTIME timestamp instead, which
 * leaves the incremental clock alone.
 *
 * Interning: event names, categories, argument names and repeated argument
 * values go out once per sequence in the InternedData of the first packet
 * that uses them, and by id afterwards (SEQ_NEEDS_INCREMENTAL_STATE). When
 * the table grows past its budget the sequence clears its incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED, a new snapshot) and starts over, so memory
 * stays bounded whatever the capture holds. */
#ifndef REPORT_PF_SEQUENCE_H
#define REPORT_PF_SEQUENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perfetto_subset.pb-c.h"
#include "prof/error.h"

enum pf_intern_kind { PF_EVENT_NAME, PF_CATEGORY, PF_ARG_NAME, PF_ARG_STRING, PF_INTERN__COUNT };

struct pf_intern_entry;

#define PF_LITERAL_SLOTS 64

struct pf_sequence {
	FILE *out;
	uint32_t id;
	uint64_t last_ts_ns;       /* the incremental clock's value */
	struct pf_intern_entry **slots;
	size_t nslots, nentries, bytes;
	uint64_t next_iid[PF_INTERN__COUNT];
	/* the interned entries the next packet carries */
	Perfetto__Protos__InternedData pending;
	size_t cap[PF_INTERN__COUNT];
	uint8_t *obuf;             /* packed packets not written yet */
	size_t out_len, out_cap;
	char **owned;              /* valid UTF-8 strings of the packet being made */
	size_t nowned, cap_owned;
	/* the ids of string literals, by address (pf_sequence__intern_literal) */
	struct pf_literal {
		const char *s;
		enum pf_intern_kind kind;
		uint64_t iid;
	} literals[PF_LITERAL_SLOTS];
	uint64_t generation;       /* how many times the state was cleared */
	struct prof_error *err;
	int rc;                    /* first error; later calls do nothing */
};

/* Start the sequence at start_ns: the snapshot, the defaults. */
int pf_sequence__init(struct pf_sequence *q, FILE *out, uint32_t id, uint64_t start_ns,
		      struct prof_error *err);
void pf_sequence__exit(struct pf_sequence *q);
/* Write what is buffered to the file. Returns q->rc. */
int pf_sequence__flush(struct pf_sequence *q);

/* Call before interning anything for a packet: clears the state first when
 * the table is over its budget. */
void pf_sequence__begin(struct pf_sequence *q);
/* The id of s (a string from the capture, made valid UTF-8 here). */
uint64_t pf_sequence__intern(struct pf_sequence *q, enum pf_intern_kind kind, const char *s);
/* pf_sequence__intern of a string literal, whose address stands for its
 * text for the whole trace: looked up by its address once per clearing of
 * the state, where a string is hashed and compared at every event. */
uint64_t pf_sequence__intern_literal(struct pf_sequence *q, enum pf_intern_kind kind,
				     const char *s);
/* s as valid UTF-8, valid until the packet is written (NULL: out of memory,
 * and q->rc says so). */
char *pf_sequence__text(struct pf_sequence *q, const char *s);
/* Write p: sequence id and flags, the pending interned data, and the
 * timestamp when ts_ns >= 0. Returns q->rc. */
int pf_sequence__write(struct pf_sequence *q, Perfetto__Protos__TracePacket *p, int64_t ts_ns);

#endif
