/* sink_csv.c - CSV renderer (RFC 4180): one header line and one line per
 * row; several reports on one sink are separated by an empty line. A note
 * (rows left out) has no place in the table, so it goes to stderr. */
#include "sink_cell.h"
#include "sink_impl.h"

#include <stdlib.h>
#include <string.h>

#include "prof/error.h"
#include "prof/escape.h"

struct csv_sink {
	struct rpt_sink sink;
	struct rpt_columns cols;
	char *report;      /* the name of the report being written */
	int nreports;
};

static int csv_begin(struct rpt_sink *sink, const char *name, const char *title,
		     const struct rpt_column *cols, int ncols)
{
	struct csv_sink *c = sink->priv;
	int rc;

	(void)title;
	rpt_columns__exit(&c->cols);
	free(c->report);
	c->report = strdup(name ? name : "");
	rc = c->report ? rpt_columns__copy(&c->cols, cols, ncols) : PROF_E_NOMEM;
	if (rc < 0)
		return rc;
	if (c->nreports++ > 0)
		fputs("\r\n", sink->out);
	for (int i = 0; i < ncols; i++) {
		if (i)
			fputc(',', sink->out);
		prof_fputs_csv(sink->out, cols[i].name);
	}
	fputs("\r\n", sink->out);
	return 0;
}

static int csv_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct csv_sink *c = sink->priv;
	char num[64];

	for (int i = 0; i < c->cols.ncols; i++) {
		const struct rpt_column *col = &c->cols.cols[i];

		if (i)
			fputc(',', sink->out);
		if (rpt_type__is_text(col->type)) {
			if (!cells[i].is_null && cells[i].s)
				prof_fputs_csv(sink->out, cells[i].s);
		} else if (rpt_cell__format_number(num, sizeof num, col, &cells[i], false)) {
			fputs(num, sink->out);
		}
	}
	fputs("\r\n", sink->out);
	return ferror(sink->out) ? PROF_E_IO : 0;
}

static int csv_note(struct rpt_sink *sink, const struct rpt_note *note)
{
	struct csv_sink *c = sink->priv;

	if (note->count <= 0)
		return 0;
	fputs("perfkit: ", stderr);
	prof_fputs_term(stderr, c->report ? c->report : "");
	fputs(": ", stderr);
	prof_fputs_term(stderr, note->text ? note->text : "");
	fputc('\n', stderr);
	return 0;
}

static int csv_end(struct rpt_sink *sink)
{
	return ferror(sink->out) ? PROF_E_IO : 0;
}

static void csv_destroy(struct rpt_sink *sink)
{
	struct csv_sink *c = sink->priv;

	fflush(sink->out);
	rpt_columns__exit(&c->cols);
	free(c->report);
	free(c);
}

struct rpt_sink *rpt_sink_csv__new(FILE *out)
{
	struct csv_sink *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->sink.begin = csv_begin;
	c->sink.row = csv_row;
	c->sink.end = csv_end;
	c->sink.destroy = csv_destroy;
	c->sink.note = csv_note;
	c->sink.out = out;
	c->sink.priv = c;
	return &c->sink;
}
