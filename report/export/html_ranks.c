/* html_ranks.c - the Ranks section of the HTML report, for a job (several
 * processes with CUDA work, or ranks a launcher numbered): the straggler
 * the diagnosis names, in words; each rank's steps on one time line
 * (inline SVG, the straggler's row first: host ranges, GPU spans and the
 * time in collectives, where the early ranks wait for the late one); a
 * stacked bar per rank of where its window went (compute alone,
 * communication hidden under compute, exposed communication, idle); then
 * the rows of rank_sum and nccl_sum.
 *
 * The bars are a gnuplot data file and a constant script: their labels
 * ("rank 3") are columns of the data, numbers perfkit made. */
#include "html_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/job_judge.h"
#include "analysis/ranks/nccl.h"
#include "analysis/ranks/rank_report.h"
#include "analysis/ranks/rank_time.h"
#include "html_svg.h"
#include "plots_gnuplot.h"
#include "prof/escape.h"
#include "prof/tables.h"
#include "model/ranks.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "prof/error.h"

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

/* ---- the ranks' steps on one time line (inline SVG) ---------------------- */

#define RANKS_WIDTH 1240.0
#define RANKS_LABEL_W 150.0
#define RANKS_RIGHT_W 170.0
#define RANKS_PLOT_W (RANKS_WIDTH - RANKS_LABEL_W - RANKS_RIGHT_W)
#define RANKS_ROW_H 46.0

/* An NCCL kernel of a rank: where the rank sat in a collective, waiting
 * for the others or moving data. */
struct comm_span {
	int64_t pid, start_ns, end_ns;
	int64_t wait_ns; /* of it, waiting for the last rank to arrive */
};

struct timeline {
	FILE *out;
	int64_t from_ns, to_ns;
	struct comm_span *comm;
	int ncomm, cap_comm;
};

static double tx(const struct timeline *t, int64_t ns)
{
	if (ns < t->from_ns)
		ns = t->from_ns;
	if (ns > t->to_ns)
		ns = t->to_ns;
	return RANKS_LABEL_W + RANKS_PLOT_W * (double)(ns - t->from_ns) / (double)(t->to_ns - t->from_ns);
}

