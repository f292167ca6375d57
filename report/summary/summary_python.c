/* summary_python.c - module_sum (per nn.Module and direction: calls, host
 * time and the GPU time of the work launched inside it, each total and
 * self) and python_sum (host time per Python line: self, total and the
 * share of it inside CUDA calls), over the steady-state loop when the
 * capture has one, else the whole capture; the title says which. The rows
 * come from the read model (model/python_stacks.h); a capture without
 * module ranges or samples yields none. `perfkit report --from/--to` reads
 * them over that span instead (summary__run_in_span). */
#include "summary_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/python_stacks.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/strfmt.h"

/* The span the reports read: the loop's host side (Python runs on the
 * host, and module ranges are host time), everything, or what --from and
 * --to asked for. */
struct py_span {
	int64_t from_ns, to_ns;
	int steps; /* 1 for the whole capture or a span asked for */
	bool per_step;
	char title[200];
};

/* --from and --to, times after the capture's start (NULL: none given). */
struct py_span_asked {
	bool has_from, has_to;
	int64_t from_ns, to_ns;
};

static int span_find(struct prof_store *s, const char *what, const struct py_span_asked *asked,
		     struct py_span *sp, struct prof_error *err)
{
	struct sum_capture_time t;
	struct sum_loop_options o;
	struct sum_window w;
	int rc;

	if (asked) {
		if (asked->has_from && asked->has_to && asked->to_ns <= asked->from_ns)
			return prof_error__set(err, PROF_E_USAGE, "--to must be later than --from");
		rc = sum_capture__zero(s, &t, err);
		if (rc < 0)
			return rc;
		sp->from_ns = asked->has_from ? prof_add_saturated(t.zero_ns, asked->from_ns) : INT64_MIN;
		sp->to_ns = asked->has_to ? prof_add_saturated(t.zero_ns, asked->to_ns) : INT64_MAX;
		sp->steps = 1;
		sp->per_step = false;
		if (asked->has_to)
			snprintf(sp->title, sizeof sp->title,
				 "%s (from +%.6f s to +%.6f s of the capture)", what,
				 asked->has_from ? (double)asked->from_ns / 1e9 : 0.0,
				 (double)asked->to_ns / 1e9);
		else
			snprintf(sp->title, sizeof sp->title, "%s (from +%.6f s to the capture's end)",
				 what, (double)asked->from_ns / 1e9);
		return 0;
	}
	sum_loop_options__init(&o);
	rc = sum_window__find(s, &o, &w, err);
	if (rc < 0)
		return rc;
	if (w.iterations > 0) {
		sp->from_ns = w.start_ns;
		sp->to_ns = w.host_end_ns;
		sp->steps = w.iterations;
		sp->per_step = true;
		snprintf(sp->title, sizeof sp->title, "%s (the steady-state loop, %d step%s)", what,
			 w.iterations, w.iterations == 1 ? "" : "s");
	} else {
		sp->from_ns = INT64_MIN;
		sp->to_ns = INT64_MAX;
		sp->steps = 1;
		sp->per_step = false;
		snprintf(sp->title, sizeof sp->title, "%s (the whole capture)", what);
	}
	return 0;
}

static int note_left_out(struct rpt_sink *sink, int64_t n, const char *what)
{
	char text[200];

	snprintf(text, sizeof text, "%" PRId64 " %s " SUM_BAD_SPAN_WORDS " %s left out", n, what,
		 n == 1 ? "was" : "were");
	return rpt_sink__note(sink, &(struct rpt_note){ "rows_left_out", n, text });
}

/* ---- module_sum --------------------------------------------------------- */

/* One row: a module's ranges of one direction added up. */
struct module_row {
	int64_t name;
	int direction;
	int64_t calls, host_ns, host_self_ns, gpu_ns, gpu_self_ns;
};

static int by_name_direction(const void *a, const void *b)
{
	const struct py_module_range *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->direction - y->direction;
}

/* qsort has no context argument: the array the comparator reads, one a
 * thread (the ranks of a job are diagnosed on several). */
static _Thread_local const struct py_modules *order_modules;

