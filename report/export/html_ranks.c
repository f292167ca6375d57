/* html_ranks.c - the Ranks section of the HTML report, for a job (several
 * processes with CUDA work, or ranks a launcher numbered): the rows of
 * rank_sum and nccl_sum, a stacked bar per rank of where its window went
 * (compute alone, communication hidden under compute, exposed
 * communication, idle) and each rank's steps on one time line, so a rank
 * whose steps drift from the others' shows.
 *
 * Both plots are gnuplot data files and constant scripts: the bars' and
 * rows' labels ("rank 3") are columns of the data, numbers perfkit made. */
#include "html_report.h"

#include <inttypes.h>
#include <stdlib.h>

#include "analysis/ranks/rank_time.h"
#include "plots_gnuplot.h"
#include "summary/query.h"
#include "summary/summary.h"

static const char bars_script[] =
	GNUPLOT_SVG_TERMINAL(960, 340)
	"set output 'ranks.svg'\n"
	"set style data histograms\n"
	"set style histogram rowstacked\n"
	"set style fill solid 0.85 border rgb '#404040'\n"
	"set boxwidth 0.6\n"
	"set yrange [0:100]\n"
	"set ylabel 'share of the rank''s window (%)'\n"
	"set key outside right top\n"
	"set grid ytics\n"
	"plot 'ranks.dat' using 2:xtic(1) title 'compute' lc rgb '#4c78a8',"
	" '' using 3 title 'communication hidden under compute' lc rgb '#72b7b2',"
	" '' using 4 title 'exposed communication' lc rgb '#e45756',"
	" '' using 5 title 'idle' lc rgb '#bab0ac'\n";

/* One box per step on its rank's row; alternate steps shaded apart. */
static const char steps_script[] =
	GNUPLOT_SVG_TERMINAL(960, 300)
	"set output 'steps.svg'\n"
	"stats 'steps.dat' using 1 nooutput\n"
	"set yrange [STATS_max + 0.7 : STATS_min - 0.7]\n"
	"set xlabel 'time since capture start (ms)'\n"
	"set grid xtics\n"
	"set style fill solid 0.85 border rgb '#2f4f6f'\n"
	"unset key\n"
	"plot 'steps.dat' using (($2 + $3) / 2):1:2:3:($1 - 0.35):($1 + 0.35):(int($4) % 2 ? 0x4c78a8 : 0x9ecae9)"
	":ytic(5) with boxxyerror lc rgb variable\n";

bool html_ranks__applies(struct prof_store *s)
{
	struct sum_ranks r;
	bool job;

	if (!sum_ranks__may_be_job(s) || sum_ranks__load(s, &r, NULL) < 0)
		return false;
	job = sum_ranks__is_job(&r);
	sum_ranks__exit(&r);
	return job;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static int plot_bars(struct html_page *p, const struct rank_times *t, struct prof_error *err)
{
	char dir[4096];
	FILE *f;
	int rc = html_page__mkdir(p, "ranks", dir, sizeof dir, err);

	if (rc < 0 || !(f = plots_data__open(dir, "ranks.dat", err)))
		return rc < 0 ? rc : err->code;
	fputs("# rank compute_alone hidden_comm exposed_comm idle (% of its window)\n", f);
	for (int i = 0; i < t->n; i++) {
		const struct rank_time *r = &t->v[i];

		fprintf(f, "\"rank %d\" %.4f %.4f %.4f %.4f\n", r->rank,
			share(r->compute_ns - r->hidden_ns, r->window_ns), share(r->hidden_ns, r->window_ns),
			share(r->exposed_ns, r->window_ns), share(r->idle_ns, r->window_ns));
	}
	rc = plots_data__close(f, err);
	if (rc == 0)
		rc = gnuplot__write_file(dir, "ranks.gp", bars_script, err);
	if (rc == 0)
		html_page__plot(p, dir, "ranks.gp", "ranks.svg",
				"Where each rank's window went: compute (kernels other than NCCL's, "
				"copies, memsets) alone, NCCL communication hidden under compute, "
				"communication exposed, idle.");
	return rc;
}

/* Where a step ran: its GPU work's span where it launched some, else
 * its own (host) span. */
static void step_span(const struct rank_time *r, int k, int64_t *start, int64_t *end)
{
	*start = r->steps[k].start_ns;
	*end = r->steps[k].end_ns;
	if (r->step_gpu_start_ns && r->step_gpu_start_ns[k] >= 0) {
		*start = r->step_gpu_start_ns[k];
		*end = r->step_gpu_end_ns[k];
	}
}

static int plot_steps(struct html_page *p, const struct rank_times *t, struct prof_error *err)
{
	struct sum_capture_time time;
	int64_t first = INT64_MAX;
	char dir[4096];
	FILE *f;
	int rc;

	for (int i = 0; i < t->n; i++)
		for (int k = 0; k < t->v[i].nsteps; k++) {
			int64_t a, b;

			step_span(&t->v[i], k, &a, &b);
			if (a < first)
				first = a;
		}
	if (first == INT64_MAX) {
		html_page__note(p, "No rank has a loop to draw: no NVTX range or kernel repeats.");
		return 0;
	}
	/* on the time line of the other plots, the traces and --from/--to */
	rc = sum_capture__time(html_page__store(p), &time, err);
	if (rc == 0)
		rc = html_page__mkdir(p, "steps", dir, sizeof dir, err);
	if (rc < 0 || !(f = plots_data__open(dir, "steps.dat", err)))
		return rc < 0 ? rc : err->code;
	fputs("# rank start_ms end_ms step label\n", f);
	for (int i = 0; i < t->n; i++)
		for (int k = 0; k < t->v[i].nsteps; k++) {
			int64_t a, b;

			step_span(&t->v[i], k, &a, &b);
			fprintf(f, "%d %.6f %.6f %d \"rank %d\"\n", t->v[i].rank,
				(double)prof_span_saturated(time.zero_ns, a) / 1e6,
				(double)prof_span_saturated(time.zero_ns, b) / 1e6, k, t->v[i].rank);
		}
	rc = plots_data__close(f, err);
	if (rc == 0)
		rc = gnuplot__write_file(dir, "steps.gp", steps_script, err);
	if (rc == 0)
		html_page__plot(p, dir, "steps.gp", "steps.svg",
				"Each rank's steps on one time line (the loop perfkit diagnose finds, "
				"found on each rank's own rows), where their GPU work ran: a rank "
				"whose steps start late or last longer than the others' holds them "
				"up at the next collective.");
	return rc;
}

int html_ranks__render(struct html_page *p, struct prof_error *err)
{
	static const char *const reports[] = { "rank_sum", "nccl_sum" };
	struct prof_store *s = html_page__store(p);
	struct prof_error why = { 0 };
	struct rank_times t;
	int rc;

	for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++)
		if (summary__run(reports[i], s, html_page__tables(p), &why) < 0) {
			html_page__note(p, why.msg);
			return 0;
		}
	if (rank_times__load(s, NULL, &t, &why) < 0) {
		html_page__note(p, why.msg);
		return 0;
	}
	rc = plot_bars(p, &t, err);
	if (rc == 0)
		rc = plot_steps(p, &t, err);
	rank_times__exit(&t);
	return rc;
}
