/* sink_html.c - HTML renderer: each report as a heading (id = the report's
 * name, so pages can link to it) and a table, numbers right-aligned and
 * grouped as in the text sink, every string through the HTML escaper.
 * Rows are written as they arrive; past max_rows they are only counted. */
#include "sink.h"
#include "sink_cell.h"

#include <stdlib.h>
#include <string.h>

#include "prof/error.h"
#include "prof/escape.h"

struct html_sink {
	struct rpt_sink sink;
	struct rpt_html_options opts;
	struct rpt_columns cols;
	struct rpt_notes notes;
	size_t nrows;
	bool in_report;
};

static void close_report(struct html_sink *h)
{
	FILE *f = h->sink.out;

	if (!h->in_report)
		return;
	if (h->nrows == 0)
		fprintf(f, "<tr><td class=\"empty\" colspan=\"%d\">no data</td></tr>\n",
			h->cols.ncols > 0 ? h->cols.ncols : 1);
	else if (h->opts.max_rows && h->nrows > h->opts.max_rows)
		fprintf(f, "<tr><td class=\"more\" colspan=\"%d\">%zu more rows not shown</td></tr>\n",
			h->cols.ncols > 0 ? h->cols.ncols : 1, h->nrows - h->opts.max_rows);
	fputs("</tbody>\n</table>\n</div>\n", f);
	for (int i = 0; i < h->notes.n; i++) {
		if (h->notes.note[i].count <= 0)
			continue;
		fputs("<p class=\"note\">", f);
		prof_fputs_html(f, h->notes.note[i].text);
		fputs("</p>\n", f);
	}
	rpt_notes__exit(&h->notes);
	h->in_report = false;
}

static int html_note(struct rpt_sink *sink, const struct rpt_note *note)
{
	struct html_sink *h = sink->priv;

	return h->in_report ? rpt_notes__add(&h->notes, note) : PROF_E_USAGE;
}

static int html_begin(struct rpt_sink *sink, const char *name, const char *title,
		      const struct rpt_column *cols, int ncols)
{
	struct html_sink *h = sink->priv;
	int level = h->opts.heading_level ? h->opts.heading_level : 3;
	FILE *f = sink->out;
	int rc;

	close_report(h);
	rpt_columns__exit(&h->cols);
	rc = rpt_columns__copy(&h->cols, cols, ncols);
	if (rc < 0)
		return rc;
	fprintf(f, "<h%d id=\"", level);
	prof_fputs_html(f, name ? name : "");
	fputs("\">", f);
	prof_fputs_html(f, title ? title : "");
	fprintf(f, "</h%d>\n<div class=\"table\">\n<table>\n<thead><tr>", level);
	for (int i = 0; i < ncols; i++) {
		fputs(rpt_type__is_text(cols[i].type) ? "<th>" : "<th class=\"num\">", f);
		prof_fputs_html(f, cols[i].name);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	h->nrows = 0;
	h->in_report = true;
	return ferror(f) ? PROF_E_IO : 0;
}

/* A name's short form, the full name on hover; a name without a shorter
 * form as it is. */
static void write_symbol(FILE *f, const char *name)
{
	char small[512];
	rpt_symbol__shorten(name, RPT_SYMBOL_SHORT, small, sizeof small);
	if (strcmp(small, name) == 0) {
		fputs("<td>", f);
		prof_fputs_html(f, name);
		return;
	}
	fputs("<td class=\"symbol\" title=\"", f);
	prof_fputs_html(f, name);
	fputs("\">", f);
	prof_fputs_html(f, small);
}

static int html_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct html_sink *h = sink->priv;
	const char *cls = NULL;
	FILE *f = sink->out;

	if (!h->in_report)
		return PROF_E_USAGE;
	if (++h->nrows > h->opts.max_rows && h->opts.max_rows)
		return 0;
	if (h->opts.row_class)
		cls = h->opts.row_class(h->cols.cols, h->cols.ncols, cells);
	if (cls) {
		fputs("<tr class=\"", f);
		prof_fputs_html(f, cls);
		fputs("\">", f);
	} else {
		fputs("<tr>", f);
	}
	for (int i = 0; i < h->cols.ncols; i++) {
		const struct rpt_column *col = &h->cols.cols[i];
		char num[64];

		if (col->type == RPT_SYMBOL && h->opts.short_names && !cells[i].is_null && cells[i].s) {
			write_symbol(f, cells[i].s);
		} else if (rpt_type__is_text(col->type)) {
			fputs("<td>", f);
			if (!cells[i].is_null && cells[i].s)
				prof_fputs_html(f, cells[i].s);
		} else {
			fputs("<td class=\"num\">", f);
			if (rpt_cell__format_number(num, sizeof num, col, &cells[i], true))
				fputs(num, f);
			else if (cells[i].is_null && cells[i].s)
				prof_fputs_html(f, cells[i].s);
		}
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
	return ferror(f) ? PROF_E_IO : 0;
}

static int html_end(struct rpt_sink *sink)
{
	close_report(sink->priv);
	return ferror(sink->out) ? PROF_E_IO : 0;
}

static void html_destroy(struct rpt_sink *sink)
{
	struct html_sink *h = sink->priv;

	close_report(h);
	fflush(sink->out);
	rpt_columns__exit(&h->cols);
	free(h);
}

struct rpt_sink *rpt_sink_html__new(FILE *out, const struct rpt_html_options *opts)
{
	struct html_sink *h = calloc(1, sizeof *h);

	if (!h)
		return NULL;
	if (opts)
		h->opts = *opts;
	h->sink.begin = html_begin;
	h->sink.row = html_row;
	h->sink.end = html_end;
	h->sink.destroy = html_destroy;
	h->sink.note = html_note;
	h->sink.out = out;
	h->sink.priv = h;
	return &h->sink;
}
