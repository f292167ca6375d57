/* html_report.h - `perfkit report --format=html`: one self-contained HTML
 * file (no scripts, no network, no external fonts; a Content-Security-Policy
 * says so to the browser) holding
 *
 *   top-down: the verdict and findings (perfkit diagnose, run once for the
 *   page), a picture of one step (the median step: threads and streams as
 *   lanes, idle time by cause, the critical path over it), the Ranks of a
 *   job (the straggler first), plots over the loop (GPU utilisation with
 *   the sampled GPU metrics under it, kernel time by name, device memory,
 *   copy size vs bandwidth), the kernel and copy tables (short names, the
 *   full name on hover), GPU idle time and critical path, the NVTX
 *   breakdown, a flame graph of GPU time, the run's overview, the CUDA API
 *   table, then Sampled GPU Metrics and Roofline for captures with them.
 *
 * Tables are the rows of the report functions rendered by the HTML sink;
 * every string from the capture goes through prof_fputs_html. Without
 * gnuplot the page says so where the plots would be. */
#ifndef REPORT_HTML_REPORT_H
#define REPORT_HTML_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "folded.h"
#include "html_page.h"
#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"

/* The page being written, as optional sections see it. */
struct html_page;

/* A section after the built-in ones. applies (NULL: always) says whether the
 * capture has anything for it, so the page neither lists nor heads a section
 * it would leave empty; render writes the body under the page's <h2>. */
struct html_section {
	const char *id;    /* anchor, e.g. "findings" */
	const char *title; /* heading, e.g. "Findings" */
	bool (*applies)(struct prof_store *s);
	int (*render)(struct html_page *page, struct prof_error *err);
	/* true: never asks for the page's diagnosis (html_page__diagnosis,
	 * html_page__timeline), so it renders while the diagnosis is made */
	bool without_diagnosis;
	/* true: after the diagnosis, reads its timeline (html_page__timeline)
	 * and draws no plot, so it renders on a thread of its own beside the
	 * sections that draw, through the diagnosis's connection */
	bool on_timeline;
	/* true (with without_diagnosis): reads the capture only through the
	 * page's store and writes only through its output and tables, drawing
	 * no plot, so it renders the same on any connection to the file: on
	 * the diagnosis's, once that is done, beside the others still to
	 * render */
	bool any_connection;
};

/* Findings (perfkit diagnose with default thresholds), One step, Ranks (a
 * job), GPU idle time and critical path, and for captures with them
 * Sampled GPU Metrics and Roofline. Placed on the page by its order. */
extern const struct html_section html_report__default_sections[];
extern const size_t html_report__ndefault_sections;

struct html_options {
	enum folded_weight flame_weight;
	const char *gnuplot; /* program name or path; NULL: "gnuplot" on PATH */
	/* Optional sections; NULL: html_report__default_sections. */
	const struct html_section *sections;
	size_t nsections;
};

int html_report__write(struct prof_store *s, const struct html_options *o, FILE *out,
		       struct prof_error *err);

/* ---- for section renderers (the page's services: html_page.h) ----------- */

/* The verdict and findings (html_findings.c), from the page's diagnosis. */
int html_findings__render(struct html_page *p, struct prof_error *err);
/* One step, the median one the critical path walks, as inline SVG
 * (html_step.c). */
int html_step__render(struct html_page *p, struct prof_error *err);

/* The plots section body (html_plots.c). */
int html_plots__render(struct html_page *p, struct prof_error *err);

/* The Ranks section (html_ranks.c): for a job of several ranks, rank_sum,
 * nccl_sum, a stacked bar per rank of its window (compute, hidden and
 * exposed communication, idle) and the ranks' steps on one time line,
 * the straggler first. */
bool html_ranks__applies(struct prof_store *s);
int html_ranks__render(struct html_page *p, struct prof_error *err);

#endif
