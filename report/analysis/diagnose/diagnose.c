/* diagnose.c - what every rule of `perfkit diagnose` sees and writes
 * (context.h, findings.h): the context made of a capture (the API call
 * view, the window, the GPU busy intervals), findings and skips added to
 * its report. The engine that runs the rules is analysis/diagnose_run.c. */
#include "diagnose.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "analysis/core/gpu_work.h"
#include "prof/strfmt.h"
#include "prof/tables.h"
#include "prof/units.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

const char *diag_severity__name(enum diag_severity s)
{
	static const char *const names[] = { "info", "low", "medium", "high" };
	return (s >= DIAG_INFO && s <= DIAG_HIGH) ? names[s] : "?";
}

double diag__get(const struct diag_context *ctx, const char *key)
{
	return diag_settings__get(ctx->settings, key);
}

int64_t diag__window_ns(const struct diag_context *ctx)
{
	/* time between capture windows is not the window's: nothing recorded it */
	int64_t d = ctx->w->span_ns;
	return d > 0 ? d : 1;
}

/* Under kernel replay the window is mostly the profiler's own time: shares
 * are then of what the GPU did in it. */
double diag__share(const struct diag_context *ctx, int64_t ns)
{
	int64_t base = ctx->report->replayed ? (ctx->busy_ns > 0 ? ctx->busy_ns : 1) : diag__window_ns(ctx);
	double s = (double)ns / (double)base;
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

double diag__per_iter(const struct diag_context *ctx)
{
	return ctx->w->iterations > 0 ? (double)ctx->w->iterations : 1.0;
}

/* The busy intervals as the union they are. */
static struct diag_intervals busy_of(const struct diag_context *ctx)
{
	const struct diag_intervals busy = { ctx->busy, ctx->nbusy, ctx->nbusy };

	return busy;
}

int64_t diag__busy_in(const struct diag_context *ctx, int64_t a, int64_t b)
{
	const struct diag_intervals busy = busy_of(ctx);

	return diag_intervals__covered(&busy, a, b);
}

enum diag_severity diag__severity_of(const struct diag_context *ctx, double share)
{
	if (share >= diag__get(ctx, "severity.high"))
		return DIAG_HIGH;
	if (share >= diag__get(ctx, "severity.medium"))
		return DIAG_MEDIUM;
	if (share >= diag__get(ctx, "severity.low"))
		return DIAG_LOW;
	return DIAG_INFO;
}

struct diag_finding *diag__add(struct diag_context *ctx, const char *rule_id, const char *title,
			       double share, int64_t time_ns, enum diag_severity max_severity,
			       char *evidence, char *change)
{
	struct diag_report *r = ctx->report;
	struct diag_finding *f;
	char *rendered;
	bool unknown;

	if (!evidence || !change)
		goto fail;
	/* the change for this program: no clause advising what it does already */
	rendered = prog_model__render(&r->program, change, &unknown);
	free(change);
	change = rendered;
	if (!change)
		goto fail;
	assert(!unknown && "a change names a practice prog_model__has does not know");
	if (r->nfindings == r->cap_findings) {
		int cap = r->cap_findings ? r->cap_findings * 2 : 16;
		struct diag_finding *n = realloc(r->findings, sizeof *n * (size_t)cap);
		if (!n)
			goto fail;
		r->findings = n;
		r->cap_findings = cap;
	}
	f = &r->findings[r->nfindings++];
	memset(f, 0, sizeof *f);
	f->rule_id = rule_id;
	f->title = title;
	f->share = share < 0 ? 0 : share > 1 ? 1 : share;
	f->time_ns = time_ns;
	f->severity = diag__severity_of(ctx, f->share);
	if (f->severity > max_severity)
		f->severity = max_severity;
	f->evidence = evidence;
	f->change = change;
	f->share_rank = -1;
	return f;
fail:
	free(evidence);
	free(change);
	return NULL;
}

void diag__offender(struct diag_finding *f, const char *name, int64_t count, int64_t time_ns,
		    int64_t bytes)
{
	struct diag_offender *o;

	if (!f || f->ntop >= DIAG_MAX_OFFENDERS)
		return;
	o = &f->top[f->ntop];
	o->name = strdup(name ? name : "?");
	if (!o->name)
		return;
	o->count = count;
	o->time_ns = time_ns;
	o->bytes = bytes;
	f->ntop++;
}

int diag__skip(struct diag_context *ctx, const char *rule_id, const char *fmt, ...)
{
	struct diag_report *r = ctx->report;
	va_list ap;
	char *reason;

	va_start(ap, fmt);
	reason = prof_vstrfmt(fmt, ap);
	va_end(ap);
	if (!reason)
		return PROF_E_NOMEM;
	if (r->nskips == r->cap_skips) {
		int cap = r->cap_skips ? r->cap_skips * 2 : 8;
		struct diag_skip *s = realloc(r->skips, sizeof *s * (size_t)cap);
		if (!s) {
			free(reason);
			return PROF_E_NOMEM;
		}
		r->skips = s;
		r->cap_skips = cap;
	}
	r->skips[r->nskips].rule_id = strdup(rule_id);
	if (!r->skips[r->nskips].rule_id) {
		free(reason);
		return PROF_E_NOMEM;
	}
	r->skips[r->nskips].reason = reason;
	r->nskips++;
	return 0;
}

void diag_report__delete(struct diag_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nfindings; i++) {
		free(r->findings[i].evidence);
		free(r->findings[i].change);
		for (int j = 0; j < r->findings[i].ntop; j++)
			free(r->findings[i].top[j].name);
		free(r->findings[i].ranks);
		diag_finding__free_also(&r->findings[i]);
	}
	for (int i = 0; i < r->nranks; i++)
		free(r->ranks[i].label);
	free(r->ranks);
	for (int i = 0; i < r->nskips; i++) {
		free(r->skips[i].rule_id);
		free(r->skips[i].reason);
	}
	free(r->findings);
	free(r->skips);
	free(r->path);
	free(r->chosen);
	free(r->chosen_label);
	free(r);
}

