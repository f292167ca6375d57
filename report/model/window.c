/* window.c - the steady-state loop of a capture: where its iterations are
 * and how many there are. `perfkit diagnose` analyses this window; `perfkit
 * diff`, `baseline` and `gate` compare captures per iteration of it, so that
 * two windows of one job holding different numbers of steps compare fairly.
 * The search looks at NVTX ranges first (window_nvtx.c), then at the period
 * of the kernel launches (window_kernels.c); docs/diagnose.md describes it
 * step by step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_impl.h"
#include "model/capture_windows.h"
#include "model/window.h"
#include "prof/tables.h"
#include "prof/error.h"

void sum_loop_options__init(struct sum_loop_options *o)
{
	o->min_iterations = 3;
	o->coverage = 0.5;
	o->tiling = 0.9;
	o->whole_run = false;
	o->calls = NULL;
}

/* w's span_ns; in a capture made of windows, its iterations counted again
 * as sum_window__steps finds them inside the windows. */
static int measure(struct prof_store *store, struct sum_window *w, struct prof_error *err)
{
	struct sum_stretches st;
	struct sum_step *steps;
	int n, rc = sum_stretches__load(store, w->start_ns, w->end_ns, &st, err);

	if (rc)
		return rc;
	w->span_ns = sum_stretches__covered(&st, w->start_ns, w->end_ns);
	if (st.windows > 0 && w->iterations > 0) {
		rc = sum_window__steps(store, w, &steps, &n, err);
		if (rc == 0)
			w->iterations = n;
		free(steps);
	}
	sum_stretches__exit(&st);
	return rc;
}

/* The loop as sum_window__find and sum_window__find_marked describe it:
 * marked NULL searches, else only that NVTX range or kernel may mark it. */
static int find(struct prof_store *store, const struct sum_loop_options *o, enum sum_loop_mark mark,
		const char *marked, struct sum_window *w, struct prof_error *err)
{
	struct sum_capture_time time;
	int rc = 0;

	memset(w, 0, sizeof *w);
	rc = sum_capture__time(store, &time, err);
	if (rc)
		return rc;
	w->zero_ns = time.zero_ns;
	w->capture_start_ns = time.first_ns;
	w->capture_end_ns = time.last_ns;
	w->start_ns = w->capture_start_ns;
	w->end_ns = w->host_end_ns = w->capture_end_ns;
	w->iterations = 0;
	snprintf(w->source, sizeof w->source, "whole capture");
	if (o->whole_run) {
		w->whole_run = true;
		return measure(store, w, err);
	}
	if (!marked || mark == SUM_LOOP_NVTX)
		rc = window__from_nvtx(store, o, marked, w, err);
	if (rc)
		return rc;
	if (w->iterations == 0 && (!marked || mark == SUM_LOOP_KERNEL))
		rc = window__from_kernels(store, o, marked, w, err);
	if (rc)
		return rc;
	w->whole_run = w->iterations == 0;
	/* a loop found by kernels may end past the capture; keep it inside */
	if (w->end_ns > w->capture_end_ns)
		w->end_ns = w->capture_end_ns;
	if (w->iterations == 0 || w->host_end_ns <= w->start_ns || w->host_end_ns > w->end_ns)
		w->host_end_ns = w->end_ns;
	if (w->end_ns <= w->start_ns) {
		w->start_ns = w->capture_start_ns;
		w->end_ns = w->host_end_ns = w->capture_end_ns;
		w->iterations = 0;
		w->whole_run = true;
		w->mark = SUM_LOOP_NONE;
		w->mark_name[0] = '\0';
		snprintf(w->source, sizeof w->source, "whole capture");
	}
	return measure(store, w, err);
}

/* The loop found, shared by the connections to the file
 * (prof_store__shared_take) under the options it was searched with: the
 * HTML page's Python sections (module_sum, python_sum) and its diagnosis
 * on its own connection each searched the capture again, 0.1 s a search
 * on py_hf_gpt2_train. Shared only where the rows cannot change under the
 * reader: a finished capture whose views show every row (a rank's scope
 * and --window narrow them). */
static const char found_loop_key = 0;

int sum_window__find(struct prof_store *store, const struct sum_loop_options *o,
		     struct sum_window *w, struct prof_error *err)
{
	/* the options as bytes: the question the loop answers */
	const double tag[4] = { o->min_iterations, o->coverage, o->tiling, o->whole_run ? 1 : 0 };
	struct sum_window *copy;
	void *before = NULL;
	int got = -1, rc;

