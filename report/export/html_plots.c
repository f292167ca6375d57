/* html_plots.c - the plots of the HTML report: GPU utilisation over time
 * (the sampled GPU metrics under it, html_gpu_metrics.c), kernel time by
 * name, device memory over time, copy size vs bandwidth.
 *
 * Each plot streams its rows once into fixed-size bins (time bins, size
 * buckets, the top kernels), writes them as a gnuplot data file and uses a
 * constant script. Nothing from the capture is put in a script: series
 * titles come from the data files' header line, and the kernel bars are
 * the page's own SVG, their names text in it. The plots over time cover
 * the loop the page's diagnosis found. */
#include "html_gpu_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "busy_tape.h"
#include "export_window.h"
#include "html_svg.h"
#include "plots_gnuplot.h"
#include "prof/escape.h"
#include "prof/tables.h"
#include "sink/symbol.h"
#include "model/capture_windows.h"
#include "model/groups.h"
#include "model/overview.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define PLOT_MAX_DEVICES 8
#define PLOT_TOP_KERNELS 15
/* Copy sizes are bucketed at four buckets per power of two. */
#define COPY_BUCKETS_PER_OCTAVE 4
#define COPY_BUCKETS (64 * COPY_BUCKETS_PER_OCTAVE)

/* The plots over time cover the loop the page's diagnosis found (the
 * whole capture when it found none, or could not run): a run whose
 * start-up is most of its time would leave the loop a sliver. */
static int time_axis__init(struct time_axis *a, struct html_page *p, struct prof_error *err)
{
	const char *why;
	const struct diag_report *r = html_page__diagnosis(p, &why);
	struct export_window w;
	int rc;

	if (r && !r->window.whole_run && r->window.end_ns > r->window.start_ns) {
		w.base_ns = r->window.start_ns;
		w.end_ns = r->window.end_ns;
	} else {
		rc = export_window__init(&w, html_page__store(p), NULL, err);
		if (rc < 0)
			return rc;
	}
	/* The extent leaves out rows with a bad span, but its sound rows may
	 * still lie further apart than 64 bits of ns: the span saturates, and
	 * the bins are a quotient rounded up without adding to it first. */
	a->base_ns = w.base_ns;
	a->span_ns = w.end_ns > w.base_ns ? prof_span_saturated(w.base_ns, w.end_ns) : 0;
	a->bin_ns = a->span_ns > 0 ? a->span_ns / PLOT_BINS + (a->span_ns % PLOT_BINS != 0) : 1;
	/* labels count from the capture's start, as every time perfkit prints
	 * (docs/time-base.md), so the loop shows where it lies in the run */
	{
		struct sum_capture_time time;
		struct prof_error ignored = { 0 };

		a->zero_ns = sum_capture__zero(html_page__store(p), &time, &ignored) < 0 ? a->base_ns
											     : time.zero_ns;
	}
	return 0;
}

static int bin_of(const struct time_axis *a, int64_t t)
{
	int64_t b = prof_span_saturated(a->base_ns, t) / a->bin_ns;

	return b < 0 ? 0 : b >= PLOT_BINS ? PLOT_BINS - 1 : (int)b;
}

/* Index of device id in devs (added when there is room); -1 when full. */
static int device_slot(int64_t *devs, int *ndevs, int64_t id)
{
	for (int i = 0; i < *ndevs; i++)
		if (devs[i] == id)
			return i;
	if (*ndevs == PLOT_MAX_DEVICES)
		return -1;
	devs[*ndevs] = id;
	return (*ndevs)++;
}

/* Header line "time_ms" "GPU <id>"...: gnuplot takes series titles from it. */
static void device_header(FILE *f, const int64_t *devs, int ndevs)
{
	fputs("time_ms", f);
	for (int i = 0; i < ndevs; i++)
		fprintf(f, " \"GPU %" PRId64 "\"", devs[i]);
	fputc('\n', f);
}

/* ---- GPU utilisation over time ------------------------------------------ */