/* Most GPU time first, then most host time; names break ties. */
static int by_time(const void *a, const void *b)
{
	const struct module_row *x = a, *y = b;
	int c;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	if (x->host_ns != y->host_ns)
		return x->host_ns < y->host_ns ? 1 : -1;
	c = strcmp(order_modules->names[x->name], order_modules->names[y->name]);
	return c ? c : x->direction - y->direction;
}

static int module_rows(struct py_modules *m, struct module_row **out, size_t *nout,
		       struct prof_error *err)
{
	struct module_row *rows = NULL;
	size_t n = 0;

	*out = NULL;
	*nout = 0;
	if (m->n == 0)
		return 0;
	/* the ranges are grouped in place; none is read in thread order after */
	qsort(m->v, m->n, sizeof *m->v, by_name_direction);
	rows = calloc(m->n, sizeof *rows);
	if (!rows)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (size_t i = 0; i < m->n; i++) {
		const struct py_module_range *r = &m->v[i];
		int64_t host = prof_span_saturated(r->start_ns, r->end_ns);
		struct module_row *row;

		if (n == 0 || rows[n - 1].name != r->name || rows[n - 1].direction != r->direction) {
			rows[n].name = r->name;
			rows[n++].direction = r->direction;
		}
		row = &rows[n - 1];
		row->calls++;
		row->host_ns = prof_add_saturated(row->host_ns, host);
		row->host_self_ns = prof_add_saturated(row->host_self_ns, r->self_ns);
		row->gpu_ns = prof_add_saturated(row->gpu_ns, r->gpu_total_ns);
		row->gpu_self_ns = prof_add_saturated(row->gpu_self_ns, r->gpu_self_ns);
	}
	order_modules = m;
	qsort(rows, n, sizeof *rows, by_time);
	*out = rows;
	*nout = n;
	return 0;
}

static int module_sum(struct prof_store *s, const struct py_span_asked *asked, struct rpt_sink *sink,
		      struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Module", RPT_TEXT, 0 },
		{ "Class", RPT_TEXT, 0 },
		{ "Direction", RPT_TEXT, 0 },
		{ "Calls", RPT_INT, 0 },
		{ "Host Total (ns)", RPT_INT, 0 },
		{ "Host Self (ns)", RPT_INT, 0 },
		{ "GPU Total (ns)", RPT_INT, 0 },
		{ "GPU Self (ns)", RPT_INT, 0 },
		{ "GPU Self (%)", RPT_PERCENT, 1 },
	};
	struct py_modules m = { 0 };
	struct module_row *rows = NULL;
	struct py_span sp;
	size_t n = 0;
	int rc;

	rc = span_find(s, "nn.Module Summary", asked, &sp, err);
	if (rc == 0)
		rc = py_modules__load(s, sp.from_ns, sp.to_ns, &m, err);
	if (rc == 0)
		rc = module_rows(&m, &rows, &n, err);
	if (rc < 0)
		goto out;
	rc = sink->begin(sink, "module_sum", sp.title, cols, 9);
	if (rc >= 0 && m.rows_left_out > 0)
		rc = note_left_out(sink, m.rows_left_out, "module ranges or GPU rows");
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		char buf[1024];
		const char *qual, *cls;
		struct rpt_cell cells[9];

		py_module__split(m.names[rows[i].name], buf, sizeof buf, &qual, &cls);
		cells[0] = sum_text(qual);
		cells[1] = sum_text(cls);
		cells[2] = sum_text(py_direction__name(rows[i].direction));
		cells[3] = sum_int(rows[i].calls);
		cells[4] = sum_int(rows[i].host_ns);
		cells[5] = sum_int(rows[i].host_self_ns);
		cells[6] = sum_int(rows[i].gpu_ns);
		cells[7] = sum_int(rows[i].gpu_self_ns);
		cells[8] = m.gpu_inside_ns > 0
				   ? sum_real(100.0 * (double)rows[i].gpu_self_ns / (double)m.gpu_inside_ns)
				   : sum_null();
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	rc = sum_sink_error(rc, err);
out:
	free(rows);
	py_modules__exit(&m);
	return rc < 0 ? rc : 0;
}

/* ---- python_sum --------------------------------------------------------- */

/* samples * period / steps, held at the limits. */
static int64_t sampled_ns(int64_t samples, int64_t period_ns, int steps)
{
	if (samples > 0 && period_ns > INT64_MAX / samples)
		return INT64_MAX / steps;
	return samples * period_ns / steps;
}

