/* diagnose_python.c - the lines and modules of a Python program that
 * diagnose's findings name (python.h), read through the read model's
 * Python rows (model/python_stacks.h). */
#include "python.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "model/python_stacks.h"
#include "prof/event.h"
#include "prof/saturate.h"

/* How many lines cpu_bound's evidence names. */
#define HOST_LINES 3

/* An installed package's file as its import path reads
 * (".../site-packages/torch/nn/functional.py" is "torch/nn/functional.py"). */
static const char *short_file(const char *file)
{
	const char *cut = strstr(file, "/site-packages/");

	if (!cut)
		cut = strstr(file, "/dist-packages/");
	return cut ? strchr(cut + 1, '/') + 1 : file;
}

/* "file.py:line (function)", and " from file.py:line (function)" where the
 * line is a library's and the program called it; a change's clauses are
 * written in braces, so a brace of a name becomes a parenthesis. */
static void line_text(char *buf, size_t cap, const struct py_place *p)
{
	int n = snprintf(buf, cap, "%s:%lld (%s)", short_file(p->file), (long long)p->line,
			 p->function);

	if (p->caller_file && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " from %s:%lld (%s)", p->caller_file,
			 (long long)p->caller_line, p->caller_function);
	for (char *c = buf; *c; c++)
		*c = *c == '{' ? '(' : *c == '}' ? ')' : *c;
}

/* The host side of the window, where Python runs. */
static int64_t host_end(const struct diag_context *ctx)
{
	return ctx->w->host_end_ns > ctx->w->start_ns ? ctx->w->host_end_ns : ctx->w->end_ns;
}

int diag_python__host_lines(struct diag_context *ctx, char **evidence, struct diag_py_line *top,
			    struct prof_error *err)
{
	struct py_places p = { 0 };
	struct py_capture pc;
	char list[HOST_LINES * 1100] = "";
	size_t used = 0;
	int rc;

	*evidence = NULL;
	memset(top, 0, sizeof *top);
	rc = py_capture__read(ctx->store, &pc, err);
	if (rc < 0 || !pc.has_samples || pc.period_ns <= 0)
		return rc;
	rc = py_places__sampled(ctx->store, ctx->w->start_ns, host_end(ctx), true, &p, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < p.n && i < HOST_LINES; i++) {
		char text[1024];
		int64_t w = p.v[i].weight;
		double share = diag__share(ctx, w > INT64_MAX / pc.period_ns ? INT64_MAX
									    : w * pc.period_ns);
		int n;

		line_text(text, sizeof text, &p.v[i]);
		if (i == 0) {
			snprintf(top->text, sizeof top->text, "%s", text);
			top->share = share;
		}
		n = snprintf(list + used, sizeof list - used, "%s%s %.0f%%", i ? ", " : "", text,
			     100 * share);
		if (n < 0 || (size_t)n >= sizeof list - used)
			break;
		used += (size_t)n;
	}
	if (p.n > 0)
		*evidence = diag__fmt(" The Python lines that run there most (sampled outside CUDA "
				      "calls, share of the window): %s.", list);
	py_places__exit(&p);
	return 0;
}

int diag_python__calling_line(struct diag_context *ctx, const char *names_where, char **evidence,
			   struct diag_py_line *top, struct prof_error *err)
{
	struct py_places p = { 0 };
	struct py_capture pc;
	char *calls;
	bool from_stacks;
	int64_t all = 0;
	int rc;

	*evidence = NULL;
	memset(top, 0, sizeof *top);
	rc = py_capture__read(ctx->store, &pc, err);
	if (rc < 0 || (!pc.has_cuda_calls && !pc.has_samples))
		return rc;
	calls = diag__fmt("SELECT r.globalTid AS globalTid, r.correlationId AS correlationId,"
			  " r.start AS start, r.end AS end FROM " DIAG_API_CALLS " r JOIN "
			  SUM_API_NAMES " s ON s.id = r.nameId"
			  " WHERE r.start >= ?1 AND r.start < ?2 AND (%s)", names_where);
	if (!calls)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	from_stacks = pc.has_cuda_calls;
	rc = from_stacks ? py_places__of_calls(ctx->store, calls, ctx->w->start_ns, host_end(ctx), &p, err)
			 : 0;
	if (rc == 0 && p.n == 0 && pc.has_samples) {
		from_stacks = false;
		rc = py_places__sampled_in_calls(ctx->store, calls, ctx->w->start_ns, host_end(ctx), &p,
						 err);
	}
	free(calls);
	if (rc < 0 || p.n == 0) {
		py_places__exit(&p);
		return rc;
	}
	for (size_t i = 0; i < p.n; i++)
		all = prof_add_saturated(all, p.v[i].weight);
	line_text(top->text, sizeof top->text, &p.v[0]);
	top->share = all > 0 ? (double)p.v[0].weight / (double)all : 0;
	if (from_stacks)
		*evidence = diag__fmt(" The line that calls them most: %s, %lld calls (%.0f%% of their "
				      "time, by the calls' Python stacks).", top->text,
				      (long long)p.v[0].count, 100 * top->share);
	else
		*evidence = diag__fmt(" The line the samples find inside them most: %s (%.0f%% of the "
				      "samples taken in them).", top->text, 100 * top->share);
	py_places__exit(&p);
	return *evidence ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* Ranges of one module and direction together. */
static int by_module(const void *a, const void *b)
{
	const struct py_module_range *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->direction - y->direction;
}

int diag_python__busiest_module(struct diag_context *ctx, char **evidence, struct prof_error *err)
{
	struct py_modules m = { 0 };
	struct py_capture pc;
	int64_t best_n = 0, best_ns = 0, best_name = -1, all = 0, n = 0, ns = 0;
	int best_dir = 0;
	int rc;

	*evidence = NULL;
	rc = py_capture__read(ctx->store, &pc, err);
	if (rc < 0 || !pc.has_modules)
		return rc;
	rc = py_modules__load(ctx->store, ctx->w->start_ns, host_end(ctx), &m, err);
	if (rc == 0 && m.n > 0)
		qsort(m.v, m.n, sizeof *m.v, by_module);
	for (size_t i = 0; rc == 0 && i < m.n; i++) {
		all += m.v[i].self_kernels;
		n += m.v[i].self_kernels;
		ns = prof_add_saturated(ns, m.v[i].self_kernel_ns);
		if (i + 1 < m.n && !by_module(&m.v[i], &m.v[i + 1]))
			continue;
		if (n > best_n) {
			best_n = n;
			best_ns = ns;
			best_name = m.v[i].name;
			best_dir = m.v[i].direction;
		}
		n = ns = 0;
	}
	if (rc == 0 && best_name >= 0) {
		char buf[1024], b1[32];
		const char *qual, *cls;

		py_module__split(m.names[best_name], buf, sizeof buf, &qual, &cls);
		/* the root module, or a capture that names modules by class: once */
		if (!strcmp(qual, cls))
			cls = "";
		*evidence = diag__fmt(" The module that launches the most kernels of its own: %s%s%s%s, %s, "
				      "%.1f kernels per iteration of %s on average (%.0f%% of the kernels "
				      "launched inside modules).", qual, *cls ? " (" : "", cls,
				      *cls ? ")" : "", py_direction__name(best_dir),
				      (double)best_n / diag__per_iter(ctx),
				      diag__ns(b1, sizeof b1, best_ns / best_n),
				      all > 0 ? 100.0 * (double)best_n / (double)all : 0.0);
		if (!*evidence)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	py_modules__exit(&m);
	return rc;
}
