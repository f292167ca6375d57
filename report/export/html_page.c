/* html_page.c - the services the HTML report's sections use (html_report.h):
 * the page's output, store and table sink, notes, the plots' folders and
 * the plots drawn through gnuplot. Below the sections and the document. */
#include "html_page_impl.h"
#include "busy_tape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/diagnose_run.h"
#include "gnuplot_session.h"
#include "plots_gnuplot.h"
#include "prof/escape.h"
#include "prof/temp_files.h"
#include "sink/sink.h"

FILE *html_page__out(struct html_page *p) { return p->out; }
struct prof_store *html_page__store(struct html_page *p) { return p->store; }
struct rpt_sink *html_page__tables(struct html_page *p) { return p->tables; }
struct busy_tape *html_page__busy_tape(struct html_page *p) { return p->busy_tape; }

void html_page__diagnose(struct prof_store *store, const struct diag_busy_source *busy, struct diag_keep *keep,
			 struct diag_report **out, char *failed, size_t cap)
{
	struct diag_settings settings = { 0 };
	struct prof_error err = { 0 };

	*out = NULL;
	if (diag_settings__init(&settings) < 0) {
		prof_error__set(&err, PROF_E_NOMEM, "out of memory");
	} else {
		settings.busy = busy;
		if (diag__run_keeping(store, &settings, keep, out, &err) < 0)
			*out = NULL;
	}
	diag_settings__exit(&settings);
	snprintf(failed, cap, "%s", err.msg[0] ? err.msg : "the diagnosis did not run");
}

const struct diag_report *html_page__diagnosis(struct html_page *p, const char **why)
{
	if (!p->diagnosed) {
		p->diagnosed = true;
		html_page__diagnose(p->store, html_page__busy_lent(p), &p->keep, &p->diagnosis,
				    p->diagnosis_failed, sizeof p->diagnosis_failed);
	}
	*why = p->diagnosis_failed;
	return p->diagnosis;
}

struct timeline_units *html_page__timeline(struct html_page *p)
{
	const char *why;

	html_page__diagnosis(p, &why);
	return &p->keep.timeline;
}

const struct rank_times *html_page__rank_times(struct html_page *p)
{
	const char *why;

	html_page__diagnosis(p, &why);
	return p->keep.have_times ? &p->keep.times : NULL;
}

static void open_busy_tape(struct html_page *p)
{
	struct prof_error ignored = { 0 };
	char dir[4096];

	if (p->busy_tape_tried)
		return;
	p->busy_tape_tried = true;
	if (html_page__mkdir(p, "busy", dir, sizeof dir, &ignored) == 0)
		p->busy_tape = busy_tape__open(dir);
	p->busy_lent = (struct diag_busy_source){ busy_tape__replay_lent, p->busy_tape };
}

const struct diag_busy_source *html_page__busy_lent(struct html_page *p)
{
	open_busy_tape(p);
	return p->busy_tape && !prof_store__restricted(p->store) ? &p->busy_lent : NULL;
}

const struct sum_overview *html_page__overview(struct html_page *p)
{
	struct prof_error ignored = { 0 };

	if (!p->overview_read) {
		struct sum_busy_tap tap;

		p->overview_read = true;
		/* the utilisation plot, drawn after the diagnosis, and the
		 * diagnosis's busy union read the walk's intervals from the
		 * tape rather than walk again */
		open_busy_tape(p);
		tap = busy_tape__tap(p->busy_tape);
		p->have_overview = sum_overview__load_tapped(p->store, &p->overview,
							     p->busy_tape ? &tap : NULL, &ignored) == 0;
		if (p->have_overview)
			busy_tape__seal(p->busy_tape);
	}
	return p->have_overview ? &p->overview : NULL;
}

void html_page__exit(struct html_page *p)
{
	diag_report__delete(p->diagnosis);
	p->diagnosis = NULL;
	diag_keep__exit(&p->keep);
	gnuplot_session__end(p->gnuplot_session);
	p->gnuplot_session = NULL;
	if (p->have_overview)
		sum_overview__exit(&p->overview);
	busy_tape__close(p->busy_tape);
	p->busy_tape = NULL;
}

void html_page__note(struct html_page *p, const char *text)
{
	fputs("<p class=\"note\">", p->out);
	prof_fputs_html(p->out, text);
	fputs("</p>\n", p->out);
}