static struct rpt_cell share(int64_t part, int64_t whole)
{
	return whole > 0 ? sum_real(100.0 * (double)part / (double)whole) : sum_null();
}

/* What a sample stands for, under the table. */
static int note_period(struct rpt_sink *sink, const struct py_capture *pc, bool per_step)
{
	char text[200];

	snprintf(text, sizeof text, "each sample stands for %.3f ms of its thread%s; times are samples "
		 "times that%s", (double)pc->period_ns / 1e6,
		 pc->period_measured ? " (the spacing of the samples: the capture does not say the rate)"
				     : "", per_step ? ", per step" : "");
	return rpt_sink__note(sink, &(struct rpt_note){ "sampling_period_ns", pc->period_ns, text });
}

static int python_sum(struct prof_store *s, const struct py_span_asked *asked, struct rpt_sink *sink,
		      struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Self (%)", RPT_PERCENT, 1 },
		{ "Self Time (ns)", RPT_INT, 0 },
		{ "Total (%)", RPT_PERCENT, 1 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ "In CUDA (%)", RPT_PERCENT, 1 },
		/* in C code that let the GIL go (a PyTorch op's dispatch, a
		 * wait), as against running Python */
		{ "No GIL (%)", RPT_PERCENT, 1 },
		{ "Self Samples", RPT_INT, 0 },
		{ "Total Samples", RPT_INT, 0 },
		{ "Location", RPT_TEXT, 0 },
		{ "Function", RPT_TEXT, 0 },
	};
	struct py_lines l = { 0 };
	struct py_capture pc;
	struct py_span sp;
	int64_t all;
	int rc;

	rc = py_capture__read(s, &pc, err);
	if (rc == 0)
		rc = span_find(s, "Python Line Summary", asked, &sp, err);
	if (rc == 0 && pc.has_samples)
		rc = py_lines__load(s, sp.from_ns, sp.to_ns, &l, err);
	if (rc < 0)
		goto out;
	all = prof_add_saturated(prof_add_saturated(l.samples[0], l.samples[1]), l.samples[2]);
	rc = sink->begin(sink, "python_sum", sp.title, cols, 10);
	if (rc >= 0 && pc.has_samples)
		rc = note_period(sink, &pc, sp.per_step);
	for (size_t i = 0; rc >= 0 && i < l.n; i++) {
		const struct py_line *p = &l.v[i];
		int64_t self = py_line__self(p), total = py_line__total(p);
		struct rpt_cell cells[10];
		char *where = p->kind == 0 ? prof_strfmt("%s:%" PRId64, p->file, p->line)
					   : strdup(p->file);

		if (!where) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		cells[0] = share(self, all);
		cells[1] = sum_int(sampled_ns(self, pc.period_ns, sp.steps));
		cells[2] = share(total, all);
		cells[3] = sum_int(sampled_ns(total, pc.period_ns, sp.steps));
		cells[4] = share(p->total[1], total);
		cells[5] = share(p->total[2], total);
		cells[6] = sum_int(self);
		cells[7] = sum_int(total);
		cells[8] = sum_text(where);
		cells[9] = sum_text(p->function);
		rc = sink->row(sink, cells);
		free(where);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	rc = sum_sink_error(rc, err);
out:
	py_lines__exit(&l);
	return rc < 0 ? rc : 0;
}

int summary__module_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	return module_sum(s, NULL, sink, err);
}

int summary__python_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	return python_sum(s, NULL, sink, err);
}

bool summary__takes_span(const char *name)
{
	return !strcmp(name, "module_sum") || !strcmp(name, "python_sum");
}

int summary__run_in_span(const char *name, struct prof_store *s, bool has_from, int64_t from_ns,
			 bool has_to, int64_t to_ns, struct rpt_sink *sink, struct prof_error *err)
{
	const struct py_span_asked asked = { has_from, has_to, from_ns, to_ns };

	if (!strcmp(name, "module_sum"))
		return module_sum(s, &asked, sink, err);
	if (!strcmp(name, "python_sum"))
		return python_sum(s, &asked, sink, err);
	return prof_error__set(err, PROF_E_USAGE, "%s reads no span of its own", name);
}
