/* bad_spans.c - how many rows of a capture have an impossible span
 * (SUM_BAD_SPAN), for the readers that leave them out of a whole capture
 * at once (the traces, the folded stacks, the HTML report) rather than
 * report by report as the summaries count them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/call_census.h"
#include "model/memo.h"
#include "model/sql.h"
#include "prof/tables.h"

/* The count of a finished capture read whole, shared by the connections
 * to the file (prof_store__shared_take): it is a pass over every table
 * (0.25 s at 1M kernels, 3.8 s at 10M), which the HTML page's diagnosis,
 * its idle section and the page itself each made again. */
static const char whole_count_key = 0;

/* Every table's rows counted, into out (an int64_t: sum_shared__value's
 * maker). */
static int count_all(struct prof_store *s, void *out, struct prof_error *err)
{
	return sum_bad_spans__count_but(s, NULL, out, err);
}

int sum_bad_spans__count(struct prof_store *s, int64_t *rows, struct prof_error *err)
{
	return sum_shared__value(s, &whole_count_key, rows, sizeof *rows, count_all, err);
}

/* Whether table is one of the NULL-ended list (NULL: none). */
static bool listed(const char *const *tables, const char *table)
{
	for (; tables && *tables; tables++)
		if (strcmp(*tables, table) == 0)
			return true;
	return false;
}

int sum_bad_spans__count_but(struct prof_store *s, const char *const *counted, int64_t *rows,
			     struct prof_error *err)
{
	/* NVTX marks and domain rows have no end: they are no spans */
	static const struct { const char *table, *which; } spans[] = {
		{ PROF_T_KERNEL, "1" },
		{ PROF_T_MEMCPY, "1" },
		{ PROF_T_MEMSET, "1" },
		{ PROF_T_GRAPH_TRACE, "1" },
		{ PROF_T_RUNTIME, "1" },
		{ PROF_T_DRIVER, "1" },
		{ PROF_T_NVTX, "eventType IN (" PROF_SQL_NVTX_RANGES ")" },
	};
	char sql[512];
	int rc = 0;

	*rows = 0;
	for (size_t i = 0; i < sizeof spans / sizeof spans[0] && rc == 0; i++) {
		struct prof_cursor *c = NULL;

		if (listed(counted, spans[i].table))
			continue;
		/* views that show every row: the calls' census counted them */
		if (!prof_store__restricted(s)) {
			struct call_census census;

			rc = sum_call_census(s, spans[i].table, &census, err);
			if (rc == 1)
				*rows += census.bad;
			if (rc != 0) {
				rc = rc < 0 ? rc : 0;
				continue;
			}
		}
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s AND " SUM_BAD_SPAN(""),
			 spans[i].table, spans[i].which);
		rc = prof_cursor__open(s, sql, &c, err);
		if (rc < 0)
			break;
		rc = prof_cursor__next(c, err);
		if (rc > 0)
			*rows += prof_cursor__int64(c, 0);
		prof_cursor__close(c);
		rc = rc < 0 ? rc : 0;
	}
	return rc;
}

bool sum_call_span_bad(enum prof_value_kind kind_start, int64_t start, enum prof_value_kind kind_end, int64_t end)
{
	int64_t span;

	return kind_start != PROF_VALUE_INT || kind_end != PROF_VALUE_INT || end < start ||
	       __builtin_sub_overflow(end, start, &span);
}
