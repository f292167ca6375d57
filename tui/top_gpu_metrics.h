/* top_gpu_metrics.h - the sampled GPU metrics perfkit top shows live when
 * the capture has them (`perfkit run --gpu-metrics`): SMs Active, and where
 * the GPU gives them Tensor Active and DRAM read + write, per second of
 * capture time with their history.
 *
 * Rows of GPU_METRICS come one metric at a time. A sample's period runs
 * from its sampler's (typeId's) previous timestamp to its own, and each
 * value weighs with its period, so a second shows the counter's mean over
 * the time the samples cover (several GPUs: their mean). Pure: fed by the
 * refresh step, read by the draw step, tested without a terminal. */
#ifndef TUI_TOP_GPU_METRICS_H
#define TUI_TOP_GPU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sparkline.h"

/* The metrics top reads. */
enum top_gm {
	TOP_GM_SM_ACTIVE,
	TOP_GM_TENSOR_ACTIVE,
	TOP_GM_DRAM_READ,
	TOP_GM_DRAM_WRITE,
	TOP_GM__COUNT,
};

/* The rows the rates panel gives them, in order, each when present. */
enum top_gm_row { TOP_GM_ROW_SM, TOP_GM_ROW_TENSOR, TOP_GM_ROW_DRAM, TOP_GM_ROW__COUNT };

#define TOP_GM_SAMPLERS 16 /* samplers (GPUs) tracked; more are left out */

struct top_gm_sampler {
	int64_t type_id;
	int64_t prev_ns, cur_ns; /* the last two timestamps seen; 0: none */
};

struct top_gpu_metrics {
	bool has[TOP_GM__COUNT];
	/* per second: sum of value x 100 x period (ns), and of the periods */
	struct spark_ring weighted[TOP_GM__COUNT], covered[TOP_GM__COUNT];
	struct top_gm_sampler sampler[TOP_GM_SAMPLERS];
	int nsamplers;
};

void top_gpu_metrics__init(struct top_gpu_metrics *g);
/* The metric a name of TARGET_INFO_GPU_METRICS is, or -1 for one top does
 * not show. */
int top_gpu_metrics__kind(const char *metric_name);
/* One GPU_METRICS row: metric kind of sampler type_id, sampled at ts_ns,
 * in the second numbered bucket. */
void top_gpu_metrics__add(struct top_gpu_metrics *g, int64_t ts_ns, int64_t type_id, int kind, double value,
			  int64_t bucket);

/* How many rows the rates panel needs for them (0: the capture has none). */
int top_gpu_metrics__rows(const struct top_gpu_metrics *g);
/* Row i (0 .. rows - 1): its label ("SM active") and its value in the
 * second numbered bucket ("63.2%", or "N/A" when no sample covers it). */
void top_gpu_metrics__row(const struct top_gpu_metrics *g, int row, int64_t bucket, char *label, size_t label_cap,
			  char *value, size_t value_cap);
/* Row i's history over n seconds ending at last, for a sparkline (percent
 * x 100, 0 where no sample covers a second); returns the scale to draw it
 * against (100%), so a flat 20% reads as 20%, not as a full bar. */
int64_t top_gpu_metrics__window(const struct top_gpu_metrics *g, int row, int64_t last, int n, int64_t *out);

#endif
