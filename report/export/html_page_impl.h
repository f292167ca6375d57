/* html_page_impl.h - the page of the HTML report as its writer
 * (html_report.c) and its services (html_page.c) see it. Internal to
 * export/: sections reach the page through html_page.h. */
#ifndef REPORT_HTML_PAGE_IMPL_H
#define REPORT_HTML_PAGE_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/core/scope.h"
#include "analysis/diagnose_run.h"
#include "html_page.h"
#include "model/overview.h"
#include "prof/error.h"

struct html_options;
struct diag_report;
struct gnuplot_session;
struct busy_tape;

/* Tables longer than this are cut in the page (the CSV/JSON formats have
 * every row); summaries are per name, so only unusual captures get there. */
#define HTML_MAX_TABLE_ROWS 200

struct html_page {
	FILE *out;
	struct prof_store *store;
	const struct html_options *o;
	struct rpt_sink *tables;
	char tmpdir[4096];
	char gnuplot[4096];
	bool have_gnuplot, told_no_gnuplot;
	int nplots;
	/* the gnuplot that draws the page's plots, started with the first */
	struct gnuplot_session *gnuplot_session;
	/* the page's one diagnosis (html_page__diagnosis), made on first use */
	struct diag_report *diagnosis;
	bool diagnosed;
	char diagnosis_failed[PROF_ERROR_MSG_MAX];
	/* each process's idle attribution and critical path and a job's
	 * ranks' time, as the diagnosis left them and the sections added
	 * (html_page__timeline, html_page__rank_times) */
	struct diag_keep keep;
	/* the overview, read once for the sections that show its parts */
	struct sum_overview overview;
	bool overview_read, have_overview;
	/* its busy walk's intervals, for the utilisation plot (busy_tape.h)
	 * and lent to the diagnosis (busy_lent), made before either starts */
	struct busy_tape *busy_tape;
	bool busy_tape_tried;
	struct diag_busy_source busy_lent;
};

/* The page's diagnosis of store (the page's own, or a connection of its
 * own on another thread: html_report.c), what it made left in keep: *out
 * NULL, and failed saying why, when it could not be made. busy: the
 * overview's busy intervals lent (html_page__busy_lent), or NULL. */
void html_page__diagnose(struct prof_store *store, const struct diag_busy_source *busy, struct diag_keep *keep,
			 struct diag_report **out, char *failed, size_t cap);
/* The overview's busy intervals as the diagnosis may borrow them, the
 * tape made now if it is not yet: the diagnosis takes them once the
 * overview's walk has written them, and walks the rows itself before.
 * NULL: no tape, or a page of some rows only (--rank, --window). */
const struct diag_busy_source *html_page__busy_lent(struct html_page *p);
/* The page's diagnosis started on a thread of its own (html_apart.c);
 * NULL when it is to be made in place, on first use: the capture is held
 * in memory, still being written, narrowed to some ranks or a window, or
 * no thread could start. */
struct html_apart;
struct html_apart *html_apart__start(struct html_page *p);
/* Waits for it and gives it to the page, as if made there (a NULL a:
 * nothing). kept NULL: the diagnosis's connection is closed; else it is
 * handed over in *kept (NULL when there was none), for sections that read
 * on beside the page's own (the caller closes it). */
void html_apart__finish(struct html_apart *a, struct html_page *p, struct prof_store **kept);
/* The calling thread, its own sections done, takes pieces of the
 * diagnosis's parallel work (a job's ranks, threads__help) until the
 * diagnosis is made: with PERFKIT_THREADS=1 a two-rank capture's ranks
 * were diagnosed one after the other while the page's thread waited. */
void html_apart__help(struct html_apart *a);
/* Waits until its diagnosis is made (true) or *stop is set and
 * html_apart__wake called (false, unless it is made too). */
bool html_apart__wait(struct html_apart *a, const atomic_bool *stop);
void html_apart__wake(struct html_apart *a);
/* The diagnosis's connection, which nothing reads once html_apart__wait
 * said it is made, until html_apart__finish. */
struct prof_store *html_apart__store(struct html_apart *a);
/* Starts the gnuplot that draws the page's plots (gnuplot_session.h), in
 * the page's temporary folder, so that its start overlaps the reading of
 * the capture; a page whose gnuplot could not start tries again at its
 * first plot, which then says why. */
void html_page__start_gnuplot(struct html_page *p);
/* Frees what the page made as it went (its diagnosis and analyses). */
void html_page__exit(struct html_page *p);

#endif
