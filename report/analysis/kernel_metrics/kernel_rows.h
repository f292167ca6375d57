/* kernel_rows.h - one row per kernel name from a query over a window's
 * launches and their metrics: the walk access.c and roofline.c share
 * (kernel_rows.c). */
#ifndef REPORT_KERNEL_ROWS_H
#define REPORT_KERNEL_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* Fills the zeroed row from the cursor's current result; ctx is the
 * caller's. Returns 0, or PROF_E_NOMEM having allocated nothing. */
typedef int (*kernel_row_read_fn)(void *row, struct prof_cursor *c, const void *ctx);

/* The kernel's name, column 0 of each row ("?" where NULL), copied into
 * *name. Returns 0 or PROF_E_NOMEM. */
int kernel_rows__name(struct prof_cursor *c, char **name);

/* Runs sql, whose ?1 and ?2 bound the launches' start (the whole capture
 * when to_ns <= from_ns), and reads each result into a row of row_size
 * bytes of a malloc'd array. Returns 0 or a negative error; on an error
 * too, *rows and *n hold the rows read whole, for the caller's free. */
int kernel_rows__read(struct prof_store *s, const char *sql, int64_t from_ns, int64_t to_ns,
		      size_t row_size, kernel_row_read_fn read_row, const void *ctx, void **rows,
		      int *n, struct prof_error *err);

#endif
