/* html_gpu_metrics.c - the sampled GPU metrics in the HTML report (see
 * html_plots.h): each sampler's metrics over time, averaged per time bin of
 * the plots' axis (each sample weighed by the time its period shares with
 * the bin: metric_overlap.h), in two plots under the GPU utilisation plot,
 * the SM side and the memory and link side; and the section holding
 * gpu_metrics_sum's tables. The series are metrics perfkit knows, titled
 * with its own labels: no string of the capture reaches a data file or a
 * script. */
#include "html_gpu_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_metrics/gpu_metrics.h"
#include "analysis/gpu_metrics/metric_overlap.h"
#include "plots_gnuplot.h"
#include "prof/tables.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "prof/error.h"

#define MAX_PLOTTED_SAMPLERS 8

#define HOW_TO_COLLECT "capture with perfkit run --gpu-metrics to get them"

struct metric_plot {
	const char *data, *svg, *script, *what;
	const enum gm_kind *kinds;
	int nkinds;
};

static const enum gm_kind sm_kinds[] = { GM_SM_ACTIVE, GM_SM_ISSUE, GM_TENSOR_ACTIVE, GM_WARPS_IN_FLIGHT };
static const enum gm_kind memory_kinds[] = { GM_DRAM_READ, GM_DRAM_WRITE, GM_PCIE_RX,
					     GM_PCIE_TX,   GM_NVLINK_RX,  GM_NVLINK_TX };

#define METRIC_SCRIPT(NAME)                                    \
	GNUPLOT_SVG_TERMINAL(960, 310)                         \
	"set output '" NAME ".svg'\n"                          \
	"set datafile missing '?'\n"                           \
	"set key autotitle columnheader below horizontal\n"     \
	/* the utilisation plot's x range, so the two line up */ \
	"stats '" NAME ".dat' using 1 nooutput\n"              \
	"set xrange [STATS_min:STATS_max]\n"                   \
	"set xlabel \"time since capture start (ms)\"\n"         \
	"set ylabel 'throughput (% of peak)'\n"                \
	"set yrange [0:105]\n"                                 \
	"set grid ytics\n"                                     \
	"plot for [i=2:*] '" NAME ".dat' using 1:i with steps lw 1.5\n"

static const struct metric_plot plots[] = {
	{ "sm.dat", "sm.svg", METRIC_SCRIPT("sm"), "the SMs", sm_kinds, sizeof sm_kinds / sizeof sm_kinds[0] },
	{ "memory.dat", "memory.svg", METRIC_SCRIPT("memory"), "memory and links", memory_kinds,
	  sizeof memory_kinds / sizeof memory_kinds[0] },
};

/* The plot's columns the sampler gives, in the plot's order; their count. */
static int plot_columns(const struct gm_catalog *c, const struct gm_sampler *smp, const struct metric_plot *mp,
			int *cols)
{
	int n = 0;

	for (int i = 0; i < mp->nkinds; i++) {
		int col = gm_catalog__column(c, mp->kinds[i]);

		if (col >= 0 && smp->has[col])
			cols[n++] = col;
	}
	return n;
}

static int write_series(const char *dir, const struct metric_plot *mp, const struct time_axis *a,
			const struct mo_sweep *sw, const int *cols, int ncols, const struct gm_catalog *c,
			struct prof_error *err)
{
	FILE *f = plots_data__open(dir, mp->data, err);

	if (!f)
		return err->code;
	/* series titles from the header: perfkit's own labels */
	fputs("time_ms", f);
	for (int i = 0; i < ncols; i++)
		fprintf(f, " \"%s\"", gm_kind__label((enum gm_kind)c->metrics[cols[i]].kind));
	fputc('\n', f);
	for (int b = 0; b <= PLOT_BINS; b++) {
		/* the last row repeats the last bin so its step is drawn */
		int bb = b < PLOT_BINS ? b : PLOT_BINS - 1;

		if ((int64_t)bb * a->bin_ns >= a->span_ns)
			break;
		fprintf(f, "%.6f", time_axis__bin_ms(a, b));
		for (int i = 0; i < ncols; i++) {
			double v = mo_sweep__mean(sw, bb, cols[i]);

			if (isfinite(v))
				fprintf(f, " %.3f", v);
			else
				fputs(" ?", f);
		}
		fputc('\n', f);
	}
	return plots_data__close(f, err);
}

/* "GPU 0 (process 1234): SM Active, SM Issue and Tensor Active ..." */
static void caption(char *buf, size_t cap, const struct gm_catalog *c, const struct gm_sampler *smp,
		    const struct metric_plot *mp, const int *cols, int ncols)
{
	size_t used = 0;

	used += (size_t)snprintf(buf, cap, "GPU %d", smp->device);
	if (smp->pid_known && used < cap)
		used += (size_t)snprintf(buf + used, cap - used, " (process %" PRId64 ")",
					 (int64_t)prof_pid_of(smp->global_pid));
	if (used < cap)
		used += (size_t)snprintf(buf + used, cap - used, ", %s: ", mp->what);
	for (int i = 0; i < ncols && used < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", i == 0 ? "" : i == ncols - 1 ? " and " : ", ",
					 gm_kind__label((enum gm_kind)c->metrics[cols[i]].kind));
	if (used < cap)
		snprintf(buf + used, cap - used, " as the GPU sampled them (%% of peak), averaged over each "
			 "time bin; gaps where no sample covers a bin.");
}

