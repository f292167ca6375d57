/* diagnose_tally.c - a small group-by for the rules' offender lists. The
 * number of distinct keys is small (kernel names, API names, memory kinds),
 * so a linear search over an array is enough. */
#include "diagnose.h"

#include <stdlib.h>
#include <string.h>

struct diag_tally_entry *diag_tally__get(struct diag_tally *t, const char *key)
{
	if (!key)
		key = "?";
	/* newest entries are the likeliest: search backwards */
	for (int i = t->n - 1; i >= 0; i--)
		if (!strcmp(t->e[i].key, key))
			return &t->e[i];
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 32;
		struct diag_tally_entry *n = realloc(t->e, sizeof *n * (size_t)cap);
		if (!n)
			return NULL;
		t->e = n;
		t->cap = cap;
	}
	memset(&t->e[t->n], 0, sizeof t->e[t->n]);
	t->e[t->n].key = strdup(key);
	if (!t->e[t->n].key)
		return NULL;
	return &t->e[t->n++];
}

static int by_time(const void *a, const void *b)
{
	const struct diag_tally_entry *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

void diag_tally__sort_by_time(struct diag_tally *t)
{
	if (t->n > 1)
		qsort(t->e, (size_t)t->n, sizeof *t->e, by_time);
}

void diag_tally__offenders(const struct diag_tally *t, struct diag_finding *f)
{
	for (int i = 0; i < t->n && i < DIAG_MAX_OFFENDERS; i++)
		diag__offender(f, t->e[i].key, t->e[i].count, t->e[i].time_ns, t->e[i].bytes);
}

void diag_tally__exit(struct diag_tally *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->e[i].key);
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}

struct diag_finding *diag__add_ranked(struct diag_context *ctx, struct diag_tally *t,
				      const char *rule_id, const char *title, int64_t time_ns,
				      enum diag_severity max_severity, char *evidence, char *change)
{
	struct diag_finding *f;

	diag_tally__sort_by_time(t);
	f = diag__add(ctx, rule_id, title, diag__share(ctx, time_ns), time_ns, max_severity, evidence,
		      change);
	diag_tally__offenders(t, f);
	return f;
}
