/* pf_tracks.h - the tracks of a Perfetto trace and the slices open on them.
 *
 * TrackEvent has no complete events: a slice is a BEGIN and an END on its
 * track, and a track's slices must nest. The merge hands out events by
 * start, so each slice's END waits in a heap ordered by end time (ties: the
 * later-begun first, so inner slices close first) and goes out before any
 * event that starts after it; the sequence's timestamps then only grow.
 * Memory holds the slices still open, not the events.
 *
 * A slice that would overlap the innermost open slice of its track without
 * nesting in it (start/end NVTX ranges, broken captures) goes to a child
 * track of its own, "overlapping slices", created the first time it is
 * needed, so every slice keeps its true times. */
#ifndef REPORT_PF_TRACKS_H
#define REPORT_PF_TRACKS_H

#include <stddef.h>
#include <stdint.h>

#include "pf_sequence.h"

enum pf_track_kind { PF_TRACK_PROCESS, PF_TRACK_THREAD, PF_TRACK_STREAM, PF_TRACK_GPU,
		     PF_TRACK_GPU_MEMORY, PF_TRACK_GPU_BUSY, PF_TRACK_CAPTURE, PF_TRACK_LANE };

struct pf_track {
	enum pf_track_kind kind;
	int64_t key[3];
	uint64_t uuid;
	int64_t *open_end_ns;  /* the open slices' ends, outermost first */
	size_t nopen, cap;
	size_t lane;           /* index of its overlap track; 0: none yet */
};

struct pf_pending_end {
	int64_t end_ns;
	uint64_t order;        /* begin order: the later-begun closes first */
	size_t track;
};

struct pf_tracks {
	struct pf_sequence *q;
	struct pf_track *v;    /* v[0] is unused: index 0 means none */
	size_t n, cap;
	size_t *slots;         /* open addressing over v by kind and key */
	size_t nslots;
	struct pf_pending_end *heap;
	size_t nheap, cap_heap;
	uint64_t begun;
};

int pf_tracks__init(struct pf_tracks *t, struct pf_sequence *q);
void pf_tracks__exit(struct pf_tracks *t);

/* Register a track; *uuid is its id for the caller's TrackDescriptor.
 * Returns 1 for a new track, 0 for one registered before (nothing to
 * describe), or a negative PROF_E_* code. */
int pf_tracks__add(struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b, int64_t c,
		   uint64_t *uuid);
/* The index of a registered track, 0 when there is none. */
size_t pf_tracks__find(struct pf_tracks *t, enum pf_track_kind kind, int64_t a, int64_t b,
		       int64_t c);
uint64_t pf_tracks__uuid(const struct pf_tracks *t, size_t track);

/* Write the END of every open slice that ends by t_ns. */
int pf_tracks__close_until(struct pf_tracks *t, int64_t t_ns);
int pf_tracks__close_all(struct pf_tracks *t);
/* Open [start, end) on track (or on its overlap track): *uuid is the track
 * the caller writes the BEGIN on, at start, before anything else. */
int pf_tracks__open(struct pf_tracks *t, size_t track, int64_t start_ns, int64_t end_ns,
		    uint64_t *uuid);

#endif
