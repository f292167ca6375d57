/* sink_cell.c - the number formatting and the column and note bookkeeping
 * every renderer shares, so every sink prints the same value the same way.
 * Knows no sink. */
#include "sink_cell.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prof/error.h"

/* Insert ',' every three digits of the integer part of a formatted number. */
static void group_thousands(char *buf, size_t cap)
{
	char tmp[64];
	size_t start = buf[0] == '-' ? 1 : 0, digits = 0, o = 0;

	while (buf[start + digits] >= '0' && buf[start + digits] <= '9')
		digits++;
	if (digits <= 3 || strlen(buf) + digits / 3 + 1 > sizeof tmp || strlen(buf) + digits / 3 + 1 > cap)
		return;
	for (size_t i = 0; i < start; i++)
		tmp[o++] = buf[i];
	for (size_t i = 0; i < digits; i++) {
		if (i > 0 && (digits - i) % 3 == 0)
			tmp[o++] = ',';
		tmp[o++] = buf[start + i];
	}
	strcpy(tmp + o, buf + start + digits);
	strcpy(buf, tmp);
}

bool rpt_cell__format_number(char *buf, size_t cap, const struct rpt_column *col,
			     const struct rpt_cell *cell, bool grouping)
{
	if (cell->is_null)
		return false;
	if (col->type == RPT_INT) {
		snprintf(buf, cap, "%lld", (long long)cell->i);
	} else {
		if (!isfinite(cell->d))
			return false;
		snprintf(buf, cap, "%.*f", col->decimals, cell->d);
		/* -0.0 after rounding reads as a sign error. */
		if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
			memmove(buf, buf + 1, strlen(buf));
	}
	if (grouping)
		group_thousands(buf, cap);
	return true;
}

int rpt_columns__copy(struct rpt_columns *dst, const struct rpt_column *cols, int ncols)
{
	dst->cols = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *dst->cols);
	dst->ncols = 0;
	if (!dst->cols)
		return PROF_E_NOMEM;
	for (int i = 0; i < ncols; i++) {
		dst->cols[i] = cols[i];
		dst->cols[i].name = strdup(cols[i].name ? cols[i].name : "");
		if (!dst->cols[i].name) {
			rpt_columns__exit(dst);
			return PROF_E_NOMEM;
		}
		dst->ncols = i + 1;
	}
	return 0;
}

void rpt_columns__exit(struct rpt_columns *c)
{
	for (int i = 0; i < c->ncols; i++)
		free((char *)c->cols[i].name);
	free(c->cols);
	c->cols = NULL;
	c->ncols = 0;
}

int rpt_notes__add(struct rpt_notes *ns, const struct rpt_note *note)
{
	struct rpt_note *grown = realloc(ns->note, (size_t)(ns->n + 1) * sizeof *grown);
	struct rpt_note *copy;

	if (!grown)
		return PROF_E_NOMEM;
	ns->note = grown;
	copy = &ns->note[ns->n];
	copy->key = strdup(note->key ? note->key : "");
	copy->text = strdup(note->text ? note->text : "");
	copy->count = note->count;
	if (!copy->key || !copy->text) {
		free((char *)copy->key);
		free((char *)copy->text);
		return PROF_E_NOMEM;
	}
	ns->n++;
	return 0;
}

void rpt_notes__exit(struct rpt_notes *ns)
{
	for (int i = 0; i < ns->n; i++) {
		free((char *)ns->note[i].key);
		free((char *)ns->note[i].text);
	}
	free(ns->note);
	ns->note = NULL;
	ns->n = 0;
}
