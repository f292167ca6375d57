/* gpu_metrics_report.c - the rows of `perfkit report --report=gpu_metrics_sum`:
 * the sampled GPU metrics over the whole capture per device, and averaged
 * over the time each kernel name and each NVTX range name ran, with how
 * much of that time the samples saw (gpu_metrics.h). summary.c lists it
 * with the other reports. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_metrics.h"
#include "metric_overlap.h"
#include "gpu_metrics_reports.h"
#include "prof/error.h"

#define HOW_TO_COLLECT "capture with `perfkit run --gpu-metrics` to sample SM activity, the tensor pipe, " \
		       "warps in flight, DRAM and PCIe/NVLink throughput alongside the trace (no kernel replay)"

/* Rows whose samples the kernels or ranges fill less than this share of
 * are estimates, and a note says how many there are. */
#define ESTIMATE_BELOW 0.5

static struct rpt_cell int_cell(int64_t v) { return (struct rpt_cell){ .i = v }; }
static struct rpt_cell real_cell(double v) { return (struct rpt_cell){ .d = v }; }
static struct rpt_cell text_cell(const char *v) { return (struct rpt_cell){ .s = v, .is_null = v == NULL }; }
/* a value the samples do not give: N/A, never 0 */
static struct rpt_cell na_cell(void) { return (struct rpt_cell){ .is_null = true, .s = "N/A" }; }

enum { MAX_FIXED = 6, MAX_COLS = MAX_FIXED + GM_MAX_METRICS + 1 };

/* The metric columns after the fixed ones. */
static int metric_columns(const struct gm_catalog *c, struct rpt_column *cols, int at)
{
	for (int m = 0; m < c->nmetrics; m++) {
		bool clock = c->metrics[m].kind == GM_GPC_CLOCK;
		bool known = c->metrics[m].kind != GM_OTHER;

		cols[at++] = (struct rpt_column){ c->metrics[m].column,
						  known && !clock ? RPT_PERCENT : RPT_REAL, clock ? 0 : 1 };
	}
	return at;
}

static int metric_cells(const struct gm_catalog *c, const struct gm_row *r, struct rpt_cell *cells, int at)
{
	const struct gm_sampler *smp = &c->samplers[r->sampler];

	for (int m = 0; m < c->nmetrics; m++)
		cells[at++] = smp->has[m] && isfinite(r->mean[m]) ? real_cell(r->mean[m]) : na_cell();
	return at;
}

static struct rpt_cell pid_cell(const struct gm_sampler *smp)
{
	return smp->pid_known ? int_cell(prof_pid_of(smp->global_pid)) : text_cell(NULL);
}

/* dropped: the samples the collector counted as lost (PERFKIT_COUNTERS). */
static int device_rows(const struct gm_catalog *c, const struct gm_summary *sum, int64_t dropped,
		       struct rpt_sink *sink)
{
	struct rpt_column cols[MAX_COLS] = {
		{ "Device", RPT_INT, 0 },      { "PID", RPT_INT, 0 },
		{ "Samples", RPT_INT, 0 },     { "Sampled (ns)", RPT_INT, 0 },
		{ "Period (ns)", RPT_INT, 0 },
	};
	int ncols = metric_columns(c, cols, 5), rc;
	char why[192]; /* the dropped-samples note with a 20-digit count */

	rc = sink->begin(sink, "gpu_metrics_devices", "Sampled GPU Metrics per Device (whole capture)", cols, ncols);
	if (rc >= 0 && c->nsamplers == 0)
		rc = rpt_sink__note(sink, &(struct rpt_note){ "no_gpu_metrics", 1,
							      "This capture has no sampled GPU metrics: " HOW_TO_COLLECT "." });
	if (rc >= 0 && c->left_out) {
		snprintf(why, sizeof why, "%d metric descriptions past the first %d metric names are left out",
			 c->left_out, GM_MAX_METRICS);
		rc = rpt_sink__note(sink, &(struct rpt_note){ "metrics_left_out", c->left_out, why });
	}
	if (rc >= 0 && dropped > 0) {
		snprintf(why, sizeof why, "%lld samples were dropped (the sampler fell behind the hardware): the sample "
			 "after each gap stands for the whole gap", (long long)dropped);
		rc = rpt_sink__note(sink, &(struct rpt_note){ "samples_dropped", dropped, why });
	}
	for (int i = 0; rc >= 0 && i < sum->devices.n; i++) {
		const struct gm_row *r = &sum->devices.rows[i];
		const struct gm_sampler *smp = &c->samplers[r->sampler];
		struct rpt_cell cells[MAX_COLS] = {
			int_cell(smp->device), pid_cell(smp), int_cell(r->samples), int_cell(r->covered_ns),
			r->samples ? int_cell(r->covered_ns / r->samples) : na_cell(),
		};

		metric_cells(c, r, cells, 5);
		rc = sink->row(sink, cells);
	}
	return rc < 0 ? rc : sink->end(sink);
}