/* ---- the window ------------------------------------------------------ */

/* The steady-state loop, found as diff and gate find it (model/window.c),
 * searched for with this diagnosis's settings. */
static int find_window(struct diag_context *ctx, struct sum_window *w, struct prof_error *err)
{
	const struct sum_loop_options o = {
		.min_iterations = diag__get(ctx, "iterations.min"),
		.coverage = diag__get(ctx, "iterations.coverage"),
		.tiling = diag__get(ctx, "iterations.tiling"),
		.whole_run = diag__get(ctx, "window.whole_run") != 0,
		/* made before the search (context_init) */
		.calls = ctx->has_api_calls ? DIAG_API_CALLS : NULL,
	};

	return sum_window__find(ctx->store, &o, w, err);
}

/* ---- running ---------------------------------------------------------- */

int diag_report__sort(struct diag_report *r)
{
	if (diag__group_skips(r))
		return PROF_E_NOMEM;
	diag_report__order(r);
	return 0;
}

/* Rules skipped for the same reason are listed together (the printers
 * join neighbours that share a reason), in the order the reasons came. */
int diag__group_skips(struct diag_report *r)
{
	struct diag_skip *sorted;
	bool *placed;
	int n = 0;

	if (r->nskips < 3)
		return 0; /* two skips are together already */
	sorted = malloc(sizeof *sorted * (size_t)r->nskips);
	placed = calloc((size_t)r->nskips, sizeof *placed);
	if (!sorted || !placed) {
		free(sorted);
		free(placed);
		return PROF_E_NOMEM;
	}
	for (int i = 0; i < r->nskips; i++) {
		for (int j = i; j < r->nskips; j++)
			if (!placed[j] && !strcmp(r->skips[j].reason, r->skips[i].reason)) {
				sorted[n++] = r->skips[j];
				placed[j] = true;
			}
	}
	memcpy(r->skips, sorted, sizeof *sorted * (size_t)n);
	free(sorted);
	free(placed);
	return 0;
}

void diag_context__note_tables(struct diag_context *ctx)
{
	const struct {
		const char *table;
		bool *has;
	} tables[] = {
		{ PROF_T_KERNEL, &ctx->has_kernel },     { PROF_T_MEMCPY, &ctx->has_memcpy },
		{ PROF_T_MEMSET, &ctx->has_memset },     { PROF_T_SYNC, &ctx->has_sync_table },
		{ PROF_T_MEMORY, &ctx->has_memory_events }, { PROF_T_GRAPH_TRACE, &ctx->has_graph_trace },
	};

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		*tables[i].has = prof_store__has_table(ctx->store, tables[i].table);
}

