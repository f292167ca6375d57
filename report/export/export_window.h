/* export_window.h - what part of a capture an export covers: a time window
 * (--from/--to, relative to the capture's start: sum_capture__time's zero)
 * and an NVTX range name (--range), shared by the Chrome trace, the folded stacks and the HTML report.
 *
 * The SQL of the exports binds ?1 = window start, ?2 = window end (absolute
 * ns on the capture's clock) and ?3 = the range name (NULL: no range filter);
 * export_window__sql_* build the fixed fragments that use them. */
#ifndef REPORT_EXPORT_WINDOW_H
#define REPORT_EXPORT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prof/error.h"
#include "prof/store.h"

/* What the user asked for. Times are relative to the capture's start. */
struct export_filter {
	bool has_from, has_to;
	int64_t from_ns, to_ns;
	const char *range_name; /* NULL: everything */
};

/* The filter resolved against one store. */
struct export_window {
	int64_t base_ns;             /* the capture's zero (sum_capture__time): every
				      * relative time counts from it */
	int64_t base_utc_ns;         /* the zero as a UTC time */
	int64_t end_ns;              /* last end of any record (the zero without any) */
	int64_t from_abs_ns, to_abs_ns;
	const char *range_name;
	/* SQL fragments (constant text, no values): */
	char nvtx_name[64];          /* name expression of NVTX row n joined to StringIds t */
};


/* Find the capture's start and end and turn the filter into absolute times.
 * A --range naming no NVTX range of the capture is a usage error. */
int export_window__init(struct export_window *w, struct prof_store *s,
			const struct export_filter *f, struct prof_error *err);

/* The part of the window that needs nothing of the capture: the range's
 * name, the SQL fragments, and the bounds when f sets no --from or --to
 * (every time). true when that is the whole window but for its zero and
 * end: a query on a second connection may bind it before
 * export_window__init has read the capture's extent. */
bool export_window__without_capture(struct export_window *w, const struct export_filter *f);
/* The window's zero and end from the capture's time base (model/window.h):
 * what export_window__init adds to a window without the capture. */
struct sum_capture_time;
void export_window__set_time(struct export_window *w, const struct sum_capture_time *time);

/* The temporary table of the --range instances (export_window__in_range's)
 * on s, a second connection to the capture w was made for, whose queries
 * use the window too; export_window__init makes it on its own. */
int export_window__index(const struct export_window *w, struct prof_store *s,
			 struct prof_error *err);

/* Bind ?1, ?2, ?3 of a cursor whose SQL uses the window. */
int export_window__bind(const struct export_window *w, struct prof_cursor *c,
			struct prof_error *err);

/* "(?3 IS NULL OR <ts, in process pid, lies inside an instance of the range>)";
 * ts and pid are SQL expressions. An indexed lookup per row: the instances
 * sit in a temporary table that export_window__init fills. */
int export_window__in_range(char *buf, size_t cap, const char *ts, const char *pid);

/* Rows with an impossible span (SUM_BAD_SPAN: an end before the start, or
 * no 64-bit duration) are left out of every export, as the summaries leave
 * them out, rather than drawn as a slice 292 years wide that hides the
 * rest; this says how many on warn (NULL: stderr), in one line naming the
 * capture and what they were left out of ("the trace"), when there are any. */
int export__note_left_out(struct prof_store *s, const char *what, FILE *warn,
			  struct prof_error *err);
/* The same line for rows counted already (sum_bad_spans__count), none for 0. */
void export__say_left_out(struct prof_store *s, int64_t rows, const char *what, FILE *warn);

/* A time of ns nanoseconds as microseconds with exactly three decimals
 * ("12.345", "-0.250"), integer arithmetic only so nanoseconds stay exact,
 * into buf (32 bytes at least); returns its length. */
size_t export_format_us(char *buf, int64_t ns);

#endif
