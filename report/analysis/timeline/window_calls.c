/* window_calls.c - the window's calls, walked once, for the rules that
 * read them again (window_calls.h). */
#include "window_calls.h"

#include <string.h>

#include "prof/saturate.h"

void window_calls__begin(struct window_calls *c, const struct sum_window *w, const struct diag_interval *busy,
			 int nbusy)
{
	memset(c, 0, sizeof *c);
	c->to = w->host_end_ns;
	c->start_ns = w->start_ns;
	c->end_ns = w->end_ns;
	/* a host side past the GPU's end holds calls the walk does not read */
	c->groups_known = w->host_end_ns <= w->end_ns;
	c->busy = busy;
	c->nbusy = nbusy;
}

/* The GPU's k-th gap in the window: before the first busy interval,
 * between two, after the last. */
static struct diag_interval gap_at(const struct window_calls *c, int k)
{
	return (struct diag_interval){ k == 0 ? c->start_ns : c->busy[k - 1].end_ns,
				       k < c->nbusy ? c->busy[k].start_ns : c->end_ns };
}

/* The union's interval at hand is whole: the part of it in the gaps. The
 * intervals come in start order, so a gap that ends by one's start is
 * passed for good. */
static void close_open(struct window_calls *c)
{
	const struct diag_interval u = c->open;

	for (int k = c->gap; k <= c->nbusy; k++) {
		struct diag_interval g = gap_at(c, k);
		int64_t s, e;

		if (g.end_ns <= u.start_ns && k == c->gap) {
			c->gap++;
			continue;
		}
		if (g.start_ns >= u.end_ns)
			break;
		s = u.start_ns > g.start_ns ? u.start_ns : g.start_ns;
		e = u.end_ns < g.end_ns ? u.end_ns : g.end_ns;
		if (e > s && g.end_ns > g.start_ns)
			c->in_calls_idle_ns = prof_add_saturated(c->in_calls_idle_ns, prof_span_saturated(s, e));
	}
	c->have_open = false;
}

int window_calls__add(struct window_calls *c, struct prof_cursor *row, int name_col)
{
	enum prof_value_kind name = prof_cursor__kind(row, name_col);
	int64_t start = prof_cursor__int64(row, 0), end = prof_cursor__int64(row, 1);

	/* the union of the calls that end inside the window, in the order read */
	if (end > c->start_ns) {
		if (c->have_open && start <= c->open.end_ns) {
			if (end > c->open.end_ns)
				c->open.end_ns = end;
		} else {
			if (c->have_open)
				close_open(c);
			c->open = (struct diag_interval){ start, end };
			c->have_open = true;
		}
	}
	if (!c->groups_known)
		return 0;
	if ((name != PROF_VALUE_NULL && name != PROF_VALUE_INT) || prof_cursor__kind(row, 0) != PROF_VALUE_INT ||
	    prof_cursor__kind(row, 1) != PROF_VALUE_INT) {
		/* which of such rows the groups' statement holds is SQL's to say */
		c->groups_known = false;
		id_groups__exit(&c->by_name);
		return 0;
	}
	/* a call of no name joins none */
	if (start >= c->start_ns && start < c->to && name == PROF_VALUE_INT) {
		struct id_group *at = id_groups__of(&c->by_name, prof_cursor__int64(row, name_col));

		if (!at)
			return PROF_E_NOMEM;
		at->count++;
		at->sum = prof_add_saturated(at->sum, prof_span_saturated(start, end));
	}
	return 0;
}

void window_calls__end(struct window_calls *c)
{
	if (c->have_open)
		close_open(c);
	c->known = true;
}

void window_calls__exit(struct window_calls *c)
{
	id_groups__exit(&c->by_name);
	c->known = false;
	c->groups_known = false;
}
