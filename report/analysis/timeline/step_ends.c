/* step_ends.c - the latest end of the work each step launched (see
 * step_ends.h). */
#include "step_ends.h"

#include <stddef.h>
#include <stdlib.h>

#include "model/sums.h"

#include "prof/error.h"

int step_ends__init(struct step_ends *e, int n)
{
	*e = (struct step_ends){ .before = INT64_MIN, .n = n };
	e->end = malloc(sizeof *e->end * (size_t)(n > 0 ? n : 1));
	if (!e->end)
		return PROF_E_NOMEM;
	for (int i = 0; i < n; i++)
		e->end[i] = INT64_MIN;
	return 0;
}

/* The 0-based step whose range holds t, or -1 (steps sorted by start). */
static int step_holding(const struct sum_step *steps, int n, int64_t t)
{
	size_t k = sum_sorted__count_before(steps, (size_t)n, sizeof *steps, offsetof(struct sum_step, start_ns), t,
					    true);

	return k > 0 && t < steps[k - 1].end_ns ? (int)k - 1 : -1;
}

void step_ends__add(struct step_ends *e, const struct sum_step *steps, int64_t launch_ns, int64_t end_ns)
{
	int k = step_holding(steps, e->n, launch_ns);

	if (k >= 0 && end_ns > e->end[k])
		e->end[k] = end_ns;
	else if (k < 0 && e->n > 0 && launch_ns < steps[0].start_ns && end_ns > e->before)
		e->before = end_ns;
}

void step_ends__exit(struct step_ends *e)
{
	free(e->end);
	*e = (struct step_ends){ 0 };
}