/* One sampler's samples into bins of the axis, then its plots. */
static int plot_sampler(struct html_page *p, const struct gm_catalog *c, int sampler, const struct mo_interval *bins,
			const struct time_axis *a, struct prof_error *err)
{
	const struct gm_sampler *smp = &c->samplers[sampler];
	struct gm_reader *r = NULL;
	struct mo_sweep sw;
	const double *values;
	int64_t from, to;
	char dir[4096], name[32], text[512];
	int rc;

	rc = mo_sweep__init(&sw, bins, PLOT_BINS, PLOT_BINS, c->nmetrics);
	if (rc)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = gm_reader__open(html_page__store(p), c, sampler, a->base_ns,
			       time_axis__bin_start_ns(a, PLOT_BINS), &r, err);
	while (rc >= 0 && (rc = gm_reader__next(r, &from, &to, &values, err)) > 0)
		if (mo_sweep__add(&sw, from, to, values))
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	gm_reader__close(r);
	if (rc < 0)
		goto out;
	if (sw.samples == 0) {
		snprintf(text, sizeof text, "GPU %d has no samples in the capture's time span.", smp->device);
		html_page__note(p, text);
		goto out;
	}
	snprintf(name, sizeof name, "gpu-metrics-%d", sampler);
	rc = html_page__mkdir(p, name, dir, sizeof dir, err);
	for (size_t i = 0; rc == 0 && i < sizeof plots / sizeof plots[0]; i++) {
		int cols[GM_MAX_METRICS], ncols = plot_columns(c, smp, &plots[i], cols);
		char script[32];

		if (!ncols)
			continue;
		snprintf(script, sizeof script, "%.*s.gp", (int)(strlen(plots[i].data) - 4), plots[i].data);
		rc = write_series(dir, &plots[i], a, &sw, cols, ncols, c, err);
		if (rc == 0)
			rc = gnuplot__write_file(dir, script, plots[i].script, err);
		if (rc == 0) {
			caption(text, sizeof text, c, smp, &plots[i], cols, ncols);
			html_page__plot(p, dir, script, plots[i].svg, text);
		}
	}
out:
	mo_sweep__exit(&sw);
	return rc < 0 ? rc : 0;
}

int html_gpu_metrics__plots(struct html_page *p, const struct time_axis *a, struct prof_error *err)
{
	struct mo_interval bins[PLOT_BINS];
	struct gm_catalog c;
	int rc;

	fputs("<h3>Sampled GPU metrics</h3>\n", html_page__out(p));
	rc = gm_catalog__load(html_page__store(p), &c, err);
	if (rc)
		return rc;
	if (c.nsamplers == 0 || a->span_ns <= 0) {
		html_page__note(p, c.nsamplers ? "No time span to plot the sampled GPU metrics over."
					       : "This capture has no sampled GPU metrics (SM activity, tensor "
						 "pipe, warps in flight, DRAM and PCIe/NVLink throughput over "
						 "time): " HOW_TO_COLLECT ".");
		gm_catalog__exit(&c);
		return 0;
	}
	for (int b = 0; b < PLOT_BINS; b++)
		bins[b] = (struct mo_interval){ time_axis__bin_start_ns(a, b),
						time_axis__bin_start_ns(a, b + 1), b };
	for (int i = 0; rc == 0 && i < c.nsamplers && i < MAX_PLOTTED_SAMPLERS; i++)
		rc = plot_sampler(p, &c, i, bins, a, err);
	if (rc == 0 && c.nsamplers > MAX_PLOTTED_SAMPLERS) {
		char text[128];

		snprintf(text, sizeof text, "%d more samplers are not plotted; their averages are in the "
			 "Sampled GPU Metrics section.", c.nsamplers - MAX_PLOTTED_SAMPLERS);
		html_page__note(p, text);
	}
	gm_catalog__exit(&c);
	return rc;
}

bool html_gpu_metrics__applies(struct prof_store *s)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	bool any = false;

	if (prof_cursor__open(s, "SELECT 1 FROM " PROF_T_GPU_METRICS " LIMIT 1", &c, &err))
		return false;
	any = prof_cursor__next(c, &err) > 0;
	prof_cursor__close(c);
	return any;
}

int html_gpu_metrics__section(struct html_page *p, struct prof_error *err)
{
	struct prof_error why = { 0 };

	(void)err;
	fputs("<p>The GPU's sampled counters averaged over the whole capture per device, and over the "
	      "time each kernel name and NVTX range name ran: each sample weighs with the time its "
	      "period shares with them. <em>Sampled</em> is the share of their time the samples "
	      "cover; <em>Coverage</em> the share of those samples' periods they filled (below 50% "
	      "the average mixes in what ran around them: a kernel shorter than a sample period is "
	      "an estimate). N/A: the GPU did not give that metric. The same rows: "
	      "<code>perfkit report --report=gpu_metrics_sum FILE</code>.</p>\n",
	      html_page__out(p));
	if (registry__run("gpu_metrics_sum", html_page__store(p), html_page__tables(p), &why) < 0) {
		char msg[PROF_ERROR_MSG_MAX + 64];

		snprintf(msg, sizeof msg, "The sampled GPU metrics could not be read: %s", why.msg);
		html_page__note(p, msg);
	}
	return 0;
}