int html_page__mkdir(struct html_page *p, const char *name, char *path, size_t cap,
		     struct prof_error *err)
{
	if (!p->tmpdir[0] && plots_tmpdir__create(p->tmpdir, sizeof p->tmpdir, err) < 0) {
		p->tmpdir[0] = '\0';
		return err->code;
	}
	if (plots_path(path, cap, p->tmpdir, name, err) < 0)
		return err->code;
	if (prof_temp__add(path, PROF_TEMP_DIR) < 0)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (mkdir(path, 0700) != 0)
		return prof_error__set(err, PROF_E_IO, "cannot create '%s': %s", path, strerror(errno));
	return 0;
}

int html_page__expect(struct html_page *p, const char *dir, const char *const *names, size_t n,
		      struct prof_error *err)
{
	char path[4096];

	(void)p;
	for (size_t i = 0; i < n; i++) {
		if (plots_path(path, sizeof path, dir, names[i], err) < 0)
			return err->code;
		if (prof_temp__add(path, PROF_TEMP_FILE) < 0)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	return 0;
}

void html_page__start_gnuplot(struct html_page *p)
{
	struct prof_error ignored = { 0 };

	if (!p->tmpdir[0] && plots_tmpdir__create(p->tmpdir, sizeof p->tmpdir, &ignored) < 0) {
		p->tmpdir[0] = '\0';
		return;
	}
	if (!p->gnuplot_session)
		gnuplot_session__start(p->gnuplot, p->tmpdir, &p->gnuplot_session, &ignored);
}

/* script drawn in dir by the page's one gnuplot (html_page__start_gnuplot),
 * started again where it could not start or stopped; where dir's path
 * holds a line break, which gnuplot's commands cannot, by a gnuplot of its
 * own started there. */
static int draw(struct html_page *p, const char *dir, const char *script, struct prof_error *why)
{
	struct gnuplot_session *own = NULL;
	int rc;

	if (!strpbrk(dir, "\r\n"))
		return (p->gnuplot_session ||
			gnuplot_session__start(p->gnuplot, p->tmpdir, &p->gnuplot_session, why) == 0)
			       ? gnuplot_session__draw(&p->gnuplot_session, dir, script, why)
			       : why->code;
	/* one helper at a time is stopped by a signal (prof/temp_files.h) */
	gnuplot_session__end(p->gnuplot_session);
	p->gnuplot_session = NULL;
	rc = gnuplot_session__start(p->gnuplot, dir, &own, why);
	if (rc == 0)
		rc = gnuplot_session__draw(&own, NULL, script, why);
	gnuplot_session__end(own);
	return rc;
}

void html_page__plot(struct html_page *p, const char *dir, const char *script, const char *svg,
		     const char *caption)
{
	struct prof_error why = { 0 };
	char path[4096], prefix[32], msg[PROF_ERROR_MSG_MAX + 64];

	if (!p->have_gnuplot) {
		if (!p->told_no_gnuplot)
			html_page__note(p, "gnuplot was not found on PATH, so this report has no "
					   "plots. Install gnuplot (Debian: gnuplot-nox) and run "
					   "perfkit report --format=html again to get them.");
		p->told_no_gnuplot = true;
		return;
	}
	snprintf(prefix, sizeof prefix, "plot%d", ++p->nplots);
	if (plots_path(path, sizeof path, dir, svg, &why) == 0 &&
	    (prof_temp__add(path, PROF_TEMP_FILE) == 0 ||
	     prof_error__set(&why, PROF_E_NOMEM, "out of memory") == 0) &&
	    draw(p, dir, script, &why) == 0) {
		/* the figure is opened only once the SVG exists, so a failure
		 * leaves a note rather than half a figure */
		struct stat st;

		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			fprintf(p->out, "<figure class=\"plot\" id=\"%s\">\n", prefix);
			if (gnuplot__inline_svg(path, prefix, p->out, &why) == 0) {
				fputs("<figcaption>", p->out);
				prof_fputs_html(p->out, caption);
				fputs("</figcaption>\n</figure>\n", p->out);
				return;
			}
			fputs("</figure>\n", p->out);
		} else {
			prof_error__set(&why, PROF_E_IO, "gnuplot wrote no %s", svg);
		}
	}
	snprintf(msg, sizeof msg, "The plot \"%s\" could not be drawn: %s", caption, why.msg);
	html_page__note(p, msg);
}
