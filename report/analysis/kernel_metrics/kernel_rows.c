/* kernel_rows.c - the per-kernel walk of kernel_rows.h. */

#include "kernel_rows.h"

#include <string.h>

#include "analysis/core/grow.h"

int kernel_rows__name(struct prof_cursor *c, char **name)
{
	const char *text = prof_cursor__text(c, 0);

	*name = strdup(text ? text : "?");
	return *name ? 0 : PROF_E_NOMEM;
}

int kernel_rows__read(struct prof_store *s, const char *sql, int64_t from_ns, int64_t to_ns,
		      size_t row_size, kernel_row_read_fn read_row, const void *ctx, void **rows,
		      int *n, struct prof_error *err)
{
	struct prof_cursor *c;
	int cap = 0, rc;

	*rows = NULL;
	*n = 0;
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, to_ns > from_ns ? from_ns : INT64_MIN);
	prof_cursor__bind_int64(c, 2, to_ns > from_ns ? to_ns : INT64_MAX);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		void *row;

		if (array__grow(rows, &cap, *n + 1, row_size))
			goto nomem;
		row = (char *)*rows + (size_t)*n * row_size;
		memset(row, 0, row_size);
		if (read_row(row, c, ctx))
			goto nomem;
		(*n)++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
nomem:
	prof_cursor__close(c);
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}
