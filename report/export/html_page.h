/* html_page.h - the services the HTML report's sections use (html_page.c):
 * the page's output, store and table sink, notes, the plots' folders and
 * plots drawn through gnuplot. */
#ifndef REPORT_HTML_PAGE_H
#define REPORT_HTML_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"

struct diag_report;
struct busy_tape;
struct html_page;
struct rank_times;
struct rpt_sink;
struct sum_overview;
struct timeline_units;

FILE *html_page__out(struct html_page *p);
struct prof_store *html_page__store(struct html_page *p);
/* The HTML table sink writing into the page (<h3> per report). */
struct rpt_sink *html_page__tables(struct html_page *p);
/* The page's diagnosis (perfkit diagnose with default thresholds), run
 * once for every section that reads it; NULL when it could not run, with
 * why in *why. */
const struct diag_report *html_page__diagnosis(struct html_page *p, const char **why);
/* Each process's idle attribution and critical path: those the diagnosis
 * made, for the sections that show them to add what they lack to
 * (timeline_units__need), so that none is made twice. */
struct timeline_units *html_page__timeline(struct html_page *p);
/* A job's ranks' time as its diagnosis loaded it; NULL where it loaded
 * none (no job was diagnosed). */
const struct rank_times *html_page__rank_times(struct html_page *p);
/* The capture's overview (model/overview.h), read once for the sections
 * that show its parts (the run, the kernel and NVTX tables, the kernel
 * bars); NULL when it could not be read, each such section then reading
 * its part alone. */
const struct sum_overview *html_page__overview(struct html_page *p);
/* The intervals of the overview's busy walk, kept (busy_tape.h); NULL
 * where the overview was not read, or none could be kept. */
struct busy_tape *html_page__busy_tape(struct html_page *p);
/* A paragraph of class "note" holding text (escaped). */
void html_page__note(struct html_page *p, const char *text);
/* A new empty folder named name inside the page's private temporary folder
 * (removed when the page is done); path receives it. */
int html_page__mkdir(struct html_page *p, const char *name, char *path, size_t cap,
		     struct prof_error *err);
/* Files a section writes into such a folder by other means than
 * plots_data__open or gnuplot__write_file (roof__write_plot), registered
 * before they are made so that a signal removes them with the folder. */
int html_page__expect(struct html_page *p, const char *dir, const char *const *names, size_t n,
		      struct prof_error *err);
/* Run gnuplot on script (a file in dir, written by the caller) and inline
 * the SVG file svg it draws, with caption under it. Without gnuplot, or when
 * it fails, the page gets a note instead: a plot is never worth the page. */
void html_page__plot(struct html_page *p, const char *dir, const char *script, const char *svg,
		     const char *caption);

#endif
