/* report_capture.h - a sink for report unit tests that keeps every row in
 * memory (values, not printed text) and every note, so tests compare
 * numbers exactly. */
#ifndef PERFKIT_REPORT_CAPTURE_H
#define PERFKIT_REPORT_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/table.h"

#define CAP_MAX_REPORTS 16
#define CAP_MAX_COLS 24
#define CAP_MAX_NOTES 4

struct cap_report {
	char name[64];
	int ncols;
	char *col[CAP_MAX_COLS];
	enum rpt_type type[CAP_MAX_COLS];
	struct rpt_cell *cells; /* nrows x ncols, strings strdup'd */
	int nrows;
	int ended;
	char note_key[CAP_MAX_NOTES][32];
	int64_t note_count[CAP_MAX_NOTES];
	int nnotes;
};

struct cap_sink {
	struct rpt_sink sink;
	struct cap_report rep[CAP_MAX_REPORTS];
	int nreports;
};

static int cap_begin(struct rpt_sink *sink, const char *name, const char *title,
		     const struct rpt_column *cols, int ncols)
{
	struct cap_sink *c = sink->priv;
	struct cap_report *r = &c->rep[c->nreports++];

	(void)title;
	snprintf(r->name, sizeof r->name, "%s", name);
	r->ncols = ncols;
	for (int i = 0; i < ncols; i++) {
		r->col[i] = strdup(cols[i].name);
		r->type[i] = cols[i].type;
	}
	return 0;
}

static int cap_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct cap_sink *c = sink->priv;
	struct cap_report *r = &c->rep[c->nreports - 1];

	r->cells = realloc(r->cells, sizeof *r->cells * (size_t)(r->nrows + 1) * r->ncols);
	for (int i = 0; i < r->ncols; i++) {
		struct rpt_cell v = cells[i];
		if (rpt_type__is_text(r->type[i]) && v.s)
			v.s = strdup(v.s);
		r->cells[r->nrows * r->ncols + i] = v;
	}
	r->nrows++;
	return 0;
}

static int cap_note(struct rpt_sink *sink, const struct rpt_note *note)
{
	struct cap_sink *c = sink->priv;
	struct cap_report *r = &c->rep[c->nreports - 1];

	if (r->nnotes < CAP_MAX_NOTES) {
		snprintf(r->note_key[r->nnotes], sizeof r->note_key[0], "%s", note->key);
		r->note_count[r->nnotes++] = note->count;
	}
	return 0;
}

/* The count of the report's note called key, -1 when it has none. */
static inline int64_t cap_note_count(const struct cap_report *r, const char *key)
{
	for (int i = 0; i < r->nnotes; i++)
		if (strcmp(r->note_key[i], key) == 0)
			return r->note_count[i];
	return -1;
}

static int cap_end(struct rpt_sink *sink)
{
	struct cap_sink *c = sink->priv;

	c->rep[c->nreports - 1].ended = 1;
	return 0;
}

static void cap_destroy(struct rpt_sink *sink)
{
	struct cap_sink *c = sink->priv;

	for (int k = 0; k < c->nreports; k++) {
		struct cap_report *r = &c->rep[k];
		for (int i = 0; i < r->nrows * r->ncols; i++)
			if (rpt_type__is_text(r->type[i % r->ncols]))
				free((char *)r->cells[i].s);
		for (int i = 0; i < r->ncols; i++)
			free(r->col[i]);
		free(r->cells);
	}
	free(c);
}

static inline struct cap_sink *cap_sink__new(void)
{
	struct cap_sink *c = calloc(1, sizeof *c);

	c->sink = (struct rpt_sink){ .begin = cap_begin, .row = cap_row, .end = cap_end,
				     .destroy = cap_destroy, .note = cap_note, .priv = c };
	return c;
}

/* The report called name, or NULL. */
static inline struct cap_report *cap_report(struct cap_sink *c, const char *name)
{
	for (int k = 0; k < c->nreports; k++)
		if (strcmp(c->rep[k].name, name) == 0)
			return &c->rep[k];
	return NULL;
}

/* Column index by header, -1 if absent. */
static inline int cap_col(const struct cap_report *r, const char *col)
{
	for (int i = 0; i < r->ncols; i++)
		if (strcmp(r->col[i], col) == 0)
			return i;
	return -1;
}

static inline const struct rpt_cell *cap_cell(const struct cap_report *r, int row, const char *col)
{
	int i = cap_col(r, col);

	if (i < 0 || row >= r->nrows)
		return NULL;
	return &r->cells[row * r->ncols + i];
}

#endif
