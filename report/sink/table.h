/* table.h - a report is a function that yields rows; renderers print them.
 *
 * A report calls sink->begin once with its columns, sink->row per row and
 * sink->end once. Text, CSV and JSON (and HTML tables) are sinks over the same
 * rows, so no report knows how it will be printed. */
#ifndef REPORT_TABLE_H
#define REPORT_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum rpt_type {
	RPT_INT,     /* int64 */
	RPT_REAL,    /* double, printed with `decimals` */
	RPT_PERCENT, /* double 0..100, printed with `decimals` */
	RPT_TEXT,    /* string from a capture: always escaped by the sink */
	/* RPT_TEXT that names a kernel or function (a demangled C++ name): the
	 * text sink shows its short form (sink/symbol.h) unless the sink prints
	 * full names; the other sinks print it as RPT_TEXT. */
	RPT_SYMBOL,
};

/* Whether cells of the type are strings (RPT_TEXT or RPT_SYMBOL). */
static inline bool rpt_type__is_text(enum rpt_type type)
{
	return type == RPT_TEXT || type == RPT_SYMBOL;
}

struct rpt_column {
	const char *name;   /* header, e.g. "Total Time (ns)" */
	enum rpt_type type;
	int decimals;
};

/* A null number cell may carry in s the words text and HTML show for it
 * ("N/A": a value the capture cannot give, which must not read as 0);
 * JSON writes null and CSV leaves the field empty, as for any null. */
struct rpt_cell {
	bool is_null;
	int64_t i;
	double d;
	const char *s;
};

/* What a reader must know about a report's rows that is no row, given
 * between begin and end: rows left out ("rows_left_out", 3, "3 rows with
 * an impossible span (...) were left out"). Text and HTML print the
 * sentence under the table when count > 0; JSON carries "key": count in
 * the report's object whatever the count; CSV, which has no place for it,
 * says the sentence on stderr when count > 0. */
struct rpt_note {
	const char *key;  /* an identifier, e.g. "rows_left_out" */
	int64_t count;
	const char *text; /* one sentence for people */
};

struct rpt_sink {
	/* title: human title of the report; name: its id (e.g. "cuda_gpu_kern_sum"). */
	int (*begin)(struct rpt_sink *sink, const char *name, const char *title,
		     const struct rpt_column *cols, int ncols);
	int (*row)(struct rpt_sink *sink, const struct rpt_cell *cells);
	int (*end)(struct rpt_sink *sink);
	void (*destroy)(struct rpt_sink *sink);
	FILE *out;
	void *priv;
	/* NULL: the sink has no use for notes (rpt_sink__note then does nothing). */
	int (*note)(struct rpt_sink *sink, const struct rpt_note *note);
	/* Text: print RPT_SYMBOL cells in full rather than in their short form. */
	bool full_names;
};

struct prof_store;
struct prof_error;

/* A report by name: a function that reads a store and yields rows into a
 * sink. Each report/ folder that defines reports exports a table of them;
 * registry/ lists the tables in the order `perfkit report` shows. */
struct rpt_report {
	const char *name;  /* "cuda_gpu_kern_sum" */
	const char *title; /* "CUDA GPU Kernel Summary" */
	int (*run)(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
};

enum rpt_format { RPT_FORMAT_TEXT, RPT_FORMAT_CSV, RPT_FORMAT_JSON };

/* A sink for the format writing to out. JSON: one document holding every
 * report begun on the sink ({"reports":[{"name":..,"rows":[{col:val}]}]}),
 * closed by rpt_sink__delete. */
struct rpt_sink *rpt_sink__new(enum rpt_format format, FILE *out);
void rpt_sink__delete(struct rpt_sink *sink);
/* Give the report being written a note (see struct rpt_note). */
int rpt_sink__note(struct rpt_sink *sink, const struct rpt_note *note);
/* "text" / "csv" / "json" -> format; -1 when unknown. */
int rpt_format__parse(const char *name);

#endif
