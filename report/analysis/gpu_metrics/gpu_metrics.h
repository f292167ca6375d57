/* gpu_metrics.h - the sampled GPU metrics of a capture (GPU_METRICS and
 * TARGET_INFO_GPU_METRICS, written by `perfkit run --gpu-metrics` or found
 * in an nsys export with GPU metrics): which samplers and metrics it holds,
 * their samples in time order, and each metric averaged over the time the
 * kernels and NVTX ranges of a name ran (metric_overlap.h does the
 * arithmetic).
 *
 * A sampler is one typeId: the samples of one device (typeId & 0xFF) taken
 * by one process (TARGET_INFO_GPU_METRICS.globalPid; an nsys export has no
 * such column, and its samplers watch the device for every process). A
 * kernel counts against the samplers of its deviceId in its process, an
 * NVTX range against the samplers of its thread's process. A metric a
 * sampler did not give is NaN (shown N/A), never 0. */
#ifndef REPORT_GPU_METRICS_H
#define REPORT_GPU_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* The metrics perfkit knows by nsys's names, in the order reports show them. */
enum gm_kind {
	GM_SM_ACTIVE,
	GM_SM_ISSUE,
	GM_TENSOR_ACTIVE,
	GM_WARPS_IN_FLIGHT,
	GM_UNALLOC_WARPS_ACTIVE_SMS,
	GM_UNALLOC_WARPS_IDLE_SMS,
	GM_DRAM_READ,
	GM_DRAM_WRITE,
	GM_PCIE_RX,
	GM_PCIE_TX,
	GM_NVLINK_RX,
	GM_NVLINK_TX,
	GM_GR_ACTIVE,
	GM_GPC_CLOCK,
	GM__KNOWN,
	GM_OTHER = -1,
};

/* nsys's name of a known metric ("SMs Active [Throughput %]"), and the
 * short label reports and plots use ("SM Active"). */
const char *gm_kind__name(enum gm_kind k);
const char *gm_kind__label(enum gm_kind k);
/* The kind a metric name is (ASCII case ignored), or GM_OTHER. */
enum gm_kind gm_kind__of(const char *name);

/* More metric columns than this (names perfkit does not know) are left out. */
#define GM_MAX_METRICS 32

struct gm_metric {
	int kind;       /* enum gm_kind, or GM_OTHER */
	char *name;     /* the capture's name for it */
	char *column;   /* the report's column: "SM Active (%)", or the name of another */
};

struct gm_sampler {
	int64_t type_id;
	int device;            /* typeId & 0xFF: the deviceId of the process's work */
	int64_t global_pid;    /* the sampling process, when pid_known */
	bool pid_known;
	int nids;
	int64_t *metric_ids;   /* its metricIds ... */
	int *metric_col;       /* ... and the catalogue column each is */
	bool has[GM_MAX_METRICS]; /* the columns it gives */
	bool in_order;         /* its rows are in time order by rowid, as writers write them:
				* read without sorting */
	/* its rows in memory in time order, kept for the connection (a page
	 * reads the samples three times, the diagnosis among them); NULL:
	 * read from the file */
	const struct gm_rows *rows;
};

/* One sampler's rows in time order (rowid order among rows of one time):
 * n of them, each a time, the catalogue column its metric is (-1: none)
 * and its value (NaN: none, or not finite). */
struct gm_rows {
	int64_t *ts;
	int8_t *col;
	double *value;
	size_t n;
};

/* A capture's metric columns (known ones in enum order, then the others by
 * name) and samplers (by typeId). Empty when the capture has none. */
struct gm_catalog {
	struct gm_metric metrics[GM_MAX_METRICS];
	int nmetrics;
	struct gm_sampler *samplers;
	int nsamplers, cap;
	int left_out;          /* metric names past GM_MAX_METRICS */
};

/* The catalogue of s's samplers; the samples of a finished capture read
 * as it is (no --rank or --window) are read into memory once for the
 * connection, up to GM_KEPT_ROWS rows in all, and its readers read them
 * there. */
int gm_catalog__load(struct prof_store *s, struct gm_catalog *c, struct prof_error *err);
#define GM_KEPT_ROWS (2 * 1000 * 1000)
void gm_catalog__exit(struct gm_catalog *c);
/* The column of a known metric, or -1 when the capture has none. */
int gm_catalog__column(const struct gm_catalog *c, enum gm_kind k);

/* ---- samples ----------------------------------------------------------- */

/* One sampler's samples in time order, as periods: each sample's period
 * runs from the sampler's previous timestamp to its own. */
struct gm_reader;

/* The periods of sampler (an index into c->samplers) that overlap
 * [from_ns, to_ns). */
int gm_reader__open(struct prof_store *s, const struct gm_catalog *c, int sampler, int64_t from_ns,
		    int64_t to_ns, struct gm_reader **out, struct prof_error *err);
/* The next period: 1 (values: one per catalogue column, NaN where the
 * sample has none, valid until the next call), 0 at the end, < 0 error. */
int gm_reader__next(struct gm_reader *r, int64_t *from_ns, int64_t *to_ns, const double **values,
		    struct prof_error *err);
void gm_reader__close(struct gm_reader *r);

/* ---- averages by name -------------------------------------------------- */

/* One row: a sampler over the whole window (name NULL), or the kernels or
 * ranges of one name against one sampler. */
struct gm_row {
	int sampler;
	char *name;
	int64_t instances;
	int64_t time_ns;       /* the union of the instances (at once counts once) */
	int64_t covered_ns;    /* of that, the time sample periods overlap */
	int64_t touched_ns;    /* the length of those periods (metric_overlap.h) */
	int64_t samples;       /* periods that overlap it */
	int64_t max_blocks;    /* kernels: the largest grid launched (blocks) */
	double *mean;          /* per catalogue column; NaN: no value */
};

struct gm_table {
	struct gm_row *rows;
	int n, cap;
};

/* What one pass over each sampler's samples computes. */
struct gm_options {
	int64_t from_ns, to_ns;  /* kernels and ranges that start inside; periods that overlap */
	bool kernels, ranges;    /* rows per kernel name, per NVTX range name */
	/* called with every period of every sampler, in time order per sampler */
	int (*on_sample)(void *arg, int sampler, int64_t from_ns, int64_t to_ns, const double *values,
			 struct prof_error *err);
	void *arg;
};

struct gm_summary {
	int nmetrics;
	struct gm_table devices;  /* one row per sampler */
	struct gm_table kernels;  /* by time, longest first */
	struct gm_table ranges;
	int64_t unsampled_kernels; /* kernels on devices no sampler of their process watched */
};

int gm_summary__compute(struct prof_store *s, const struct gm_catalog *c, const struct gm_options *o,
			struct gm_summary *out, struct prof_error *err);
void gm_summary__exit(struct gm_summary *sum);

#endif
