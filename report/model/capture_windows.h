/* capture_windows.h - what a capture's windows (PERFKIT_CAPTURE_WINDOWS:
 * perfkit run --capture-range, --delay, --duration, perfkit start/stop)
 * mean to a reader: the stretches of time in which it recorded
 * (stretches.c), which every measure of idle time, span and steps reads so
 * that time outside every window is neither idle nor part of a span; and
 * --window=K, the reading narrowed to one window (window_choice.c). */
#ifndef REPORT_MODEL_CAPTURE_WINDOWS_H
#define REPORT_MODEL_CAPTURE_WINDOWS_H

#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

struct sum_stretch {
	int64_t start_ns, end_ns; /* [start, end) on the capture's clock */
};

/* The capture's stretches inside some [lo, hi): sorted, disjoint. */
struct sum_stretches {
	struct sum_stretch *v;
	int n;
	int windows; /* the capture windows they came from; 0: the capture has
		      * none, and [lo, hi) is one stretch */
};

/* The stretches of the capture the store shows (--rank's processes,
 * --window's window) that overlap [lo, hi), clipped to it: its capture
 * windows, those of every process merged into one union, a window still
 * open at the end (end NULL: its process was killed inside it) ending
 * with the capture's last record; without windows (older captures, nsys
 * exports) [lo, hi) whole, so that every reader measures as it did
 * before. Free with sum_stretches__exit. */
int sum_stretches__load(struct prof_store *s, int64_t lo, int64_t hi, struct sum_stretches *st,
			struct prof_error *err);
/* The time of [a, b) inside the stretches. */
int64_t sum_stretches__covered(const struct sum_stretches *st, int64_t a, int64_t b);
/* The index of the first stretch that ends after t (st->n when none
 * does): the one holding t where its start is at or before t. */
int sum_stretches__first_ending_after(const struct sum_stretches *st, int64_t t);
void sum_stretches__exit(struct sum_stretches *st);

/* `--window=K`: from here on every report, diagnosis and export of s
 * reads only window K, the K-th of each process in start order (in a job
 * whose ranks open their windows together, the same window of each):
 * those windows are the capture's stretches, and the rows read are those
 * that start from the first of them up to the next window of the capture
 * (the GPU work a window launched runs on past its close). PROF_E_USAGE
 * with a one-line message when the capture has no windows or fewer than K
 * (window_choice.c; reached by cli/ through summary/summary.h, as
 * summary__select_ranks is). */
int summary__select_window(struct prof_store *s, int k, struct prof_error *err);

#endif