static const char util_script[] =
	GNUPLOT_SVG_TERMINAL(960, 300)
	"set output 'util.svg'\n"
	"set key autotitle columnheader top right\n"
	"set autoscale xfix\n"
	"set xlabel \"time since capture start (ms)\"\n"
	"set ylabel 'GPU busy (%)'\n"
	"set yrange [0:105]\n"
	"set grid ytics\n"
	"plot for [i=2:*] 'util.dat' using 1:i with steps lw 1.5\n";

static void add_busy(int64_t *bins, const struct time_axis *a, int64_t start, int64_t end)
{
	int64_t axis_end = prof_add_saturated(a->base_ns, a->span_ns);

	/* only what lies on the axis */
	if (start < a->base_ns)
		start = a->base_ns;
	if (end > axis_end)
		end = axis_end;
	for (int b = bin_of(a, start); b < PLOT_BINS && start < end; b++) {
		int64_t bin_end = time_axis__bin_start_ns(a, b + 1);
		int64_t stop = end < bin_end || b == PLOT_BINS - 1 ? end : bin_end;

		if (stop > start)
			bins[b] = prof_add_saturated(bins[b], prof_span_saturated(start, stop));
		start = stop;
	}
}

/* The busy bins of each device (the first PLOT_MAX_DEVICES) from the
 * union intervals of sum_busy__walk. */
struct util_bins {
	const struct time_axis *a;
	int64_t (*busy)[PLOT_BINS], devs[PLOT_MAX_DEVICES];
	int ndevs;
};

static int util_interval(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns)
{
	struct util_bins *u = ctx;
	int slot = device_slot(u->devs, &u->ndevs, device_id);

	if (slot >= 0)
		add_busy(u->busy[slot], u->a, start_ns, end_ns);
	return 0;
}

/* Whether the store has any table of GPU work. */
static bool has_gpu_work(struct prof_store *s)
{
	static const char *const tables[] = { PROF_T_GPU_WORK_TABLES };

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (prof_store__has_table(s, tables[i]))
			return true;
	return false;
}

static int plot_utilisation(struct html_page *p, const struct time_axis *a, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	struct sum_stretches st;
	/* per device in start order, so overlapping work (several streams)
	 * merges into one busy interval and counts once; a graph recorded
	 * whole counts as its launches, as the overview's busy time does;
	 * rows with a bad span are left out, as of every export */
	struct util_bins u = { .a = a };
	struct sum_busy_walk w = { .interval = util_interval, .ctx = &u };
	char dir[4096];
	FILE *f;
	int rc;

	if (!has_gpu_work(s) || a->span_ns <= 0) {
		html_page__note(p, "No GPU activity to plot over time.");
		return 0;
	}
	u.busy = calloc(PLOT_MAX_DEVICES, sizeof *u.busy);
	if (!u.busy)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	/* the overview's walk, kept; walked again where it could not be */
	if (busy_tape__replay(html_page__busy_tape(p), util_interval, &u) < 0) {
		memset(u.busy, 0, PLOT_MAX_DEVICES * sizeof *u.busy);
		u.ndevs = 0;
		rc = sum_busy__walk(s, NULL, &w, err);
		if (rc < 0)
			goto out;
	}
	rc = html_page__mkdir(p, "util", dir, sizeof dir, err);
	if (rc < 0 || !(f = plots_data__open(dir, "util.dat", err))) {
		rc = err->code;
		goto out;
	}
	/* a bin's share is of the time in it the capture recorded: between two
	 * capture windows nothing was, and the plot leaves a gap (NaN) */
	rc = sum_stretches__load(s, a->base_ns, prof_add_saturated(a->base_ns, a->span_ns), &st, err);
	if (rc < 0) {
		fclose(f);
		goto out;
	}
	device_header(f, u.devs, u.ndevs);
	for (int b = 0; b <= PLOT_BINS; b++) {
		/* the last row repeats the last bin so its step is drawn */
		int bb = b < PLOT_BINS ? b : PLOT_BINS - 1;
		int64_t len = a->span_ns - (int64_t)bb * a->bin_ns, from, recorded;

		if (len > a->bin_ns)
			len = a->bin_ns;
		if (len <= 0)
			break;
		from = prof_add_saturated(a->base_ns, (int64_t)bb * a->bin_ns);
		recorded = sum_stretches__covered(&st, from, prof_add_saturated(from, len));
		fprintf(f, "%.6f", time_axis__bin_ms(a, b));
		for (int d = 0; d < u.ndevs; d++) {
			if (recorded > 0)
				fprintf(f, " %.3f", 100.0 * (double)u.busy[d][bb] / (double)recorded);
			else
				fputs(" NaN", f);
		}
		fputc('\n', f);
	}
	sum_stretches__exit(&st);
	rc = plots_data__close(f, err);
	if (rc == 0)
		rc = gnuplot__write_file(dir, "util.gp", util_script, err);
	if (rc == 0)
		html_page__plot(p, dir, "util.gp", "util.svg",
				prof_store__has_table(s, PROF_T_GRAPH_TRACE)
					? "GPU utilisation over time: the share of each time bin in "
					  "which the GPU ran a kernel, a CUDA graph launch, a copy or a "
					  "memset (concurrent work counted once)."
					: "GPU utilisation over time: the share of each time bin in "
					  "which the GPU ran a kernel, copy or memset (concurrent work "
					  "counted once).");
out:
	free(u.busy);
	return rc < 0 ? rc : 0;
}