	if (prof_store__is_finished(store) && !prof_store__restricted(store))
		got = prof_store__shared_take(store, &found_loop_key, tag, sizeof tag, &before);
	if (got == 1) {
		*w = *(const struct sum_window *)before;
		return 0;
	}
	rc = find(store, o, SUM_LOOP_NONE, NULL, w, err);
	if (got != 0)
		return rc;
	copy = rc == 0 ? malloc(sizeof *copy) : NULL;
	if (copy) {
		*copy = *w;
		prof_store__shared_give(store, &found_loop_key, tag, sizeof tag, copy, free);
	} else {
		/* whoever waits searches for itself */
		prof_store__shared_drop(store, &found_loop_key, tag, sizeof tag);
	}
	return rc;
}

int sum_window__find_marked(struct prof_store *store, const struct sum_loop_options *o,
			    const struct sum_window *like, struct sum_window *w, struct prof_error *err)
{
	if (like->mark == SUM_LOOP_NONE)
		return sum_window__find(store, o, w, err);
	return find(store, o, like->mark, like->mark_name, w, err);
}

bool sum_window__same_mark(const struct sum_window *a, const struct sum_window *b)
{
	return a->mark == b->mark && strcmp(a->mark_name, b->mark_name) == 0;
}

/* ---- the iterations --------------------------------------------------- */

/* Appends [start, end) on thread tid, as the capture's stretches st allow:
 * in a capture of windows, a kernel iteration (ends_with_stretch) ends
 * with the window it starts in, an NVTX instance that leaves its window
 * is dropped, and so is an iteration that starts in none. */
static int push_step(struct sum_step **v, int *n, int *cap, const struct sum_stretches *st,
		     bool ends_with_stretch, int64_t start_ns, int64_t end_ns, int64_t tid)
{
	if (st->windows > 0) {
		int i = sum_stretches__first_ending_after(st, start_ns);

		if (i == st->n || st->v[i].start_ns > start_ns)
			return 0;
		if (end_ns > st->v[i].end_ns && !ends_with_stretch)
			return 0;
		if (end_ns > st->v[i].end_ns)
			end_ns = st->v[i].end_ns;
	}
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		struct sum_step *nv = realloc(*v, sizeof *nv * (size_t)ncap);

		if (!nv)
			return PROF_E_NOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct sum_step){ start_ns, end_ns, tid };
	return 0;
}

/* The instances window__from_nvtx counted, or the launches of the kernel
 * window__from_kernels counted from the window's start on, each up to the
 * next. */
int sum_window__steps(struct prof_store *store, const struct sum_window *w, struct sum_step **steps,
		      int *n, struct prof_error *err)
{
	char nvtx_sql[8192];
	const char *kernel_sql = "SELECT k.start FROM " PROF_T_KERNEL " k"
		" WHERE " PROF_SQL_KERNEL_NAME_ID("k.") " IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?1)"
		" AND k.start >= ?2 AND k.start < ?3 ORDER BY k.start";
	bool nvtx = w->mark == SUM_LOOP_NVTX, have_prev = false;
	struct sum_stretches st;
	struct prof_cursor *c;
	int cap = 0, rc;
	int64_t prev = 0;

	*steps = NULL;
	*n = 0;
	if (w->mark == SUM_LOOP_NONE || w->iterations == 0)
		return 0;
	if (nvtx) {
		size_t len;

		rc = window__nvtx_instances_sql(nvtx_sql, sizeof nvtx_sql, err);
		len = strlen(nvtx_sql);
		if (!rc && snprintf(nvtx_sql + len, sizeof nvtx_sql - len,
				    " SELECT start, end, tid FROM r WHERE name = ?1 AND k > 1%s ORDER BY start",
				    window__nvtx_recorded_sql(store)) >= (int)(sizeof nvtx_sql - len))
			rc = prof_error__set(err, PROF_E_SQL, "the loop search's SQL does not fit in %zu bytes",
					     sizeof nvtx_sql);
		if (rc)
			return rc;
	}
	rc = sum_stretches__load(store, w->start_ns, w->end_ns, &st, err);
	if (rc)
		return rc;
	rc = prof_cursor__open(store, nvtx ? nvtx_sql : kernel_sql, &c, err);
	if (rc) {
		sum_stretches__exit(&st);
		return rc;
	}
	prof_cursor__bind_text(c, 1, w->mark_name);
	if (!nvtx) {
		prof_cursor__bind_int64(c, 2, w->start_ns);
		prof_cursor__bind_int64(c, 3, w->end_ns);
	}
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t start = prof_cursor__int64(c, 0);

		if (nvtx) {
			rc = push_step(steps, n, &cap, &st, false, start, prof_cursor__int64(c, 1),
				       prof_cursor__int64(c, 2));
		} else {
			rc = have_prev ? push_step(steps, n, &cap, &st, true, prev, start, 0) : 0;
			have_prev = true;
			prev = start;
		}
		if (rc) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc == 0 && have_prev && prev < w->end_ns && push_step(steps, n, &cap, &st, true, prev, w->end_ns, 0))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	sum_stretches__exit(&st);
	if (rc < 0) {
		free(*steps);
		*steps = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}
