/* sink_text.c - aligned text tables for a terminal, in the layout of
 * `nsys stats`: a title line, a header, a dashed rule, then rows with numbers
 * right-aligned and text left-aligned, and the report's notes under it.
 *
 * Column widths come from the first TEXT_BUFFER_ROWS rows; after that rows are
 * printed as they arrive with those widths (a wider cell pushes the line
 * right), so a million-row trace needs no more memory than a short one.
 *
 * Kernel names (RPT_SYMBOL) show in their short form, unique within the
 * table (sink/symbol.h): buffered rows keep the names as they came until
 * every buffered name is known, so that names whose short forms clash are
 * told apart from their first row on. */
#include "sink_cell.h"
#include "sink_impl.h"
#include "symbol.h"

#include <stdlib.h>
#include <string.h>

#include "prof/error.h"
#include "prof/escape.h"

#define TEXT_BUFFER_ROWS 512
#define TEXT_GAP "  "

struct text_sink {
	struct rpt_sink sink;
	struct rpt_columns cols;
	struct rpt_notes notes;
	struct rpt_symbols *symbols; /* the table's names; NULL: shown in full */
	char **cells;      /* TEXT_BUFFER_ROWS x ncols formatted cells; a
			    * symbol's cell holds the name as it came */
	int nbuffered;
	bool streaming;    /* widths fixed, header printed */
	bool in_report;
	long nrows;
	size_t *width;     /* display width per column */
};

/* Display width of valid UTF-8 (the sanitiser guarantees validity): one
 * column per code point. */
static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* A copy of s made safe for the terminal. */
static char *sanitized(const char *s)
{
	/* Each input byte becomes at most 3 bytes (U+FFFD for an invalid byte). */
	size_t cap = strlen(s) * 3 + 1;
	char *buf = malloc(cap);

	if (buf)
		prof_sanitize_term(buf, cap, s);
	return buf;
}

static char *format_cell(const struct rpt_column *col, const struct rpt_cell *cell)
{
	char num[64];

	if (!rpt_type__is_text(col->type))
		return rpt_cell__format_number(num, sizeof num, col, cell, true) ? strdup(num)
		       : cell->is_null && cell->s ? sanitized(cell->s) : strdup("");
	if (cell->is_null || !cell->s)
		return strdup("");
	return sanitized(cell->s);
}

/* The cell of a symbol column, from the name as it came. */
static char *format_symbol(struct text_sink *t, const char *name)
{
	size_t len = rpt_symbols__show(t->symbols, name, NULL, 0);
	char *shown = malloc(len + 1), *safe;

	if (!shown)
		return NULL;
	rpt_symbols__show(t->symbols, name, shown, len + 1);
	safe = sanitized(shown);
	free(shown);
	return safe;
}

static bool shortens(const struct text_sink *t, int col)
{
	return t->symbols && t->cols.cols[col].type == RPT_SYMBOL;
}

static void print_cell(FILE *f, const struct rpt_column *col, const char *s, size_t width,
		       bool last)
{
	size_t w = display_width(s), pad = w < width ? width - w : 0;

	if (!rpt_type__is_text(col->type))
		for (size_t i = 0; i < pad; i++)
			fputc(' ', f);
	fputs(s, f);
	if (rpt_type__is_text(col->type) && !last)
		for (size_t i = 0; i < pad; i++)
			fputc(' ', f);
}

static void print_line(struct text_sink *t, char *const *cells)
{
	for (int i = 0; i < t->cols.ncols; i++) {
		if (i)
			fputs(TEXT_GAP, t->sink.out);
		print_cell(t->sink.out, &t->cols.cols[i], cells[i], t->width[i],
			   i == t->cols.ncols - 1);
	}
	fputc('\n', t->sink.out);
}

static void free_buffered(struct text_sink *t)
{
	for (int r = 0; r < t->nbuffered; r++)
		for (int c = 0; c < t->cols.ncols; c++)
			free(t->cells[(size_t)r * t->cols.ncols + c]);
	t->nbuffered = 0;
}

/* The buffered names of symbol columns, now all known, in their short
 * forms (a name the table cannot take shows in full). */
static void shorten_buffered(struct text_sink *t)
{
	int n = t->cols.ncols;

	for (int c = 0; c < n; c++)
		for (int r = 0; shortens(t, c) && r < t->nbuffered; r++)
			rpt_symbols__add(t->symbols, t->cells[(size_t)r * n + c]);
	for (int c = 0; c < n; c++) {
		for (int r = 0; shortens(t, c) && r < t->nbuffered; r++) {
			char **cell = &t->cells[(size_t)r * n + c];
			char *shown = format_symbol(t, *cell);

			if (!shown)
				shown = sanitized(*cell);
			if (shown) {
				free(*cell);
				*cell = shown;
			} else {
				(*cell)[0] = '\0'; /* out of memory: never unsanitised */
			}
		}
	}
}

/* Fix the widths from the header and buffered rows, print them, go streaming. */
static void flush_buffered(struct text_sink *t)
{
	FILE *f = t->sink.out;
	int n = t->cols.ncols;

	shorten_buffered(t);
	for (int c = 0; c < n; c++) {
		t->width[c] = display_width(t->cols.cols[c].name);
		for (int r = 0; r < t->nbuffered; r++) {
			size_t w = display_width(t->cells[(size_t)r * n + c]);
			if (w > t->width[c])
				t->width[c] = w;
		}
	}
	for (int c = 0; c < n; c++) {
		if (c)
			fputs(TEXT_GAP, f);
		print_cell(f, &t->cols.cols[c], t->cols.cols[c].name, t->width[c], c == n - 1);
	}
	fputc('\n', f);
	for (int c = 0; c < n; c++) {
		if (c)
			fputs(TEXT_GAP, f);
		for (size_t i = 0; i < t->width[c]; i++)
			fputc('-', f);
	}
	fputc('\n', f);
	for (int r = 0; r < t->nbuffered; r++)
		print_line(t, &t->cells[(size_t)r * n]);
	free_buffered(t);
	t->streaming = true;
}

