/* diff_html.c - `perfkit diff --format=html`: one self-contained page with
 * the verdict, the loops, the totals and the four sections as HTML tables.
 *
 * The tables come from the HTML sink, so the page holds exactly the rows
 * the other formats print; additions, removals, slowdowns, speed-ups and
 * changed calls per iteration are coloured through a class on the row. */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "sink/sink.h"

/* The first column of the diff sections says how the entry changed: its
 * class is that word ("more calls" and "fewer calls" share "calls"). */
static const char *change_class(const struct rpt_column *cols, int ncols,
				const struct rpt_cell *cells)
{
	static const struct { enum diff_change change; const char *cls; } classes[] = {
		{ DIFF_SLOWER, "slower" }, { DIFF_FASTER, "faster" }, { DIFF_ADDED, "added" },
		{ DIFF_REMOVED, "removed" }, { DIFF_MORE_CALLS, "calls" }, { DIFF_FEWER_CALLS, "calls" },
	};

	int c = 0;

	/* two jobs' sections open with the rank */
	if (ncols > 1 && strcmp(cols[0].name, "Rank") == 0)
		c = 1;
	if (ncols <= c || cols[c].type != RPT_TEXT || !cells[c].s || cells[c].is_null ||
	    strcmp(cols[c].name, "Change") != 0)
		return NULL;
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (strcmp(cells[c].s, diff_change__name(classes[i].change)) == 0)
			return classes[i].cls;
	return NULL;
}

int diff__write_html(const struct diff_result *r, FILE *out)
{
	const struct rpt_html_options opts = { .heading_level = 2, .row_class = change_class };
	struct rpt_sink *sink = rpt_sink_html__new(out, &opts);
	int rc;

	if (!sink)
		return PROF_E_NOMEM;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>perfkit diff</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em}\n"
	      "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}\n"
	      "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      "tr.slower td,tr.added td{background:#fde8e8}\n"
	      "tr.faster td,tr.removed td{background:#e6f4ea}\n"
	      "tr.calls td{background:#fdf6e3}\n"
	      "</style>\n</head>\n<body>\n<h1>perfkit diff</h1>\n<p>BASE: ", out);
	prof_fputs_html(out, r->base->path);
	fputs("<br>NEW: ", out);
	prof_fputs_html(out, r->new->path);
	fputs("</p>\n", out);
	rc = diff__report(r, sink);
	rpt_sink__delete(sink);
	fputs("</body>\n</html>\n", out);
	return rc;
}
