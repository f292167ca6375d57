/* sink.h - report/sink, the renderers: text, CSV, JSON and HTML tables over
 * the row/column model of table.h. A report yields rows into a sink and never
 * knows how it will be printed.
 *
 * What the folder may use: libprof's escaping and errors, nothing else in
 * report/. Everything else in report/, cli/ and tui/ may use it. */
#ifndef REPORT_SINK_H
#define REPORT_SINK_H

#include <stdbool.h>
#include <stddef.h>

#include "symbol.h"
#include "table.h"

/* HTML: each report as a heading and a <table> (a fragment: the page around
 * it belongs to the caller, e.g. the HTML report or the diff page). */
struct rpt_html_options {
	int heading_level;  /* 2 for <h2>, ...; 0: 3 */
	size_t max_rows;    /* rows shown per report, the rest counted; 0: all */
	/* A CSS class for a row (NULL: none), e.g. how a diff entry changed.
	 * The class passes through the HTML escaper like any capture text. */
	const char *(*row_class)(const struct rpt_column *cols, int ncols,
				 const struct rpt_cell *cells);
	/* RPT_SYMBOL cells in their short form (symbol.h), the full name in
	 * the cell's title (shown on hover); false: full names. */
	bool short_names;
};
struct rpt_sink *rpt_sink_html__new(FILE *out, const struct rpt_html_options *opts);

#endif