/* ---- kernel time by name -------------------------------------------------- */

#define BARS_WIDTH 1000.0
#define BARS_LABEL_W 330.0
#define BARS_ROW_H 22.0

/* Inline SVG, each bar labelled by the kernel's short name (the full name
 * on hover): names from the capture stay text in the page, never in a
 * gnuplot script. */
static int plot_kernels(struct html_page *p, struct prof_error *err)
{
	const struct sum_overview *o = html_page__overview(p);
	struct sum_groups mine = { 0 };
	/* the kernels' groups are the overview's, read alone where it could not be */
	const struct sum_groups *gs = o ? &o->kernels : &mine;
	FILE *out = html_page__out(p);
	double height, longest;
	size_t n;
	int rc = o ? 0 : sum_kernel_groups(html_page__store(p), &mine, err);

	if (rc < 0)
		goto out;
	if (gs->n == 0) {
		html_page__note(p, "No kernels to plot by name.");
		goto out;
	}
	n = gs->n < PLOT_TOP_KERNELS ? gs->n : PLOT_TOP_KERNELS;
	longest = (double)gs->g[0].total;
	height = BARS_ROW_H * (double)n + 8;
	fprintf(out, "<figure class=\"bars\">\n<svg class=\"bars\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"kernel time by name\">\n", BARS_WIDTH, height);
	for (size_t i = 0; i < n; i++) {
		const char *name = gs->g[i].label ? gs->g[i].label : "?";
		double y = 4 + BARS_ROW_H * (double)i;
		double w = longest > 0 ? (BARS_WIDTH - BARS_LABEL_W - 150) * (double)gs->g[i].total / longest : 0;
		char small[256];

		rpt_symbol__shorten(name, RPT_SYMBOL_SHORT, small, sizeof small);
		fprintf(out, "<g><title>");
		prof_fputs_html(out, name);
		fprintf(out, ": %.3f ms, %" PRId64 " launches</title>\n", (double)gs->g[i].total / 1e6, gs->g[i].n);
		fputs("<g class=\"name\">", out);
		html_svg__label(out, 4, y + 15, BARS_LABEL_W - 10, small);
		fprintf(out, "</g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#4c78a8\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">%.3f ms (%" PRId64 "&times;)</text></g>\n",
			BARS_LABEL_W, y + 2, w < 0.5 ? 0.5 : w, BARS_ROW_H - 5, BARS_LABEL_W + w + 6, y + 15,
			(double)gs->g[i].total / 1e6, gs->g[i].n);
	}
	fputs("</svg>\n<figcaption>Kernel time by name: total GPU time of the kernels that took the most "
	      "(short names; hover for the full name).</figcaption>\n</figure>\n", out);
out:
	sum_groups__exit(&mine);
	return rc;
}

