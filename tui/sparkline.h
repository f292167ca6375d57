/* sparkline.h - rate history for perfkit top: a ring of fixed-width time
 * buckets (events are added by their capture timestamp, not when they were
 * read), and its rendering as a row of bar glyphs.
 *
 * Memory is fixed: the ring forgets buckets older than SPARK_RING_LEN. */
#ifndef TUI_SPARKLINE_H
#define TUI_SPARKLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPARK_RING_LEN 256

struct spark_ring {
	bool started;
	int64_t head;                 /* absolute bucket number of the newest slot */
	int64_t v[SPARK_RING_LEN];    /* per-bucket sums (events or bytes) */
};

void spark_ring__init(struct spark_ring *r);
/* Add value to the bucket numbered bucket (time / bucket width). A bucket
 * past the head moves the head on (the buckets between become 0); one that
 * fell out of the ring is ignored. */
void spark_ring__add(struct spark_ring *r, int64_t bucket, int64_t value);
/* The sum of one bucket; 0 outside the ring or past the head. */
int64_t spark_ring__get(const struct spark_ring *r, int64_t bucket);
/* out[i] = the bucket last - n + 1 + i, for i in [0, n). */
void spark_ring__window(const struct spark_ring *r, int64_t last, int n, int64_t *out);

/* n values as n glyphs scaled to their maximum: a blank for 0, else one of
 * eight bar heights (UTF-8 block elements, or ASCII when utf8 is false).
 * Returns the bytes written (NUL-terminated; stops early when cap is short). */
size_t sparkline__render(const int64_t *v, int n, bool utf8, char *out, size_t cap);
/* The same against a fixed scale: max is the full bar (a share of 100%
 * reads as itself, however flat the history); values above it are full. */
size_t sparkline__render_max(const int64_t *v, int n, int64_t max, bool utf8, char *out, size_t cap);

#endif