/* The NCCL kernels of every rank in [from, to): one query. */
static int load_comm(struct prof_store *s, struct timeline *t, struct prof_error *err)
{
	static const char sql[] = "SELECT " PROF_SQL_PID_OF_TID("k.globalPid") ", k.start, k.end FROM " PROF_T_KERNEL
				  " AS k WHERE k.end > ?1 AND k.start < ?2 AND " NCCL_KERNEL_SQL("k")
				  " ORDER BY 1, 2";
	struct prof_cursor *c = NULL;
	int rc = range_cursor__open(s, strdup(sql), t->from_ns, t->to_ns, NULL, &c, err);

	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		if (array__grow((void **)&t->comm, &t->cap_comm, t->ncomm + 1, sizeof *t->comm)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		t->comm[t->ncomm++] = (struct comm_span){ prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
							  prof_cursor__int64(c, 2), 0 };
		rc = 0;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Each NCCL kernel's wait for the last rank to arrive (job_judge__waits):
 * the k-th NCCL kernel of every rank in the time line taken as one
 * collective, as NCCL runs a job's collectives in one order on every rank. */
static int comm_waits(struct timeline *t, const struct rank_times *rt)
{
	int n = rt->n, *first = calloc((size_t)n, sizeof *first), *count = calloc((size_t)n, sizeof *count);
	int64_t *start = calloc((size_t)n, sizeof *start), *dur = calloc((size_t)n, sizeof *dur);
	int64_t *wait = calloc((size_t)n, sizeof *wait);
	int rc = first && count && start && dur && wait ? 0 : PROF_E_NOMEM, most = 0;

	for (int r = 0; rc == 0 && r < n; r++) {
		first[r] = -1;
		for (int i = 0; i < t->ncomm; i++)
			if (t->comm[i].pid == (rt->v[r].global_pid >> 24)) {
				if (first[r] < 0)
					first[r] = i;
				count[r]++;
			}
		if (r == 0 || count[r] < most)
			most = count[r];
	}
	/* spans are by process and start: a rank's are consecutive */
	for (int k = 0; rc == 0 && n > 1 && k < most; k++) {
		for (int r = 0; r < n; r++) {
			const struct comm_span *c = &t->comm[first[r] + k];

			start[r] = c->start_ns;
			dur[r] = c->end_ns - c->start_ns;
		}
		job_judge__waits(start, dur, n, wait);
		for (int r = 0; r < n; r++)
			t->comm[first[r] + k].wait_ns = wait[r];
	}
	free(first), free(count), free(start), free(dur), free(wait);
	return rc;
}

/* The rank the diagnosis names as the straggler; -1: none. */
static int straggler_rank(struct html_page *p, const char **evidence)
{
	const char *why;
	const struct diag_report *r = html_page__diagnosis(p, &why);

	for (int i = 0; r && i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, "straggler") && r->findings[i].nranks > 0) {
			*evidence = r->findings[i].evidence;
			return r->findings[i].ranks[0].rank;
		}
	return -1;
}

/* One rank's row: its steps' host ranges on a thin bar, their GPU spans
 * under them with the time in collectives in red; at the right the
 * median step and the time in collectives per step. */
static void draw_rank(const struct timeline *t, const struct rank_time *r, double y, bool late)
{
	FILE *out = t->out;
	int64_t wait_ns = 0;
	char b1[32], b2[32];

	fprintf(out, "<g class=\"rank%s\" data-rank=\"%d\">\n<text class=\"rank\" x=\"6\" y=\"%.1f\">rank %d%s</text>\n",
		late ? " late" : "", r->rank, y + 20, r->rank, late ? " (straggler)" : "");
	fprintf(out, "<text x=\"6\" y=\"%.1f\">host / GPU</text>\n", y + 34);
	for (int k = 0; k < r->nsteps; k++) {
		int64_t a, b;
		double x0 = tx(t, r->steps[k].start_ns), x1 = tx(t, r->steps[k].end_ns);

		fprintf(out, "<rect class=\"step%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"8\">"
			"<title>rank %d step %d (host): %s</title></rect>\n",
			k % 2 ? " odd" : "", x0, y + 6, x1 - x0 < 0.5 ? 0.5 : x1 - x0, r->rank, k + 1,
			diag__ns(b1, sizeof b1, r->steps[k].end_ns - r->steps[k].start_ns));
		step_span(r, k, &a, &b);
		x0 = tx(t, a);
		x1 = tx(t, b);
		fprintf(out, "<rect class=\"step%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"22\">"
			"<title>rank %d step %d (GPU): %s</title></rect>\n",
			k % 2 ? " odd" : "", x0, y + 17, x1 - x0 < 0.5 ? 0.5 : x1 - x0, r->rank, k + 1,
			diag__ns(b1, sizeof b1, b - a));
	}
	for (int i = 0; i < t->ncomm; i++) {
		const struct comm_span *c = &t->comm[i];
		double x0, x1, xw;

		if (c->pid != (r->global_pid >> 24))
			continue;
		x0 = tx(t, c->start_ns);
		x1 = tx(t, c->end_ns);
		xw = tx(t, c->start_ns + c->wait_ns);
		wait_ns += c->wait_ns;
		fprintf(out, "<rect class=\"comm\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"14\">"
			"<title>rank %d in a collective (NCCL kernel): %s, of it %s waiting for the last rank"
			"</title></rect>\n", x0, y + 21, x1 - x0 < 0.5 ? 0.5 : x1 - x0, r->rank,
			diag__ns(b1, sizeof b1, c->end_ns - c->start_ns), diag__ns(b2, sizeof b2, c->wait_ns));
		if (c->wait_ns > 0)
			fprintf(out, "<rect class=\"wait\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"14\">"
				"<title>rank %d waiting for the last rank: %s</title></rect>\n", x0, y + 21,
				xw - x0 < 0.5 ? 0.5 : xw - x0, r->rank, diag__ns(b1, sizeof b1, c->wait_ns));
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">step %s</text>\n<text x=\"%.1f\" y=\"%.1f\">waits %s a step"
		"</text>\n</g>\n", RANKS_LABEL_W + RANKS_PLOT_W + 10, y + 16,
		r->step_med_ns > 0 ? diag__ns(b1, sizeof b1, r->step_med_ns) : "-", RANKS_LABEL_W + RANKS_PLOT_W + 10,
		y + 32, diag__ns(b2, sizeof b2, r->nsteps > 0 ? wait_ns / r->nsteps : 0));
}

static int draw_steps(struct html_page *p, const struct rank_times *rt, struct prof_error *err)
{
	struct timeline t = { .out = html_page__out(p), .from_ns = INT64_MAX, .to_ns = INT64_MIN };
	const char *evidence = NULL;
	int late = straggler_rank(p, &evidence), rc;
	double y = 4;

	for (int i = 0; i < rt->n; i++)
		for (int k = 0; k < rt->v[i].nsteps; k++) {
			int64_t a, b;

			step_span(&rt->v[i], k, &a, &b);
			a = a < rt->v[i].steps[k].start_ns ? a : rt->v[i].steps[k].start_ns;
			b = b > rt->v[i].steps[k].end_ns ? b : rt->v[i].steps[k].end_ns;
			if (a < t.from_ns)
				t.from_ns = a;
			if (b > t.to_ns)
				t.to_ns = b;
		}
	if (t.from_ns >= t.to_ns) {
		html_page__note(p, "No rank has a loop to draw: no NVTX range or kernel repeats.");
		return 0;
	}
	if (late >= 0) {
		fprintf(t.out, "<p class=\"straggler\"><strong>Rank %d is the straggler:</strong> the others wait "
			"for it at the collectives. ", late);
		prof_fputs_html(t.out, evidence);
		fputs("</p>\n", t.out);
	}
	rc = load_comm(html_page__store(p), &t, err);
	if (rc == 0 && comm_waits(&t, rt) < 0)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0) {
		free(t.comm);
		return rc;
	}
	fprintf(t.out, "<figure class=\"ranks\">\n<svg class=\"ranks\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"the ranks' steps\">\n", RANKS_WIDTH, 4 + RANKS_ROW_H * rt->n + 24);
	/* the straggler leads */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < rt->n; i++)
			if ((pass == 0) == (rt->v[i].rank == late)) {
				draw_rank(&t, &rt->v[i], y, rt->v[i].rank == late);
				y += RANKS_ROW_H;
			}
	html_svg__time_axis(t.out, RANKS_LABEL_W, RANKS_PLOT_W, 2, y + 2, t.to_ns - t.from_ns);
	fputs("</svg>\n<figcaption>Each rank's steps on one time line (the loop perfkit diagnose finds, on "
	      "each rank's own rows): the thin bar is the step's host range, the box under it where its GPU "
	      "work ran; in it the rank's collectives (NCCL kernels, teal), red where the rank waited in one "
	      "for the last rank to arrive (each rank's k-th collective taken as one). Time from the first "
	      "step's start.</figcaption>\n</figure>\n",
	      t.out);
	free(t.comm);
	return 0;
}

int html_ranks__render(struct html_page *p, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	const struct rank_times *kept = html_page__rank_times(p);
	struct prof_error why = { 0 };
	/* the ranks' time as the diagnosis loaded it, where it did */
	struct rank_times mine;
	const struct rank_times *t = kept ? kept : &mine;
	int rc, trc = 0;

	if (!kept && rank_times__load(s, NULL, 0, &mine, &why) < 0) {
		html_page__note(p, why.msg);
		return 0;
	}
	rc = draw_steps(p, t, err);
	if (rc == 0)
		rc = plot_bars(p, t, err);
	/* rank_sum's rows are of the same times */
	if (rc == 0)
		trc = rank_sum__emit(t, html_page__tables(p), &why);
	if (t == &mine)
		rank_times__exit(&mine);
	if (rc == 0 && (trc < 0 || registry__run("nccl_sum", s, html_page__tables(p), &why) < 0)) {
		html_page__note(p, why.msg);
		return 0;
	}
	return rc;
}
