/* top_layout.h - where each panel of perfkit top goes, as a pure function of
 * the terminal's size (tested without a terminal: tests/unit/test_tui_layout.c).
 *
 *	+------------------------------------------------+
 *	| header: program, pid, elapsed, GPU (3 rows)     |
 *	| rates: kernels/s, copies/s, bytes/s + history   |
 *	| GPUs: one row per GPU (several GPUs only)       |
 *	|   (+ sampled GPU metrics: SM active, ...)        |
 *	| kernels: the top kernels table (the rest)       |
 *	| NVTX stacks | busiest NVTX ranges (side by side |
 *	|             |  when wide, else one above other) |
 *	| footer: keys, filter prompt (1 row)             |
 *	+------------------------------------------------+
 *
 * A short terminal drops the sampled GPU metrics' rows first, then the NVTX
 * panels before the kernel table shrinks below a few rows, and shows fewer
 * GPU rows (the header's GPU line stays); below TOP_MIN_COLS x TOP_MIN_ROWS
 * nothing fits and the screen says so. */
#ifndef TUI_TOP_LAYOUT_H
#define TUI_TOP_LAYOUT_H

#include <stdbool.h>

#define TOP_MIN_COLS 60
#define TOP_MIN_ROWS 16
#define TOP_HEADER_ROWS 3
#define TOP_RATES_ROWS 4       /* title + kernels/s, copies/s, bytes/s */
#define TOP_RATE_LABEL_COLS 24 /* "copies/s        12.3k " before the sparkline */
#define TOP_WIDE_COLS 120      /* NVTX panels side by side from here */
#define TOP_NVTX_MIN_MID 14    /* rows between rates and footer needed for NVTX */
#define TOP_KERNEL_MIN_ROWS 6  /* kernel panel rows kept when NVTX is shown */
#define TOP_GPU_MAX_ROWS 8     /* GPU rows shown at most */

struct top_rect {
	int x, y, w, h; /* h == 0: not shown */
};

struct top_layout {
	bool too_small;
	int cols, rows;
	struct top_rect header, rates, gpus, kernels, stacks, ranges, footer;
	int spark_x, spark_w; /* sparkline columns inside the rates panel */
	int kernel_rows;      /* kernel table body rows (under title and column names) */
	int gpu_rows;         /* GPU rows shown (under the panel's title) */
	int metric_rows;      /* rates panel rows of the sampled GPU metrics, under the rates */
};

/* The layout for a capture of one GPU: no GPU panel. */
void top_layout__compute(int cols, int rows, struct top_layout *out);
/* With a GPU panel of one row per GPU when there are several (up to
 * TOP_GPU_MAX_ROWS, and only what leaves the kernel table its rows). */
void top_layout__compute_gpus(int cols, int rows, int ngpus, struct top_layout *out);
/* The same with metric_rows rows of sampled GPU metrics under the rates
 * (out->metric_rows says how many fit). */
void top_layout__compute_metrics(int cols, int rows, int metric_rows, struct top_layout *out);
/* Both: GPU rows and sampled metrics' rows (what top draws). */
void top_layout__compute_full(int cols, int rows, int ngpus, int metric_rows,
			      struct top_layout *out);

#endif
