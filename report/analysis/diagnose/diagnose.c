/* diagnose.c - the engine of `perfkit diagnose`: finds the analysis window
 * (the steady-state loop), loads the GPU busy intervals, runs every rule
 * family and sorts the findings by the share of run time they touch. */
#include "diagnose.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose_job.h"
#include "analysis/timeline/gpu_idle.h"
#include "analysis/ranks/job_judge.h"
#include "prof/tables.h"
#include "summary/query.h"

const char *diag_severity__name(enum diag_severity s)
{
	static const char *const names[] = { "info", "low", "medium", "high" };
	return (s >= DIAG_INFO && s <= DIAG_HIGH) ? names[s] : "?";
}

char *diag__fmt(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

double diag__get(const struct diag_context *ctx, const char *key)
{
	return diag_settings__get(ctx->settings, key);
}

int64_t diag__window_ns(const struct diag_context *ctx)
{
	int64_t d = prof_span_saturated(ctx->w->start_ns, ctx->w->end_ns);
	return d > 0 ? d : 1;
}

int diag__open_window(const struct diag_context *ctx, const char *sql, enum diag_side side,
		      struct prof_cursor **out, struct prof_error *err)
{
	int rc = prof_cursor__open(ctx->store, sql, out, err);

	if (rc)
		return rc;
	prof_cursor__bind_int64(*out, 1, ctx->w->start_ns);
	prof_cursor__bind_int64(*out, 2, side == DIAG_HOST_SIDE ? ctx->w->host_end_ns : ctx->w->end_ns);
	return 0;
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

const char *diag__ns(char *buf, size_t cap, int64_t ns)
{
	double v = (double)ns;

	if (ns >= 1000000000)
		snprintf(buf, cap, "%.3f s", v / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.3f ms", v / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.2f us", v / 1e3);
	else
		snprintf(buf, cap, "%lld ns", (long long)ns);
	return buf;
}

const char *diag__bytes(char *buf, size_t cap, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, cap, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024.0 * 1024)
		snprintf(buf, cap, "%.2f MiB", bytes / (1024.0 * 1024));
	else if (bytes >= 1024.0)
		snprintf(buf, cap, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, cap, "%.0f B", bytes);
	return buf;
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
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	reason = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!reason)
		return PROF_E_NOMEM;
	va_start(ap, fmt);
	vsnprintf(reason, (size_t)n + 1, fmt, ap);
	va_end(ap);
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

/* The steady-state loop, found as diff and gate find it (summary/window.c),
 * searched for with this diagnosis's settings. */
static int find_window(struct diag_context *ctx, struct sum_window *w, struct prof_error *err)
{
	const struct sum_loop_options o = {
		.min_iterations = diag__get(ctx, "iterations.min"),
		.coverage = diag__get(ctx, "iterations.coverage"),
		.tiling = diag__get(ctx, "iterations.tiling"),
		.whole_run = diag__get(ctx, "window.whole_run") != 0,
	};

	return sum_window__find(ctx->store, &o, w, err);
}

/* ---- GPU busy intervals --------------------------------------------- */

static int load_busy(struct diag_context *ctx, struct prof_error *err)
{
	char sql[1024];
	bool first = true;
	struct diag_intervals busy = { 0 };
	int rc;

	sql[0] = 0;
	/* table names are constants of this file, never data */
	if (ctx->has_kernel) {
		strcat(sql, "SELECT start, end FROM " PROF_T_KERNEL " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (ctx->has_memcpy) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMCPY " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (ctx->has_memset) {
		strcat(sql, first ? "" : " UNION ALL ");
		strcat(sql, "SELECT start, end FROM " PROF_T_MEMSET " WHERE end > ?1 AND start < ?2"
		       " AND NOT " SUM_BAD_SPAN(""));
		first = false;
	}
	if (first)
		return 0;
	strcat(sql, " ORDER BY 1");
	rc = diag__load_union(ctx, sql, DIAG_GPU_SIDE, &busy, err);
	if (rc) {
		diag_intervals__exit(&busy);
		return rc;
	}
	ctx->busy = busy.v;
	ctx->nbusy = busy.n;
	ctx->busy_ns = diag_intervals__length(&busy);
	return 0;
}

/* ---- running ---------------------------------------------------------- */

/* The rules read CUDA API calls from one view over the runtime and driver
 * tables: libraries such as cuBLAS launch and allocate through the driver,
 * and the driver table holds only the calls made directly (the runtime's
 * own driver calls are not recorded twice). The view is the summaries' own
 * source (sum_api_calls: each call once, a NULL correlation id where an
 * older nsys export has none). A temporary view lives in the connection's
 * temp database: the store stays read-only. */
#define VIEW_HEAD "CREATE TEMP VIEW " DIAG_API_CALLS " AS SELECT * FROM ("
#define VIEW_TAIL ") WHERE NOT " SUM_BAD_SPAN("")

int diag__api_view(struct diag_context *ctx, struct prof_error *err)
{
	char *src, *view;
	int rc = prof_store__exec(ctx->store, "DROP VIEW IF EXISTS temp." DIAG_API_CALLS, err);

	if (rc)
		return rc;
	src = sum_api_calls(ctx->store, &rc, err);
	if (!src)
		return rc;
	ctx->has_api_calls = true;
	/* less its calls with a bad span, which the summary counts and leaves
	 * out: every rule reads the calls here */
	view = malloc(strlen(src) + sizeof VIEW_HEAD VIEW_TAIL);
	if (view) {
		sprintf(view, VIEW_HEAD "%s" VIEW_TAIL, src);
		rc = prof_store__exec(ctx->store, view, err);
	} else {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	free(view);
	free(src);
	return rc;
}

/* Each id of a timing rule, skipped with the reason. */
static int skip_under_replay(struct diag_context *ctx, const struct diag_rule *rule, struct prof_error *err)
{
	for (const char *id = rule->id; *id;) {
		size_t len = strcspn(id, "+");
		char one[64];

		snprintf(one, sizeof one, "%.*s", (int)len, id);
		if (diag__skip(ctx, one, "kernel replay (--metrics) serialised and slowed this run, so its host "
					 "times, idle gaps and launch costs are the profiler's: for these rules, "
					 "diagnose a capture made without --metrics"))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		id += len + (id[len] == '+');
	}
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

int diag_context__init(struct diag_context *ctx, struct prof_store *store,
		       const struct diag_settings *settings, struct prof_error *err)
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
	ctx->has_kernel = prof_store__has_table(store, PROF_T_KERNEL);
	ctx->has_memcpy = prof_store__has_table(store, PROF_T_MEMCPY);
	ctx->has_memset = prof_store__has_table(store, PROF_T_MEMSET);
	ctx->has_sync_table = prof_store__has_table(store, PROF_T_SYNC);
	ctx->has_memory_events = prof_store__has_table(store, PROF_T_MEMORY);
	rc = diag__api_view(ctx, err);
	if (rc)
		return rc;
	/* the analysis tables are created together: rows, not tables, tell */
	r->has_metrics = prof_store__count(store, PROF_T_KERNEL_METRICS) > 0;
	r->has_peaks = prof_store__count(store, PROF_T_PEAKS) > 0;
	r->replayed = r->has_metrics;
	rc = diag__detect_pytorch(store, &r->pytorch, err);
	if (rc)
		return rc;
	rc = find_window(ctx, &r->window, err);
	if (rc)
		return rc;
	rc = prog_model__read(store, &r->window, r->pytorch, ctx->has_api_calls ? DIAG_API_CALLS : NULL,
			      &r->program, err);
	if (rc)
		return rc;
	return load_busy(ctx, err);
}

void diag_context__exit(struct diag_context *ctx)
{
	free(ctx->busy);
	ctx->busy = NULL;
	gpu_idle_result__delete(ctx->idle);
	ctx->idle = NULL;
	diag_report__delete(ctx->report);
	ctx->report = NULL;
}

int diag__run_family(struct diag_context *ctx, const struct diag_rule *family, struct prof_error *err)
{
	for (const struct diag_rule *rule = family; rule->id; rule++) {
		int rc = ctx->report->replayed && rule->timing ? skip_under_replay(ctx, rule, err)
							       : rule->run(ctx, err);

		if (rc)
			return rc;
	}
	return 0;
}

static int sort_report(struct diag_report *r)
{
	if (diag__group_skips(r))
		return PROF_E_NOMEM;
	diag_report__order(r);
	return 0;
}

/* A context that failed ends the program's GPU work where it failed, and
 * takes the GPU times CUPTI had not read back: said above the findings,
 * which judge only the work that has times. */
static int note_failure(struct prof_store *store, struct diag_report *r, struct prof_error *err)
{
	struct sum_context_failure f;
	int rc = sum_context_failure__find(store, &f, err);

	if (rc < 0)
		return rc;
	sum_context_failure__say(&f, r->failure, sizeof r->failure);
	/* The trace knows the call that reported the failure, not the kernel
	 * that caused it: the next step is a tool that does. */
	if (f.failed)
		snprintf(r->failure_next, sizeof r->failure_next,
			 "run the program under `compute-sanitizer` (`compute-sanitizer --tool memcheck "
			 "PROGRAM`): it names the kernel and the access that failed%s",
			 r->pytorch ? "; in PyTorch, CUDA_LAUNCH_BLOCKING=1 also makes the traceback "
				      "point at the operation that launched it" : "");
	sum_context_failure__say_untimed(&f, r->untimed, sizeof r->untimed);
	return 0;
}

int diag__run_process(struct prof_store *store, const struct diag_settings *settings,
		      struct diag_report **out, struct prof_error *err)
{
	const struct diag_rule *const families[] = {
		diag_rules_nsys, diag_rules_transfer, diag_rules_alloc,
		diag_rules_launch, diag_rules_kernel, diag_rules_memory, diag_rules_host,
		diag_rules_critical_path, diag_rules_gpu_metrics, diag_rules_precision,
	};
	struct diag_context ctx;
	struct diag_report *r;
	int rc;

	*out = NULL;
	rc = diag_context__init(&ctx, store, settings, err);
	if (rc)
		goto out;
	r = ctx.report;
	r->gpu_busy_ns = ctx.busy_ns;
	rc = note_failure(store, r, err);
	if (rc)
		goto out;
	/* Without GPU work every rule would measure against nothing: a program
	 * that never reached the GPU "spends 100% on the host". */
	if (ctx.busy_ns == 0) {
		if (diag__skip(&ctx, "every rule", "the window holds no GPU activity (no kernel, "
			       "copy or memset): nothing to diagnose")) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		goto done;
	}
	/* the verdict first: the rules' advice is for the step's bound */
	rc = diag_verdict__make(&ctx, &r->verdict, err);
	if (rc)
		goto out;
	r->program.bound = r->verdict.valid ? (int)r->verdict.bound : -1;
	/* without a verdict (or a loop) every clause stays: nothing to tell */
	r->program.dispatch = !r->verdict.valid ||
		(r->verdict.bound == BOUND_LAUNCH_HOST && r->program.kernels > 0 &&
		 (double)r->verdict.part_ns[PART_HOST_WORK] <=
			 (double)DISPATCH_NS_PER_LAUNCH * (double)r->program.kernels /
				 (double)(r->verdict.steps > 0 ? r->verdict.steps : 1));
	for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
		rc = diag__run_family(&ctx, families[f], err);
		if (rc)
			goto out;
	}
	if (diag_report__fold(&ctx, r) || sort_report(r)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
done:
	*out = r;
	ctx.report = NULL;
out:
	diag_context__exit(&ctx);
	return rc;
}

/* --rank's choice into r, for the header: the ranks, and one named in
 * full ("rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)") or several by number. */
static int note_chosen(struct diag_report *r, const struct sum_ranks *ranks)
{
	const struct sum_process *one = NULL;
	char label[256];

	r->chosen = malloc(sizeof *r->chosen * (size_t)(ranks->n ? ranks->n : 1));
	if (!r->chosen)
		return PROF_E_NOMEM;
	for (int i = 0; i < ranks->n; i++)
		if (ranks->p[i].rank >= 0 && ranks->p[i].selected) {
			r->chosen[r->nchosen++] = ranks->p[i].rank;
			one = &ranks->p[i];
		}
	if (r->nchosen == 1)
		sum_process__label(one, label, sizeof label);
	else
		job_judge__rank_list(r->chosen, r->nchosen, label, sizeof label);
	r->chosen_label = strdup(label);
	return r->chosen_label ? 0 : PROF_E_NOMEM;
}

static int run_chosen(struct prof_store *store, const struct diag_settings *settings,
		      struct diag_report **out, struct prof_error *err)
{
	struct sum_ranks ranks;
	int chosen = 0, left = 0, rc;

	/* a perfkit capture of one process is known without the rank model */
	if (!sum_ranks__may_be_job(store))
		return diag__run_process(store, settings, out, err);
	*out = NULL;
	rc = sum_ranks__load(store, &ranks, err);
	if (rc)
		return rc;
	for (int i = 0; i < ranks.n; i++) {
		chosen += ranks.p[i].rank >= 0 && ranks.p[i].selected;
		left += ranks.p[i].rank >= 0 && !ranks.p[i].selected;
	}
	rc = chosen > 1 && sum_ranks__is_job(&ranks) ? diag__run_job(store, settings, &ranks, out, err)
						       : diag__run_process(store, settings, out, err);
	/* the header names --rank's choice when it leaves ranks out */
	if (rc == 0 && left > 0 && note_chosen(*out, &ranks)) {
		diag_report__delete(*out);
		*out = NULL;
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	sum_ranks__exit(&ranks);
	if (rc == 0 && (*out)->nranks > 0 && sort_report(*out)) {
		diag_report__delete(*out);
		*out = NULL;
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	return rc;
}

int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err)
{
	int rc = run_chosen(store, settings, out, err);

	/* every rule read the capture without its rows of a bad span, as
	 * the summaries leave them out: the header says how many */
	if (rc == 0)
		rc = sum_bad_spans__count(store, &(*out)->rows_left_out, err);
	if (rc < 0 && *out) {
		diag_report__delete(*out);
		*out = NULL;
	}
	return rc;
}
