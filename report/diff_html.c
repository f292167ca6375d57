/* diff_html.c - `perfkit diff --format=html`: one self-contained page with
 * the verdict, the totals and the three sections as HTML tables.
 *
 * It is a table sink like the text, CSV and JSON ones, so the page holds
 * exactly the rows the other formats print; additions, removals, slowdowns
 * and speed-ups are coloured through a class on the row. */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "sinks.h"

struct html_sink {
	struct rpt_sink sink;
	struct rpt_columns cols;
};

static int html_begin(struct rpt_sink *sink, const char *name, const char *title,
		      const struct rpt_column *cols, int ncols)
{
	struct html_sink *h = (struct html_sink *)sink;
	FILE *f = sink->out;

	rpt_columns__exit(&h->cols);
	if (rpt_columns__copy(&h->cols, cols, ncols) < 0)
		return PROF_E_NOMEM;
	fputs("<h2 id=\"", f);
	prof_fputs_html(f, name);
	fputs("\">", f);
	prof_fputs_html(f, title);
	fputs("</h2>\n<table>\n<thead><tr>", f);
	for (int i = 0; i < ncols; i++) {
		fputs("<th>", f);
		prof_fputs_html(f, cols[i].name);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	return 0;
}

static int html_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct html_sink *h = (struct html_sink *)sink;
	FILE *f = sink->out;
	const char *cls = "";

	/* The first column of the diff sections says how the entry changed. */
	if (h->cols.ncols > 0 && h->cols.cols[0].type == RPT_TEXT && cells[0].s &&
	    strcmp(h->cols.cols[0].name, "Change") == 0)
		cls = cells[0].s;
	fputs("<tr class=\"", f);
	prof_fputs_html(f, cls);
	fputs("\">", f);
	for (int i = 0; i < h->cols.ncols; i++) {
		const struct rpt_column *col = &h->cols.cols[i];
		char num[64];

		if (col->type == RPT_TEXT) {
			fputs("<td>", f);
			if (!cells[i].is_null && cells[i].s)
				prof_fputs_html(f, cells[i].s);
		} else {
			fputs("<td class=\"num\">", f);
			if (rpt_cell__format_number(num, sizeof num, col, &cells[i], true))
				fputs(num, f);
		}
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
	return 0;
}

static int html_end(struct rpt_sink *sink)
{
	fputs("</tbody>\n</table>\n", sink->out);
	return 0;
}

static void html_destroy(struct rpt_sink *sink)
{
	struct html_sink *h = (struct html_sink *)sink;

	rpt_columns__exit(&h->cols);
	free(h);
}

int diff__write_html(const struct diff_result *r, FILE *out)
{
	struct html_sink *h = calloc(1, sizeof *h);
	int rc;

	if (!h)
		return PROF_E_NOMEM;
	h->sink = (struct rpt_sink){ .begin = html_begin, .row = html_row, .end = html_end,
				     .destroy = html_destroy, .out = out, .priv = h };
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>perfkit diff</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em}\n"
	      "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}\n"
	      "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      "tr.slower td,tr.added td{background:#fde8e8}\n"
	      "tr.faster td,tr.removed td{background:#e6f4ea}\n"
	      "</style>\n</head>\n<body>\n<h1>perfkit diff</h1>\n<p>BASE: ", out);
	prof_fputs_html(out, r->base->path);
	fputs("<br>NEW: ", out);
	prof_fputs_html(out, r->new->path);
	fputs("</p>\n", out);
	rc = diff__report(r, &h->sink);
	fputs("</body>\n</html>\n", out);
	html_destroy(&h->sink);
	return rc;
}
