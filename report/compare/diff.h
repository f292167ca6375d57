/* diff.h - `perfkit diff`: what changed between two captures.
 *
 * A capture is first summarised into a diff_profile (diff_profile.c): one
 * entry per kernel (name + launch shape), per NVTX range name and per copy
 * kind (direction + host memory kind), each with its count, total and median
 * duration, plus the capture's totals and identity (program, GPU). The same
 * profile feeds the baseline and the gate, so all three agree on what a key
 * means. Two profiles are then matched entry by entry (diff.c); rows go to a
 * table sink (text, CSV, JSON) or to the HTML page (diff_html.c). */
#ifndef REPORT_DIFF_H
#define REPORT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"

struct rpt_sink;

/* One kernel shape, NVTX range name or copy kind of one capture. */
struct diff_stat {
	char *name;               /* kernel name, range name or copy label */
	int32_t grid[3], block[3]; /* kernels only; 0 elsewhere */
	int32_t copy_kind;        /* copies: enum prof_copy_kind; -1 for memsets and others */
	int64_t count;
	int64_t total_ns;
	int64_t median_ns;
	int64_t bytes;            /* copies: bytes moved; 0 elsewhere */
};

struct diff_section {
	struct diff_stat *v;
	size_t n, cap;
};

enum diff_section_id { DIFF_KERNELS = 0, DIFF_COPIES = 1, DIFF_RANGES = 2, DIFF_NSECTIONS = 3 };

struct diff_profile {
	char *path;
	char *program;        /* command basename; "" when the capture does not say */
	char *gpu;            /* first GPU's name; "" when the capture does not say */
	int64_t gpu_time_ns;  /* summed kernel, copy and memset durations */
	int64_t wall_ns;      /* PERFKIT_META duration_ns, else the capture's time span */
	int64_t kernel_count;
	int64_t alloc_count;  /* GPU memory allocations */
	struct diff_section sec[DIFF_NSECTIONS];
};

/* Summarise an open store. Missing optional tables give empty sections. */
int diff_profile__load(struct diff_profile *p, struct prof_store *s, struct prof_error *err);
/* Open path, summarise it and close it. */
int diff_profile__load_path(struct diff_profile *p, const char *path, struct prof_error *err);
void diff_profile__exit(struct diff_profile *p);
/* Human label of a copy direction ("HtoD", "DtoH", ...). */
const char *diff_copy_kind__name(int32_t copy_kind);

/* One matched entry: base or new is NULL for an added or removed entry. */
struct diff_row {
	const struct diff_stat *base, *new;
	int64_t delta_ns; /* new total - base total */
};

struct diff_result {
	const struct diff_profile *base, *new;
	struct diff_row *rows[DIFF_NSECTIONS]; /* sorted by |delta_ns|, largest first */
	size_t nrows[DIFF_NSECTIONS];
};

int diff__compute(struct diff_result *r, const struct diff_profile *base,
		  const struct diff_profile *new);
void diff__exit(struct diff_result *r);

/* "NEW is 1.8x faster on the GPU: flash_fwd −41 ms, ..." (raw capture names:
 * the caller's sink escapes them). */
int diff__verdict(const struct diff_result *r, char *buf, size_t cap);
/* Emit the verdict, totals and the three sections as reports on sink. */
int diff__report(const struct diff_result *r, struct rpt_sink *sink);
/* A self-contained HTML page holding the same tables. */
int diff__write_html(const struct diff_result *r, FILE *out);

/* "41 ms", "1.25 s", "350 us": a duration for messages. */
void diff_format_ns(char *buf, size_t cap, int64_t ns);

#endif
