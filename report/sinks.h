/* sinks.h - internals shared by the renderers of table.h (text, CSV, JSON,
 * HTML):
 * their constructors and the one number formatter, so every sink prints the
 * same value the same way. */
#ifndef REPORT_SINKS_H
#define REPORT_SINKS_H

#include <stdbool.h>
#include <stddef.h>

#include "table.h"

struct rpt_sink *rpt_sink_text__new(FILE *out);
struct rpt_sink *rpt_sink_csv__new(FILE *out);
struct rpt_sink *rpt_sink_json__new(FILE *out);

/* HTML: each report as a heading and a <table> (a fragment: the page around
 * it belongs to the caller, e.g. the HTML report or the diff page). */
struct rpt_html_options {
	int heading_level;  /* 2 for <h2>, ...; 0: 3 */
	size_t max_rows;    /* rows shown per report, the rest counted; 0: all */
	/* A CSS class for a row (NULL: none), e.g. how a diff entry changed.
	 * The class passes through the HTML escaper like any capture text. */
	const char *(*row_class)(const struct rpt_column *cols, int ncols,
				 const struct rpt_cell *cells);
};
struct rpt_sink *rpt_sink_html__new(FILE *out, const struct rpt_html_options *opts);

/* Format a numeric cell (RPT_INT, RPT_REAL, RPT_PERCENT) into buf. grouping
 * adds thousands separators (text only). Returns false for a cell that has
 * no number to print: NULL, or a non-finite double. */
bool rpt_cell__format_number(char *buf, size_t cap, const struct rpt_column *col,
			     const struct rpt_cell *cell, bool grouping);

/* A private copy of a report's columns, so a sink never depends on how long
 * the caller keeps its array alive. */
struct rpt_columns {
	struct rpt_column *cols;
	int ncols;
};
int rpt_columns__copy(struct rpt_columns *dst, const struct rpt_column *cols, int ncols);
void rpt_columns__exit(struct rpt_columns *c);

#endif