/* ---- device memory over time --------------------------------------------- */

static const char memory_script[] =
	GNUPLOT_SVG_TERMINAL(960, 300)
	"set output 'memory.svg'\n"
	"set key autotitle columnheader top left\n"
	"set xlabel \"time since capture start (ms)\"\n"
	"set ylabel 'device memory in use (MB)'\n"
	"set yrange [0:*]\n"
	"set grid ytics\n"
	"plot for [i=2:*] 'memory.dat' using 1:i with steps lw 1.5\n";

/* Per device and bin: the highest level reached in the bin and the level
 * at its end (levels carry into bins without events). */
struct mem_bins {
	int64_t max_bytes[PLOT_BINS], end_bytes[PLOT_BINS];
	bool touched[PLOT_BINS];
	int64_t level_bytes;
};

static int plot_memory(struct html_page *p, const struct time_axis *a, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	struct mem_bins *m = NULL;
	struct prof_cursor *c = NULL;
	int64_t devs[PLOT_MAX_DEVICES];
	int ndevs = 0, rc;
	char sql[256], dir[4096];
	FILE *f;

	if (!prof_store__has_table(s, PROF_T_MEMORY) || a->span_ns <= 0) {
		html_page__note(p, "No device memory events to plot (capture with "
				   "--trace=memory to get them).");
		return 0;
	}
	m = calloc(PLOT_MAX_DEVICES, sizeof *m);
	if (!m)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	snprintf(sql, sizeof sql, "SELECT deviceId, start, bytes, memoryOperationType FROM "
		 PROF_T_MEMORY " WHERE memKind = %d ORDER BY start", PROF_MEM_DEVICE);
	rc = prof_cursor__open(s, sql, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int d = device_slot(devs, &ndevs, prof_cursor__int64(c, 0));
		int64_t t = prof_cursor__int64(c, 1);
		int b = bin_of(a, t);
		int64_t bytes = prof_cursor__int64(c, 2);

		if (d < 0 || t >= prof_add_saturated(a->base_ns, a->span_ns))
			continue;
		m[d].level_bytes = prof_cursor__int64(c, 3) == 0 ? prof_add_saturated(m[d].level_bytes, bytes)
							       : prof_span_saturated(bytes, m[d].level_bytes);
		/* before the axis: only the level it starts at */
		if (t < a->base_ns)
			m[d].max_bytes[b] = m[d].level_bytes;
		else if (!m[d].touched[b] || m[d].level_bytes > m[d].max_bytes[b])
			m[d].max_bytes[b] = m[d].level_bytes;
		m[d].end_bytes[b] = m[d].level_bytes;
		m[d].touched[b] = true;
	}
	if (rc < 0)
		goto out;
	if (ndevs == 0) {
		html_page__note(p, "No device memory events to plot.");
		goto out;
	}
	rc = html_page__mkdir(p, "memory", dir, sizeof dir, err);
	if (rc < 0 || !(f = plots_data__open(dir, "memory.dat", err))) {
		rc = err->code;
		goto out;
	}
	device_header(f, devs, ndevs);
	for (int d = 0; d < ndevs; d++)
		m[d].level_bytes = 0;
	for (int b = 0; b <= PLOT_BINS; b++) {
		int bb = b < PLOT_BINS ? b : PLOT_BINS - 1;

		fprintf(f, "%.6f", time_axis__bin_ms(a, b));
		for (int d = 0; d < ndevs; d++) {
			/* a bin shows the most held during it, so short peaks stay visible */
			int64_t v = m[d].level_bytes;

			if (m[d].touched[bb] && m[d].max_bytes[bb] > v)
				v = m[d].max_bytes[bb];
			fprintf(f, " %.6f", (double)v / 1e6);
			if (b < PLOT_BINS && m[d].touched[bb])
				m[d].level_bytes = m[d].end_bytes[bb];
		}
		fputc('\n', f);
	}
	rc = plots_data__close(f, err);
	if (rc == 0)
		rc = gnuplot__write_file(dir, "memory.gp", memory_script, err);
	if (rc == 0)
		html_page__plot(p, dir, "memory.gp", "memory.svg",
				"Device memory over time: memory allocated through CUDA per GPU, the "
				"highest level in each time bin.");
out:
	prof_cursor__close(c);
	free(m);
	return rc < 0 ? rc : 0;
}

