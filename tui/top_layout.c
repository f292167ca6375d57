/* top_layout.c - terminal size -> panel rectangles (top_layout.h). Pure:
 * no ncurses, no globals. */
#include "top_layout.h"

#include <string.h>

#include "sparkline.h"

static struct top_rect rect(int x, int y, int w, int h)
{
	return (struct top_rect){ x, y, w, h };
}

void top_layout__compute_full(int cols, int rows, int ngpus, int metric_rows,
			      struct top_layout *out)
{
	int mid_y, mid_h, nvtx_h = 0, nvtx_y, gpu_rows = 0;

	memset(out, 0, sizeof *out);
	out->cols = cols;
	out->rows = rows;
	if (cols < TOP_MIN_COLS || rows < TOP_MIN_ROWS) {
		out->too_small = true;
		return;
	}
	/* the metrics' rows only where the rest keeps its minimum */
	out->metric_rows = metric_rows > 0 && rows >= TOP_MIN_ROWS + metric_rows ? metric_rows : 0;
	mid_y = TOP_HEADER_ROWS + TOP_RATES_ROWS + out->metric_rows;
	out->header = rect(0, 0, cols, TOP_HEADER_ROWS);
	out->rates = rect(0, TOP_HEADER_ROWS, cols, TOP_RATES_ROWS + out->metric_rows);
	out->footer = rect(0, rows - 1, cols, 1);
	/* one GPU is the header's line already; several get a row each, as
	 * many as leave the kernel table its rows */
	if (ngpus > 1) {
		gpu_rows = ngpus < TOP_GPU_MAX_ROWS ? ngpus : TOP_GPU_MAX_ROWS;
		if (rows - 1 - mid_y - (gpu_rows + 1) < TOP_KERNEL_MIN_ROWS)
			gpu_rows = rows - 1 - mid_y - TOP_KERNEL_MIN_ROWS - 1;
		if (gpu_rows > 0) {
			out->gpus = rect(0, mid_y, cols, gpu_rows + 1);
			out->gpu_rows = gpu_rows;
			mid_y += gpu_rows + 1;
		}
	}
	mid_h = rows - 1 - mid_y;
	if (mid_h >= TOP_NVTX_MIN_MID) {
		/* two fifths for NVTX; stacked panels need a title and three
		 * rows each */
		nvtx_h = mid_h * 2 / 5;
		if (cols < TOP_WIDE_COLS && nvtx_h < 8)
			nvtx_h = 8;
		if (mid_h - nvtx_h < TOP_KERNEL_MIN_ROWS)
			nvtx_h = mid_h - TOP_KERNEL_MIN_ROWS;
	}
	out->kernels = rect(0, mid_y, cols, mid_h - nvtx_h);
	out->kernel_rows = out->kernels.h - 2;
	nvtx_y = mid_y + out->kernels.h;
	if (nvtx_h > 0 && cols >= TOP_WIDE_COLS) {
		out->stacks = rect(0, nvtx_y, cols / 2, nvtx_h);
		out->ranges = rect(cols / 2, nvtx_y, cols - cols / 2, nvtx_h);
	} else if (nvtx_h > 0) {
		out->stacks = rect(0, nvtx_y, cols, nvtx_h / 2);
		out->ranges = rect(0, nvtx_y + nvtx_h / 2, cols, nvtx_h - nvtx_h / 2);
	}
	out->spark_x = TOP_RATE_LABEL_COLS;
	out->spark_w = cols - TOP_RATE_LABEL_COLS - 1;
	if (out->spark_w > SPARK_RING_LEN)
		out->spark_w = SPARK_RING_LEN;
}

void top_layout__compute(int cols, int rows, struct top_layout *out)
{
	top_layout__compute_full(cols, rows, 0, 0, out);
}

void top_layout__compute_gpus(int cols, int rows, int ngpus, struct top_layout *out)
{
	top_layout__compute_full(cols, rows, ngpus, 0, out);
}

void top_layout__compute_metrics(int cols, int rows, int metric_rows, struct top_layout *out)
{
	top_layout__compute_full(cols, rows, 0, metric_rows, out);
}
