/* id_groups.c - rows counted by an integer id (id_groups.h). */
#include "id_groups.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "model/sums.h"

struct id_group *id_groups__of(struct id_groups *g, int64_t id)
{
	int lo;

	if (g->last < g->n && g->v[g->last].id == id)
		return &g->v[g->last];
	lo = (int)sum_sorted__count_before(g->v, (size_t)g->n, sizeof *g->v, offsetof(struct id_group, id), id, false);
	if (lo == g->n || g->v[lo].id != id) {
		if (array__grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v))
			return NULL;
		memmove(&g->v[lo + 1], &g->v[lo], (size_t)(g->n - lo) * sizeof *g->v);
		g->v[lo] = (struct id_group){ .id = id };
		g->n++;
	}
	g->last = lo;
	return &g->v[lo];
}

void id_groups__exit(struct id_groups *g)
{
	free(g->v);
	*g = (struct id_groups){ 0 };
}

int64_t id_groups__sql_integer(double r)
{
	if (r <= (double)INT64_MIN)
		return INT64_MIN;
	if (r >= (double)INT64_MAX)
		return INT64_MAX;
	return (int64_t)r;
}
