/* sink_cell.h - what every renderer shares: the one number formatter, so
 * every sink prints the same value the same way, and private copies of a
 * report's columns and notes. Knows no sink. */
#ifndef REPORT_SINK_CELL_H
#define REPORT_SINK_CELL_H

#include <stdbool.h>
#include <stddef.h>

#include "table.h"

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

/* Private copies of the notes given to the report being written, for the
 * sinks that print them after its rows. */
struct rpt_notes {
	struct rpt_note *note; /* key and text malloc'd */
	int n;
};
int rpt_notes__add(struct rpt_notes *ns, const struct rpt_note *note);
void rpt_notes__exit(struct rpt_notes *ns);

#endif