static void close_report(struct text_sink *t)
{
	if (!t->in_report)
		return;
	if (t->nrows == 0)
		fputs("(no data)\n", t->sink.out);
	else if (!t->streaming)
		flush_buffered(t);
	for (int i = 0; i < t->notes.n; i++) {
		if (t->notes.note[i].count <= 0)
			continue;
		fputs("note: ", t->sink.out);
		prof_fputs_term(t->sink.out, t->notes.note[i].text);
		fputc('\n', t->sink.out);
	}
	rpt_notes__exit(&t->notes);
	free_buffered(t);
	free(t->cells);
	free(t->width);
	t->cells = NULL;
	t->width = NULL;
	rpt_symbols__delete(t->symbols);
	t->symbols = NULL;
	rpt_columns__exit(&t->cols);
	t->in_report = false;
}

static int text_note(struct rpt_sink *sink, const struct rpt_note *note)
{
	struct text_sink *t = sink->priv;

	return t->in_report ? rpt_notes__add(&t->notes, note) : PROF_E_USAGE;
}

static int text_begin(struct rpt_sink *sink, const char *name, const char *title,
		      const struct rpt_column *cols, int ncols)
{
	struct text_sink *t = sink->priv;
	char *safe_title, *safe_name;
	bool symbols = false;
	int rc;

	close_report(t);
	rc = rpt_columns__copy(&t->cols, cols, ncols);
	if (rc < 0)
		return rc;
	/* a header may come from the capture (a sampled metric's name) */
	for (int c = 0; c < ncols; c++) {
		char *safe = sanitized(t->cols.cols[c].name);

		if (!safe) {
			rpt_columns__exit(&t->cols);
			return PROF_E_NOMEM;
		}
		free((char *)t->cols.cols[c].name);
		t->cols.cols[c].name = safe;
	}
	t->cells = calloc((size_t)TEXT_BUFFER_ROWS * (ncols > 0 ? ncols : 1), sizeof *t->cells);
	t->width = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *t->width);
	for (int c = 0; c < ncols && !sink->full_names; c++)
		symbols |= cols[c].type == RPT_SYMBOL;
	t->symbols = symbols ? rpt_symbols__new() : NULL;
	if (!t->cells || !t->width || (symbols && !t->symbols)) {
		free(t->cells);
		free(t->width);
		rpt_symbols__delete(t->symbols);
		t->cells = NULL;
		t->width = NULL;
		t->symbols = NULL;
		rpt_columns__exit(&t->cols);
		return PROF_E_NOMEM;
	}
	t->in_report = true;
	t->streaming = false;
	t->nrows = 0;
	safe_title = format_cell(&(struct rpt_column){ .type = RPT_TEXT },
				 &(struct rpt_cell){ .s = title ? title : "" });
	safe_name = format_cell(&(struct rpt_column){ .type = RPT_TEXT },
				&(struct rpt_cell){ .s = name ? name : "" });
	fprintf(sink->out, "\n ** %s (%s):\n\n", safe_title ? safe_title : "",
		safe_name ? safe_name : "");
	free(safe_title);
	free(safe_name);
	return 0;
}

static int text_row(struct rpt_sink *sink, const struct rpt_cell *cells)
{
	struct text_sink *t = sink->priv;
	int n = t->cols.ncols;
	char *line[n > 0 ? n : 1];
	int rc = 0;

	if (!t->in_report)
		return PROF_E_USAGE;
	for (int c = 0; c < n; c++) {
		/* Buffered names wait for the others (shorten_buffered). */
		if (shortens(t, c) && !cells[c].is_null && cells[c].s)
			line[c] = t->streaming ? format_symbol(t, cells[c].s) : strdup(cells[c].s);
		else
			line[c] = format_cell(&t->cols.cols[c], &cells[c]);
		if (!line[c])
			rc = PROF_E_NOMEM;
	}
	if (rc < 0)
		goto out;
	t->nrows++;
	if (!t->streaming) {
		memcpy(&t->cells[(size_t)t->nbuffered * n], line, (size_t)n * sizeof *line);
		if (++t->nbuffered == TEXT_BUFFER_ROWS)
			flush_buffered(t);
		return 0;
	}
	print_line(t, line);
out:
	for (int c = 0; c < n; c++)
		free(line[c]);
	return rc < 0 ? rc : (ferror(sink->out) ? PROF_E_IO : 0);
}

static int text_end(struct rpt_sink *sink)
{
	close_report(sink->priv);
	return ferror(sink->out) ? PROF_E_IO : 0;
}

static void text_destroy(struct rpt_sink *sink)
{
	struct text_sink *t = sink->priv;

	close_report(t);
	fflush(sink->out);
	free(t);
}

struct rpt_sink *rpt_sink_text__new(FILE *out)
{
	struct text_sink *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->sink.begin = text_begin;
	t->sink.row = text_row;
	t->sink.end = text_end;
	t->sink.destroy = text_destroy;
	t->sink.note = text_note;
	t->sink.out = out;
	t->sink.priv = t;
	return &t->sink;
}
