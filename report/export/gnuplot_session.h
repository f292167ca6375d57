/* gnuplot_session.h - one gnuplot drawing every plot of a page.
 *
 * Starting gnuplot costs about 35 ms here, drawing one of the page's plots
 * about 3 ms: a page of four plots took 0.15 s in four processes and
 * 0.04 s in one. The session is one gnuplot reading commands from a socket
 * (its standard input and output), started in the page's plot folder with
 * its messages in gnuplot.log there. Each plot clears gnuplot's state
 * (`reset session`), changes to the plot's folder, loads its script and
 * closes the output, then prints a line that says whether an error
 * stopped it; the plot is drawn once that line is read.
 *
 * gnuplot is the registered helper (prof/temp_files.h) while the session
 * lasts, so SIGINT, SIGTERM or SIGHUP during the page stops it. */
#ifndef REPORT_GNUPLOT_SESSION_H
#define REPORT_GNUPLOT_SESSION_H

#include "prof/error.h"

/* gnuplot draws a plot of this report in well under a second; one that runs
 * this long is stuck. */
#define GNUPLOT_PLOT_TIMEOUT_S 60

struct gnuplot_session;

/* gnuplot (an executable path from gnuplot__find) started in dir, which
 * is registered with prof/temp_files.h. PROF_E_IO when it cannot start. */
int gnuplot_session__start(const char *gnuplot, const char *dir, struct gnuplot_session **out,
			   struct prof_error *err);

/* Draw script, a file in dir (whose path may not hold a line break: gnuplot
 * reads its commands by the line), or in the folder the session started in
 * where dir is NULL. 0
 * once gnuplot has closed the plot's output; PROF_E_IO with gnuplot's
 * error message when the script failed, ran over GNUPLOT_PLOT_TIMEOUT_S or
 * gnuplot stopped. A session whose gnuplot stopped, or was stopped, is
 * ended and *s set to NULL: the next plot starts another. */
int gnuplot_session__draw(struct gnuplot_session **s, const char *dir, const char *script,
			  struct prof_error *err);

/* Stop gnuplot and free the session (NULL: nothing). */
void gnuplot_session__end(struct gnuplot_session *s);

#endif
