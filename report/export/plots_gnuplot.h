/* plots_gnuplot.h - drawing plots with gnuplot as a separate process.
 *
 * A plot is a data file and a script in a private temporary folder. The
 * script is constant text chosen by the caller: strings from a capture never
 * go into it (series titles and labels come from data-file columns or are
 * printed into the HTML). One gnuplot draws every plot of a page, each in
 * its folder (gnuplot_session.h); the SVG it writes is then copied into the
 * page.
 *
 * The folder and every file perfkit writes into it, or has gnuplot write
 * (gnuplot.log, each SVG the page asks for), are registered with
 * prof/temp_files.h, and gnuplot while it runs, so that SIGINT, SIGTERM or
 * SIGHUP during a report leaves none of them behind. */
#ifndef REPORT_PLOTS_GNUPLOT_H
#define REPORT_PLOTS_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prof/error.h"

/* The terminal line every script starts with: scalable SVG, plain text
 * (no enhanced-text markup), a font Debian ships. */
#define GNUPLOT_SVG_TERMINAL(W, H)                                                   \
	"set terminal svg size " #W "," #H " dynamic noenhanced font 'DejaVu Sans,11' " \
	"background rgb 'white'\n"

/* dir/name into buf; PROF_E_IO with a message when it does not fit. */
int plots_path(char *buf, size_t cap, const char *dir, const char *name, struct prof_error *err);

/* Find program (a name looked up on PATH, or a path); path receives the
 * executable. false when there is none. */
bool gnuplot__find(const char *program, char *path, size_t cap);

/* A data file dir/name opened for writing (NULL, err filled, when it
 * cannot be), and its close, which reports a write that failed. dir is a
 * folder under plots_tmpdir__create's, where the name is registered before
 * the file is made (as by gnuplot__write_file). */
FILE *plots_data__open(const char *dir, const char *name, struct prof_error *err);
int plots_data__close(FILE *f, struct prof_error *err);

/* Write text into the file dir/name. */
int gnuplot__write_file(const char *dir, const char *name, const char *text,
			struct prof_error *err);

/* Copy the SVG at path into out as an inline element: the XML prolog and
 * gnuplot's own <title>/<desc> are dropped, and ids (and the references to
 * them) get id_prefix so several plots can share one page. */
int gnuplot__inline_svg(const char *path, const char *id_prefix, FILE *out,
			struct prof_error *err);

/* A private folder $TMPDIR/perfkit-html-XXXXXX (or under /tmp), and its
 * removal with everything perfkit wrote into it (two levels deep). */
int plots_tmpdir__create(char *path, size_t cap, struct prof_error *err);
void plots_tmpdir__remove(const char *path);

#endif