/* ---- copy size vs bandwidth ---------------------------------------------- */

enum copy_host { COPY_PAGEABLE, COPY_PINNED, COPY_OTHER, COPY__COUNT };

struct copy_bucket {
	int64_t count, bytes, time_ns;
};

/* Series files and their constant plot clauses, one per host memory kind. */
static const char *const copy_files[COPY__COUNT] = {
	"copies-pageable.dat", "copies-pinned.dat", "copies-other.dat",
};
static const char *const copy_clauses[COPY__COUNT] = {
	"'copies-pageable.dat' using 1:2:3 with points pt 7 ps variable lc rgb '#d95f02' "
	"title 'pageable host memory'",
	"'copies-pinned.dat' using 1:2:3 with points pt 5 ps variable lc rgb '#1b9e77' "
	"title 'pinned host memory'",
	"'copies-other.dat' using 1:2:3 with points pt 9 ps variable lc rgb '#7570b3' "
	"title 'device-to-device and other'",
};
static const char copies_head[] =
	GNUPLOT_SVG_TERMINAL(960, 360)
	"set output 'copies.svg'\n"
	"set logscale x 2\n"
	"set format x '%.0b %BB'\n"
	"set offsets graph 0.03, graph 0.03, graph 0.08, 0\n"
	"set xlabel 'copy size'\n"
	"set ylabel 'bandwidth (GB/s)'\n"
	"set yrange [0:*]\n"
	"set grid\n"
	"set key top left\n"
	"plot ";

static int copy_bucket_of(int64_t bytes)
{
	int b = (int)floor(log2((double)bytes) * COPY_BUCKETS_PER_OCTAVE);

	return b < 0 ? 0 : b >= COPY_BUCKETS ? COPY_BUCKETS - 1 : b;
}

static int write_copy_series(const char *dir, enum copy_host h, const struct copy_bucket *b,
			     struct prof_error *err)
{
	FILE *f = plots_data__open(dir, copy_files[h], err);

	if (!f)
		return err->code;
	fputs("# mean_bytes GB_per_s point_size copies\n", f);
	for (int i = 0; i < COPY_BUCKETS; i++) {
		if (b[i].time_ns <= 0)
			continue;
		/* bytes per ns is GB/s; point area grows with the number of copies */
		fprintf(f, "%.3f %.6f %.3f %" PRId64 "\n", (double)b[i].bytes / (double)b[i].count,
			(double)b[i].bytes / (double)b[i].time_ns,
			0.5 + 0.35 * log10((double)b[i].count), b[i].count);
	}
	return plots_data__close(f, err);
}

