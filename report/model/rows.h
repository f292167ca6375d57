/* rows.h - small helpers for readers that turn what they read into a
 * sink's rows: cells, a StringIds value, the error of a failed sink call. */
#ifndef REPORT_MODEL_ROWS_H
#define REPORT_MODEL_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"

/* A StringIds value (malloc'd), NULL when the id is absent. */
int sum_string(struct prof_store *s, int64_t id, char **out, struct prof_error *err);

/* Cell constructors. */
static inline struct rpt_cell sum_int(int64_t v) { return (struct rpt_cell){ .i = v }; }
static inline struct rpt_cell sum_real(double v) { return (struct rpt_cell){ .d = v }; }
static inline struct rpt_cell sum_text(const char *v)
{ return (struct rpt_cell){ .s = v, .is_null = v == NULL }; }
static inline struct rpt_cell sum_null(void) { return (struct rpt_cell){ .is_null = true }; }

/* Fill err for a failed sink call. */
int sum_sink_error(int rc, struct prof_error *err);

#endif