/* Kernels or ranges by name: the table `name` titled `title`, whose last
 * column names them. */
static int name_rows(const struct gm_catalog *c, const struct gm_table *t, const char *name, const char *title,
		     const char *subject, enum rpt_type subject_type, int64_t unsampled, struct rpt_sink *sink)
{
	struct rpt_column cols[MAX_COLS] = {
		{ "Device", RPT_INT, 0 },       { "PID", RPT_INT, 0 },
		{ "Time (ns)", RPT_INT, 0 },    { "Instances", RPT_INT, 0 },
		{ "Sampled (%)", RPT_PERCENT, 1 }, { "Coverage (%)", RPT_PERCENT, 1 },
	};
	int ncols = metric_columns(c, cols, MAX_FIXED), estimates = 0, rc;
	char why[160];

	cols[ncols++] = (struct rpt_column){ subject, subject_type, 0 };
	rc = sink->begin(sink, name, title, cols, ncols);
	for (int i = 0; i < t->n; i++)
		estimates += t->rows[i].covered_ns > 0 && mo_fraction(t->rows[i].covered_ns, t->rows[i].touched_ns) < ESTIMATE_BELOW;
	if (rc >= 0 && c->nsamplers) {
		snprintf(why, sizeof why, "%d rows fill less than half of the sample periods they fall in "
			 "(Coverage): their averages mix in what ran around them", estimates);
		rc = rpt_sink__note(sink, &(struct rpt_note){ "estimated_rows", estimates, why });
	}
	if (rc >= 0 && unsampled > 0) {
		snprintf(why, sizeof why, "%lld kernels ran on devices that no sampler of their process watched",
			 (long long)unsampled);
		rc = rpt_sink__note(sink, &(struct rpt_note){ "unsampled_kernels", unsampled, why });
	}
	for (int i = 0; rc >= 0 && i < t->n; i++) {
		const struct gm_row *r = &t->rows[i];
		const struct gm_sampler *smp = &c->samplers[r->sampler];
		struct rpt_cell cells[MAX_COLS] = {
			int_cell(smp->device), pid_cell(smp), int_cell(r->time_ns), int_cell(r->instances),
			real_cell(100 * mo_fraction(r->covered_ns, r->time_ns)),
			r->covered_ns > 0 ? real_cell(100 * mo_fraction(r->covered_ns, r->touched_ns)) : na_cell(),
		};
		int at = metric_cells(c, r, cells, MAX_FIXED);

		cells[at] = text_cell(r->name);
		rc = sink->row(sink, cells);
	}
	return rc < 0 ? rc : sink->end(sink);
}

int summary__gpu_metrics_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	const struct gm_options o = { .from_ns = INT64_MIN, .to_ns = INT64_MAX, .kernels = true, .ranges = true };
	struct gm_catalog c;
	struct gm_summary sum = { 0 };
	int rc = gm_catalog__load(s, &c, err);

	if (rc)
		return rc;
	rc = gm_summary__compute(s, &c, &o, &sum, err);
	if (rc) {
		gm_catalog__exit(&c);
		return rc;
	}
	rc = device_rows(&c, &sum, prof_store__counter(s, PROF_COUNTER_GPU_METRIC_SAMPLES_DROPPED), sink);
	if (rc >= 0)
		rc = name_rows(&c, &sum.kernels, "gpu_metrics_sum", "Sampled GPU Metrics by Kernel", "Name",
			       RPT_SYMBOL, sum.unsampled_kernels, sink);
	if (rc >= 0)
		rc = name_rows(&c, &sum.ranges, "gpu_metrics_nvtx", "Sampled GPU Metrics by NVTX Range", "Range",
			       RPT_TEXT, 0, sink);
	gm_summary__exit(&sum);
	gm_catalog__exit(&c);
	if (rc < 0)
		return prof_error__set(err, rc, rc == PROF_E_NOMEM ? "out of memory" : "cannot write the report output");
	return 0;
}

static const struct rpt_report reports[] = {
	{ "gpu_metrics_sum", "Sampled GPU Metrics by Kernel and NVTX Range", summary__gpu_metrics_sum },
};

const struct rpt_report *gpu_metrics__reports(size_t *n)
{
	*n = sizeof reports / sizeof reports[0];
	return reports;
}
