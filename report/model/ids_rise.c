/* ids_rise.c - whether every thread's correlation ids rise in the rows'
 * order (ids_rise.h), a row at a time. */
#include "model/ids_rise.h"

#include <string.h>

#include "model/sums.h"

/* The last correlation id seen of each thread, ascending by thread (a NULL
 * thread, which GROUP BY takes for one more, first). */
struct ids_rise_last {
	bool null_tid;
	int64_t tid, corr;
};

static size_t thread_slot(const struct ids_rise_last *v, size_t n, bool null_tid, int64_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool before = v[mid].null_tid != null_tid ? v[mid].null_tid : v[mid].tid < tid;

		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void ids_rise_walk__init(struct ids_rise_walk *w)
{
	memset(w, 0, sizeof *w);
	w->rise = true;
}

int ids_rise_walk__add(struct ids_rise_walk *w, struct prof_cursor *c, int tid_col, int corr_col)
{
	enum prof_value_kind tk = prof_cursor__kind(c, tid_col), ck = prof_cursor__kind(c, corr_col);
	bool null_tid = tk == PROF_VALUE_NULL;
	int64_t tid, corr;

	if (!w->rise || ck == PROF_VALUE_NULL)
		return 0;
	/* a real id (only a column of no integer affinity holds one, 0.0
	 * among them) ends the rise too: SQL answers */
	if ((!null_tid && tk != PROF_VALUE_INT) || ck != PROF_VALUE_INT) {
		w->rise = false;
		return 0;
	}
	corr = prof_cursor__int64(c, corr_col);
	if (corr == 0)
		return 0;
	tid = null_tid ? 0 : prof_cursor__int64(c, tid_col);
	/* a thread's calls mostly come in runs: the last one found first */
	if (!(w->at < w->n && w->last[w->at].null_tid == null_tid && w->last[w->at].tid == tid)) {
		w->at = thread_slot(w->last, w->n, null_tid, tid);
		if (w->at == w->n || w->last[w->at].null_tid != null_tid || w->last[w->at].tid != tid) {
			if (sum_array__grow(&w->last, &w->cap, w->n, sizeof *w->last) < 0)
				return PROF_E_NOMEM;
			memmove(&w->last[w->at + 1], &w->last[w->at], (w->n - w->at) * sizeof *w->last);
			w->last[w->at] = (struct ids_rise_last){ null_tid, tid, corr };
			w->n++;
			return 0;
		}
	}
	if (corr <= w->last[w->at].corr)
		w->rise = false;
	w->last[w->at].corr = corr;
	return 0;
}

void ids_rise_walk__exit(struct ids_rise_walk *w)
{
	free(w->last);
	w->last = NULL;
	w->n = w->cap = w->at = 0;
}
