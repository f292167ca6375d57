/* sink_json.c - JSON renderer: one document for everything begun on the sink,
 *   {"reports":[{"name":..,"title":..,"columns":[..],"rows":[{col:value}],
 *                <note key>: <count>, ...}]}
 * written as rows arrive (nothing is held in memory) and closed by destroy,
 * so the output stays a valid document even when a report stops early. */
#include "sink_cell.h"
#include "sink_impl.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "prof/error.h"
#include "prof/escape.h"

struct json_sink {
	struct rpt_sink sink;
	struct rpt_columns cols;
	struct rpt_notes notes;
	int nreports;
	long nrows;
	bool in_report;
};

static void close_report(struct json_sink *j)
{
	if (!j->in_report)
		return;
	fputs("\n]", j->sink.out);
	for (int i = 0; i < j->notes.n; i++) {
		fputc(',', j->sink.out);
		prof_fputs_json(j->sink.out, j->notes.note[i].key);
		fprintf(j->sink.out, ":%" PRId64, j->notes.note[i].count);
	}
	fputc('}', j->sink.out);
	rpt_notes__exit(&j->notes);
	j->in_report = false;
}

static int json_note(struct rpt_sink *sink, const struct rpt_note *note)
{
	struct json_sink *j = sink->priv;

	return j->in_report ? rpt_notes__add(&j->notes, note) : PROF_E_USAGE;
}

static int json_begin(struct rpt_sink *sink, const char *name, const char *title,
		      const struct rpt_column *cols, int ncols)
{
	struct json_sink *j = sink->priv;
	FILE *f = sink->out;
	int rc;

	close_report(j);
	rpt_columns__exit(&j->cols);
	rc = rpt_columns__copy(&j->cols, cols, ncols);
	if (rc < 0)
		return rc;
	fputs(j->nreports++ ? ",\n" : "{\"reports\":[\n", f);
	fputs("{\"name\":", f);
	prof_fputs_json(f, name ? name : "");
	fputs(",\"title\":", f);
	prof_fputs_json(f, title ? title : "");
	fputs(",\"columns\":[", f);
	for (int i = 0; i < ncols; i++) {
		if (i)
			fputc(',', f);
		prof_fputs_json(f, cols[i].name);
	}
	fputs("],\"rows\":[", f);
	j->in_report = true;
	j->nrows = 0;
	return 0;
}

static int json_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct json_sink *j = sink->priv;
	FILE *f = sink->out;
	char num[64];

	if (!j->in_report)
		return PROF_E_USAGE;
	fputs(j->nrows++ ? ",\n{" : "\n{", f);
	for (int i = 0; i < j->cols.ncols; i++) {
		const struct rpt_column *col = &j->cols.cols[i];

		if (i)
			fputc(',', f);
		prof_fputs_json(f, col->name);
		fputc(':', f);
		if (rpt_type__is_text(col->type)) {
			if (cells[i].is_null || !cells[i].s)
				fputs("null", f);
			else
				prof_fputs_json(f, cells[i].s);
		} else if (rpt_cell__format_number(num, sizeof num, col, &cells[i], false)) {
			fputs(num, f);
		} else {
			fputs("null", f);
		}
	}
	fputc('}', f);
	return ferror(f) ? PROF_E_IO : 0;
}

static int json_end(struct rpt_sink *sink)
{
	struct json_sink *j = sink->priv;

	close_report(j);
	return ferror(sink->out) ? PROF_E_IO : 0;
}

static void json_destroy(struct rpt_sink *sink)
{
	struct json_sink *j = sink->priv;

	close_report(j);
	fputs(j->nreports ? "\n]}\n" : "{\"reports\":[]}\n", sink->out);
	fflush(sink->out);
	rpt_columns__exit(&j->cols);
	free(j);
}

struct rpt_sink *rpt_sink_json__new(FILE *out)
{
	struct json_sink *j = calloc(1, sizeof *j);

	if (!j)
		return NULL;
	j->sink.begin = json_begin;
	j->sink.row = json_row;
	j->sink.end = json_end;
	j->sink.destroy = json_destroy;
	j->sink.note = json_note;
	j->sink.out = out;
	j->sink.priv = j;
	return &j->sink;
}