int diag_program__make(struct diag_context *ctx, void **out, struct prof_error *err)
{
	struct prog_model *m = malloc(sizeof *m);
	int rc;

	*out = NULL;
	if (!m)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prog_model__read_gpu(ctx->store, ctx->w, ctx->report->pytorch, m, err);
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int diag_busy__make(struct diag_context *ctx, void **out, struct prof_error *err)
{
	struct diag_scope *b = malloc(sizeof *b);
	int rc;

	*out = NULL;
	if (!b)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	*b = diag_scope__bare(&ctx->scope);
	rc = diag_scope__load_busy(b, err);
	if (rc) {
		diag_busy__free(b);
		return rc;
	}
	*out = b;
	return 0;
}

void diag_busy__free(void *busy)
{
	if (!busy)
		return;
	diag_scope__exit(busy);
	free(busy);
}

/* The program's model: the calls' names read here, meanwhile the GPU
 * side on the thread ahead where there is one (core/program.h's parts). */
static int read_program(struct diag_context *ctx, struct prof_error *err)
{
	const char *calls = ctx->has_api_calls ? DIAG_API_CALLS : NULL;
	struct diag_report *r = ctx->report;
	struct prog_model by_calls;
	void *made = NULL;
	int rc = prog_model__take_call_names(ctx->store, ctx->has_api_calls && ctx->api_table_here, &by_calls,
					     err);

	if (!rc)
		rc = diag_ahead__take_or_make(ctx, DIAG_AHEAD_PROGRAM, diag_program__make, &made, err);
	if (rc)
		return rc;
	r->program = *(struct prog_model *)made;
	free(made);
	prog_model__add_calls(&r->program, &by_calls);
	return prog_model__read_input_gaps(ctx->store, &r->window, calls, &r->program, err);
}

static int load_busy(struct diag_context *ctx, struct prof_error *err)
{
	struct diag_scope *b;
	void *made = NULL;
	int rc = diag_ahead__take(ctx, DIAG_AHEAD_BUSY, &made, err);

	if (rc == DIAG_AHEAD_NOT_MADE)
		return diag_scope__load_busy(&ctx->scope, err);
	if (rc)
		return rc;
	b = made;
	diag_scope__take_busy(&ctx->scope, b);
	free(b);
	return 0;
}

/* The context; for_rules: with what only the rules read (whether the
 * program runs PyTorch, its model); known: the window found already with
 * this diagnosis's settings in the same scope, or NULL to find it;
 * passes: those made ahead (ahead.h), or NULL for none. */
static int context_init(struct diag_context *ctx, struct prof_store *store, const struct diag_settings *settings,
			bool for_rules, const struct sum_window *known,
			const struct diag_ahead_pass *passes, struct prof_error *err)
{
	struct diag_report *r = calloc(1, sizeof *r);
	int rc;

	memset(ctx, 0, sizeof *ctx);
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	ctx->report = r;
	r->path = strdup(prof_store__path(store));
	if (!r->path)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	ctx->store = store;
	ctx->settings = settings;
	ctx->w = &r->window;
	/* the intervals lent are of every row: a scope of some (--rank, a
	 * rank of a job) walks its own */
	ctx->busy_source = settings->busy && !prof_store__restricted(store) ? settings->busy : NULL;
	diag_context__note_tables(ctx);
	if (for_rules && passes)
		ctx->ahead = diag_ahead__start(ctx, passes);
	rc = diag_scope__api_view(&ctx->scope, err);
	if (rc)
		return rc;
	/* the analysis tables are created together: rows, not tables, tell */
	r->has_metrics = prof_store__count(store, PROF_T_KERNEL_METRICS) > 0;
	r->has_peaks = prof_store__count(store, PROF_T_PEAKS) > 0;
	r->replayed = r->has_metrics;
	ctx->replayed = r->replayed;
	rc = for_rules ? diag__detect_pytorch(store, &r->pytorch, err) : 0;
	if (rc)
		return rc;
	if (known)
		r->window = *known;
	else
		rc = find_window(ctx, &r->window, err);
	if (rc)
		return rc;
	diag_ahead__go(ctx->ahead, ctx);
	rc = for_rules ? read_program(ctx, err) : 0;
	if (rc)
		return rc;
	return load_busy(ctx, err);
}

int diag_context__init(struct diag_context *ctx, struct prof_store *store,
		       const struct diag_settings *settings, struct prof_error *err)
{
	return context_init(ctx, store, settings, true, NULL, NULL, err);
}

int diag_context__init_in(struct diag_context *ctx, struct prof_store *store,
			  const struct diag_settings *settings, const struct sum_window *known,
			  struct prof_error *err)
{
	return context_init(ctx, store, settings, true, known, NULL, err);
}

int diag_context__init_ahead(struct diag_context *ctx, struct prof_store *store,
			     const struct diag_settings *settings, const struct sum_window *known,
			     const struct diag_ahead_pass *passes, struct prof_error *err)
{
	return context_init(ctx, store, settings, true, known, passes, err);
}

int diag_context__init_scope(struct diag_context *ctx, struct prof_store *store,
			     const struct diag_settings *settings, struct prof_error *err)
{
	return context_init(ctx, store, settings, false, NULL, NULL, err);
}

void diag_context__exit(struct diag_context *ctx)
{
	api_names_read__free(ctx->api_names_read);
	ctx->api_names_read = NULL;
	diag_scope__exit(&ctx->scope);
	diag_report__delete(ctx->report);
	ctx->report = NULL;
}