static int plot_copies(struct html_page *p, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	struct copy_bucket (*bk)[COPY_BUCKETS] = NULL;
	bool present[COPY__COUNT] = { false };
	struct prof_cursor *c = NULL;
	char dir[4096], *script = NULL;
	int rc, nseries = 0;

	if (!prof_store__has_table(s, PROF_T_MEMCPY)) {
		html_page__note(p, "No copies to plot.");
		return 0;
	}
	bk = calloc(COPY__COUNT, sizeof *bk);
	if (!bk)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	/* the host side of a copy decides pageable vs pinned, as in the overview */
	rc = prof_cursor__open(s, "SELECT bytes, end - start, CASE WHEN copyKind IN (1, 9, 11) "
			       "THEN srcKind WHEN copyKind IN (2, 12) THEN dstKind END "
			       "FROM " PROF_T_MEMCPY " WHERE bytes > 0 AND NOT " SUM_BAD_SPAN(""), &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t host = prof_cursor__is_null(c, 2) ? -1 : prof_cursor__int64(c, 2);
		enum copy_host h = host == PROF_MEM_PAGEABLE ? COPY_PAGEABLE
				   : host == PROF_MEM_PINNED ? COPY_PINNED : COPY_OTHER;
		struct copy_bucket *b = &bk[h][copy_bucket_of(prof_cursor__int64(c, 0))];

		b->count++;
		b->bytes = prof_add_saturated(b->bytes, prof_cursor__int64(c, 0));
		b->time_ns = prof_add_saturated(b->time_ns, prof_cursor__int64(c, 1));
		if (prof_cursor__int64(c, 1) > 0)
			present[h] = true;
	}
	if (rc < 0)
		goto out;
	for (int h = 0; h < COPY__COUNT; h++)
		nseries += present[h];
	if (nseries == 0) {
		html_page__note(p, "No copies to plot.");
		goto out;
	}
	rc = html_page__mkdir(p, "copies", dir, sizeof dir, err);
	script = malloc(sizeof copies_head + COPY__COUNT * 256);
	if (rc == 0 && !script)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0)
		goto out;
	strcpy(script, copies_head);
	for (int h = 0, k = 0; rc == 0 && h < COPY__COUNT; h++) {
		if (!present[h])
			continue;
		rc = write_copy_series(dir, (enum copy_host)h, bk[h], err);
		strcat(script, k++ ? ", \\\n     " : "");
		strcat(script, copy_clauses[h]);
	}
	strcat(script, "\n");
	if (rc == 0)
		rc = gnuplot__write_file(dir, "copies.gp", script, err);
	if (rc == 0)
		html_page__plot(p, dir, "copies.gp", "copies.svg",
				"Copy size vs bandwidth: copies grouped by size (four groups per "
				"power of two) and host memory kind; each point is the group's bytes "
				"over its time, larger points for more copies.");
out:
	prof_cursor__close(c);
	free(script);
	free(bk);
	return rc < 0 ? rc : 0;
}

/* Which time the plots over time cover, in words. */
static void write_window(struct html_page *p, const struct diag_report *r, const struct time_axis *a)
{
	FILE *out = html_page__out(p);
	char b1[32], b2[32];

	fprintf(out, "<p class=\"axis-window\" data-from-ns=\"%" PRId64 "\" data-to-ns=\"%" PRId64 "\">"
		"The plots over time cover ", a->base_ns, prof_add_saturated(a->base_ns, a->span_ns));
	if (r && !r->window.whole_run && r->window.end_ns > r->window.start_ns) {
		fputs("the loop perfkit diagnose found (", out);
		prof_fputs_html(out, r->window.source);
		fputs(")", out);
	} else {
		fputs("the whole capture (no loop was found)", out);
	}
	fprintf(out, ": %s, from %s after the capture's start; time counts from the capture's start.</p>\n",
		diag__ns(b1, sizeof b1, a->span_ns),
		diag__ns(b2, sizeof b2, prof_span_saturated(a->zero_ns, a->base_ns)));
}

int html_plots__render(struct html_page *p, struct prof_error *err)
{
	const char *why;
	const struct diag_report *r = html_page__diagnosis(p, &why);
	struct time_axis a;
	int rc = time_axis__init(&a, p, err);

	if (rc == 0)
		write_window(p, r, &a);
	if (rc == 0)
		rc = plot_utilisation(p, &a, err);
	if (rc == 0)
		rc = html_gpu_metrics__plots(p, &a, err);
	if (rc == 0)
		rc = plot_kernels(p, err);
	if (rc == 0)
		rc = plot_memory(p, &a, err);
	if (rc == 0)
		rc = plot_copies(p, err);
	return rc;
}
