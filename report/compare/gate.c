/* gate.c - the regression decision of `perfkit gate` and its outputs
 * (rows for the text/JSON sinks, JUnit XML); the rule is in gate.h. */
#include "gate.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/strfmt.h"
#include "sink/symbol.h"
#include "sink/table.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/saturate.h"

/* MAD times this estimates the standard deviation of normal noise. */
#define MAD_TO_SIGMA 1.4826
/* How many of the keys that grew most a total's failure names. */
#define GATE_CULPRITS 3

void gate_options__init(struct gate_options *o)
{
	o->max_regression_pct = 5.0;
	o->min_time_ns = 100 * 1000;
	o->min_share_pct = 1.0;
	o->noise_mads = 3.0;
	o->max_launch_ratio = 2.0;
	o->min_launch_share_pct = 0.5;
	o->any_program = false;
	o->common_ranks = false;
	o->full_names = false;
}

const char *gate_verdict__name(enum gate_verdict v)
{
	switch (v) {
	case GATE_PASS:
		return "pass";
	case GATE_FAIL:
		return "FAIL";
	case GATE_ADDED:
		return "added";
	case GATE_REMOVED:
		return "removed";
	}
	return "?";
}

const char *gate_per__name(enum gate_per p)
{
	switch (p) {
	case GATE_PER_CAPTURE:
		return "capture";
	case GATE_PER_ITERATION:
		return "iteration";
	case GATE_PER_LAUNCH:
		return "launch";
	}
	return "?";
}

/* A value in its unit, for messages. */
static void format_value(char *buf, size_t cap, enum baseline_unit unit, double v)
{
	if (unit == BASELINE_NS)
		diff_format_ns(buf, cap, llround(v));
	else if (unit == BASELINE_BYTES)
		snprintf(buf, cap, "%.0f B", v);
	else
		snprintf(buf, cap, "%.4g", v);
}

/* "/iter", "/launch" or "" after a value. */
static const char *per_words(enum gate_per p)
{
	return p == GATE_PER_ITERATION ? "/iter" : p == GATE_PER_LAUNCH ? "/launch" : "";
}

/* The median of the samples present (NaN: absent); 0 when none is. */
static double median_of(double *v, size_t n)
{
	struct baseline_stats st;

	baseline_stats__compute(&st, v, n);
	return st.median;
}

/* "a job of 2 ranks", "one process". */
static void job_size_words(char *buf, size_t cap, int ranks)
{
	if (ranks > 1)
		snprintf(buf, cap, "a job of %d ranks", ranks);
	else
		snprintf(buf, cap, "one process");
}

static int identity_check(const struct baseline *b, const struct diff_profile *p,
			  const struct gate_options *o, struct prof_error *err)
{
	const char *baseline_path = b->path ? b->path : "(unsaved)";
	/* The baseline holds the names as its file does (invalid UTF-8 replaced). */
	char *program = baseline__canonical_name("", p->program), *gpu = baseline__canonical_name("", p->gpu);
	int rc = 0;

	if (!program || !gpu)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	/* An unnamed side (an export without its command line) cannot be
	 * compared: the result says the identity is unknown. */
	else if (!o->any_program && b->program[0] && program[0] && strcmp(b->program, program) != 0)
		rc = prof_error__set(err, PROF_E_USAGE,
				     "%s is a capture of '%s%s%s%s' but the baseline %s is for '%s%s%s%s'"
				     " (--program=any compares them anyway)",
				     p->path, p->program, p->launcher[0] ? " (run by " : "", p->launcher,
				     p->launcher[0] ? ")" : "", baseline_path, b->program,
				     b->launcher && b->launcher[0] ? " (run by " : "", b->launcher ? b->launcher : "",
				     b->launcher && b->launcher[0] ? ")" : "");
	else if (b->gpu[0] && gpu[0] && strcmp(b->gpu, gpu) != 0)
		rc = prof_error__set(err, PROF_E_USAGE,
				     "%s was captured on '%s' but the baseline %s is for '%s'",
				     p->path, p->gpu, baseline_path, b->gpu);
	else if (b->ranks == 0 && p->nranks > 0)
		rc = prof_error__set(err, PROF_E_USAGE,
				     "%s is a job of %d ranks but the baseline %s does not record a job's"
				     " size (saved before jobs were keyed rank by rank): save it again",
				     p->path, p->nranks, baseline_path);
	else if (b->ranks > 0 && b->ranks != baseline__job_size(p) &&
		 !(o->common_ranks && b->ranks > 1 && p->nranks > 1)) {
		char capture[48], base[48];

		job_size_words(capture, sizeof capture, baseline__job_size(p));
		job_size_words(base, sizeof base, b->ranks);
		/* one process and a job share no key: nothing would be compared */
		rc = prof_error__set(err, PROF_E_USAGE, "%s is %s but the baseline %s is of %s%s",
				     p->path, capture, baseline_path, base,
				     b->ranks > 1 && p->nranks > 1 ?
				     " (--ranks=common compares the ranks both have)" : "");
	}
	free(program);
	free(gpu);
	return rc;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The length of a job's key's rank ("rank1/" of "rank1/gpu_time"); 0 for
 * the keys of one process and the job's step. */
static size_t rank_prefix_len(const char *key)
{
	size_t i = strlen("rank");

	if (!has_prefix(key, "rank") || !isdigit((unsigned char)key[i]))
		return 0;
	while (isdigit((unsigned char)key[i]))
		i++;
	return key[i] == '/' ? i + 1 : 0;
}

/* What a key measures, past its rank: "gpu_time", "kernel:<name>", ... */
static const char *key_kind(const char *key)
{
	return key + rank_prefix_len(key);
}

/* The key `kind` of the rank `key` belongs to ("rank1/" + kind), in buf. */
static const char *same_rank_key(char *buf, size_t cap, const char *key, const char *kind)
{
	snprintf(buf, cap, "%.*s%s", (int)rank_prefix_len(key), key, kind);
	return buf;
}

/* Where a kernel key's name starts ("rank1/kernel:NAME"), or 0 for
 * another kind of key. */
static size_t kernel_name_at(const char *key)
{
	return has_prefix(key_kind(key), "kernel:") ? rank_prefix_len(key) + strlen("kernel:") : 0;
}

/* A key as text and JUnit show it: "kernel:" and the kernel's short name,
 * unique among the gate's kernels (names), every key cut to GATE_NAME_MAX
 * bytes on a UTF-8 boundary with "...". */
static char *display_name(const char *key, const struct gate_options *o, struct rpt_symbols *names)
{
	char shortened[512];
	const char *name = key;
	size_t len, prefix = 0;

	if (o->full_names)
		return strdup(key);
	if (kernel_name_at(key)) {
		prefix = kernel_name_at(key);
		len = names ? rpt_symbols__show(names, key + prefix, shortened, sizeof shortened)
			    : rpt_symbol__shorten(key + prefix, RPT_SYMBOL_SHORT, shortened, sizeof shortened);
		if (len >= sizeof shortened)
			len = sizeof shortened - 1;
		shortened[len] = '\0';
		name = shortened;
	}
	len = strlen(name);
	if (prefix + len <= GATE_NAME_MAX)
		return prof_strfmt("%.*s%s", (int)prefix, key, name);
	len = GATE_NAME_MAX - prefix - 3;
	while (len > 0 && ((unsigned char)name[len] & 0xC0) == 0x80)
		len--;
	return prof_strfmt("%.*s%.*s...", (int)prefix, key, (int)len, name);
}

/* The baseline's GPU time (kernels and copies) or, for NVTX ranges and the
 * wall time, its wall time: what min_share_pct is a share of; a rank's key,
 * its rank's; a job's step, the step itself. */
static const struct baseline_key *run_total(const struct baseline *b, const char *key)
{
	const char *kind = key_kind(key);
	char name[64];

	if (strcmp(key, BASELINE_STEP_KEY) == 0)
		return baseline__find(b, key);
	return baseline__find(b, same_rank_key(name, sizeof name, key,
					       has_prefix(kind, "nvtx:") || strcmp(kind, "wall_time") == 0 ?
					       "wall_time" : "gpu_time"));
}

/* The smallest change of time worth failing for: over the run, or per
 * iteration of the loop. */
static double time_floor(const struct baseline *b, const char *key, bool per_iteration,
			 const struct gate_options *o)
{
	const struct baseline_key *total = run_total(b, key);
	double share = o->min_share_pct / 100.0;

	if (per_iteration)
		return fmax((double)o->min_time_ns / b->loop.iterations,
			    total && total->has_per_iteration ? total->per_iteration.median * share : 0);
	return fmax((double)o->min_time_ns, total ? total->st.median * share : 0);
}

/* The smallest change of this key worth failing for, in the case's terms. */
static double significance_floor(const struct gate_result *r, const struct baseline *b,
				 const struct baseline_key *k, const struct gate_case *c,
				 double new_iterations, const struct gate_options *o)
{
	double floor = 0;

	if (c->per == GATE_PER_LAUNCH) {
		/* The time floor spread over the key's launches: per iteration
		 * where it runs in the loop, else over the run. */
		double calls = k->has_per_iteration && k->st.median > 0 ?
				       k->per_iteration.median / k->st.median : 0;

		if (r->per_iteration && calls > 0)
			floor = time_floor(b, k->name, true, o) / calls;
		else
			floor = time_floor(b, k->name, false, o) / fmax(k->launches, 1);
	} else if (c->unit == BASELINE_NS) {
		floor = time_floor(b, k->name, c->per == GATE_PER_ITERATION, o);
	}
	/* A loop window's edges may hold one launch more or less at each end. */
	if (c->per == GATE_PER_ITERATION)
		floor = fmax(floor, DIFF_EDGE_CALLS * k->largest_launch /
					    fmin(b->loop.iterations, new_iterations));
	return floor;
}

static double noise_allowance(const struct baseline_stats *st, const struct gate_options *o)
{
	return fmax(st->max - st->median, o->noise_mads * MAD_TO_SIGMA * st->mad);
}

/* The keys of one kind that grew most, for naming what made a total fail:
 * "a +30 ms (added), b +10 ms"; those that explain less than a hundredth of
 * the total's growth stay out. */
static char *culprits(const struct gate_result *r, const struct gate_case *total, const char *prefix)
{
	const struct gate_case *top[GATE_CULPRITS] = { 0 };
	char *s = NULL, *t;

	for (size_t i = 0; i < r->ncases; i++) {
		const struct gate_case *c = &r->cases[i];

		if (!has_prefix(c->key, prefix) || c->growth <= 0 ||
		    c->growth < (total->new - total->base) / 100)
			continue;
		for (int j = 0; j < GATE_CULPRITS; j++) {
			if (!top[j] || c->growth > top[j]->growth) {
				memmove(&top[j + 1], &top[j], (GATE_CULPRITS - 1 - j) * sizeof top[0]);
				top[j] = c;
				break;
			}
		}
	}
	for (int j = 0; j < GATE_CULPRITS && top[j]; j++) {
		char d[32];

		format_value(d, sizeof d, BASELINE_NS, top[j]->growth);
		t = prof_strfmt("%s%s%s +%s%s%s", s ? s : "", s ? ", " : "",
			      top[j]->name + strlen(prefix), d, r->per_iteration ? "/iter" : "",
			      top[j]->verdict == GATE_ADDED ? " (added)" : "");
		free(s);
		if (!t)
			return NULL;
		s = t;
	}
	return s;
}

/* The key's time over the baseline's wall time, in %, where both are
 * known: per iteration where the run keys are compared so, else in the
 * run; -1 when unknown. */
static double launch_share(const struct gate_result *r, const struct baseline *b,
			   const struct baseline_key *k)
{
	char name[64];
	const struct baseline_key *wall = baseline__find(b, same_rank_key(name, sizeof name, k->name,
									  "wall_time"));

	if (!wall || k->per != BASELINE_PER_LAUNCH)
		return -1;
	if (r->per_iteration && k->has_per_iteration && wall->has_per_iteration &&
	    wall->per_iteration.median > 0)
		return 100 * k->per_iteration.median / wall->per_iteration.median;
	if (wall->st.median > 0)
		return 100 * k->st.median * fmax(k->launches, 1) / wall->st.median;
	return -1;
}

static int decide(const struct gate_result *r, struct gate_case *c, const struct baseline_key *k,
		  const struct baseline *b, const struct baseline_stats *st, double new_iterations,
		  const struct gate_options *o)
{
	char vb[32], vn[32], va[32], vno[32], vbu[32], vfl[32];
	double pct;

	c->budget_pct = k->budget_pct >= 0 ? k->budget_pct : o->max_regression_pct;
	c->noise = noise_allowance(st, o);
	c->floor = significance_floor(r, b, k, c, new_iterations, o);
	c->budget_amount = c->base * c->budget_pct / 100.0;
	c->floor_lift = fmax(0, c->floor - c->budget_amount - c->noise);
	c->allowed = c->base + c->budget_amount + c->noise + c->floor_lift;
	c->launch_share_pct = launch_share(r, b, k);
	if (!c->in_new) {
		c->verdict = GATE_REMOVED;
	} else {
		c->verdict = c->new > c->allowed ? GATE_FAIL : GATE_PASS;
		if (c->verdict == GATE_PASS && c->per == GATE_PER_LAUNCH && o->max_launch_ratio > 0 &&
		    c->base > 0 && c->new >= c->base * o->max_launch_ratio &&
		    /* a budget that allows it (the key's own 200%) is the user's word */
		    c->new > c->base * (1 + c->budget_pct / 100.0) &&
		    !(c->launch_share_pct >= 0 && c->launch_share_pct < o->min_launch_share_pct)) {
			c->verdict = GATE_FAIL;
			c->ratio_failed = true;
		}
	}
	format_value(vb, sizeof vb, c->unit, c->base);
	format_value(vn, sizeof vn, c->unit, c->new);
	format_value(va, sizeof va, c->unit, c->allowed);
	format_value(vno, sizeof vno, c->unit, c->noise);
	format_value(vbu, sizeof vbu, c->unit, c->budget_amount);
	format_value(vfl, sizeof vfl, c->unit, c->floor_lift);
	pct = c->base ? 100.0 * (c->new - c->base) / c->base : 0;
	if (c->verdict == GATE_REMOVED)
		c->message = prof_strfmt("%s: not in the new captures (baseline %s%s)", c->name, vb,
				       per_words(c->per));
	else if (c->ratio_failed)
		c->message = prof_strfmt("%s: %s%s vs %s, %.1fx per launch (limit %gx), %.2g%% of the"
				       " wall time: fails under the allowed %s", c->name, vn,
				       per_words(c->per), vb, c->new / c->base, o->max_launch_ratio,
				       c->launch_share_pct, va);
	else
		c->message = prof_strfmt("%s: %s%s vs %s (%+.1f%%); allowed %s = %s + %g%% %s + noise %s"
				       " + floor lift %s", c->name, vn, per_words(c->per), vb, pct, va,
				       vb, c->budget_pct, vbu, vno, vfl);
	return c->message ? 0 : PROF_E_NOMEM;
}

/* Totals that fail name the kernels (and ranges) that grew most. */
static int explain_totals(struct gate_result *r)
{
	for (size_t i = 0; i < r->ncases; i++) {
		struct gate_case *c = &r->cases[i];
		const char *kind = key_kind(c->key);
		char prefix[64];
		char *who, *msg;

		if (c->verdict != GATE_FAIL)
			continue;
		/* a rank's totals by that rank's keys */
		if (strcmp(kind, "gpu_time") == 0)
			same_rank_key(prefix, sizeof prefix, c->key, "kernel:");
		else if (strcmp(kind, "wall_time") == 0)
			same_rank_key(prefix, sizeof prefix, c->key, "nvtx:");
		else
			continue;
		who = culprits(r, c, prefix);
		if (!who && has_prefix(key_kind(prefix), "nvtx:"))
			who = culprits(r, c, same_rank_key(prefix, sizeof prefix, c->key, "kernel:"));
		if (!who)
			continue;
		msg = prof_strfmt("%s; grew most: %s", c->message, who);
		free(who);
		if (!msg)
			return PROF_E_NOMEM;
		free(c->message);
		c->message = msg;
	}
	return 0;
}

static int case_cmp(const void *pa, const void *pb)
{
	const struct gate_case *a = pa, *b = pb;

	if ((a->verdict == GATE_FAIL) != (b->verdict == GATE_FAIL))
		return a->verdict == GATE_FAIL ? -1 : 1;
	return 0;
}

/* Order: failures, then a job's step, the totals, then the per-entry keys
 * by name (a job's rank by rank in each). */
static int key_rank(const char *key)
{
	const char *kind = key_kind(key);

	if (strcmp(key, BASELINE_STEP_KEY) == 0)
		return 0;
	if (strchr(kind, ':') == NULL)
		return 1;
	if (has_prefix(kind, "copy_bytes:"))
		return 2;
	return 3;
}

static int case_order(const void *pa, const void *pb)
{
	const struct gate_case *a = pa, *b = pb;
	int c = case_cmp(pa, pb);

	if (c)
		return c;
	if (key_rank(a->key) != key_rank(b->key))
		return key_rank(a->key) - key_rank(b->key);
	return strcmp(a->key, b->key);
}

/* Whether every new capture has a loop marked as the baseline's was. */
static bool loops_match(const struct baseline *b, const struct diff_profile *p, size_t n,
			size_t *odd)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i].loop.iterations <= 0 || !sum_window__same_mark(&p[i].loop, &b->loop)) {
			*odd = i;
			return false;
		}
	}
	return true;
}

/* How the captures are compared, and why not per iteration where they are
 * not; sets r->per_iteration. */
static int choose_basis(struct gate_result *r, const struct baseline *b, const struct diff_profile *p,
			size_t n, double new_iterations)
{
	const char *mark = b->loop.mark == SUM_LOOP_NVTX ? "NVTX range" : "kernel";
	size_t odd = 0;

	r->per_iteration = b->version > 1 && b->loop.mark != SUM_LOOP_NONE && loops_match(b, p, n, &odd);
	if (r->per_iteration)
		r->basis = prof_strfmt("per iteration of %s \"%s\" (baseline %d iterations, new %g);"
				     " kernels and ranges per launch", mark, b->loop.mark_name,
				     b->loop.iterations, new_iterations);
	else if (b->version == 1)
		r->basis = prof_strfmt("totals per capture, for every key: the baseline has format 1,"
				     " which holds totals only; save it again with this perfkit to"
				     " compare per iteration and per launch");
	else if (b->loop.mark == SUM_LOOP_NONE)
		r->basis = prof_strfmt("totals per capture, kernels and ranges per launch: the"
				     " baseline's captures have no loop marked alike to count"
				     " iterations by");
	else
		r->basis = prof_strfmt("totals per capture, kernels and ranges per launch: %s has no"
				     " loop marked by %s \"%s\" as the baseline's captures have",
				     p[odd].path, mark, b->loop.mark_name);
	if (r->basis && b->ranks > 1) {
		/* short: the summary's line fits 200 columns */
		char *job = prof_strfmt("%s; %d ranks, each by its own loop", r->basis, b->ranks);

		free(r->basis);
		r->basis = job;
	}
	return r->basis ? 0 : PROF_E_NOMEM;
}

/* A baseline key measured in each new capture. */
static int measure_key(struct gate_result *r, struct gate_case *c, const struct baseline_key *key,
		       const struct baseline *b, const struct baseline_values *vals, size_t n,
		       double *samples, double new_iterations, const struct gate_options *o)
{
	const struct baseline_stats *st = &key->st;
	double base_growth = 0, new_growth;

	c->key = strdup(key->name);
	c->name = display_name(key->name, o, r->names);
	if (!c->key || !c->name)
		return PROF_E_NOMEM;
	c->unit = key->unit;
	c->in_base = true;
	if (key->per == BASELINE_PER_LAUNCH)
		c->per = GATE_PER_LAUNCH;
	else if (r->per_iteration && key->has_per_iteration)
		c->per = GATE_PER_ITERATION;
	else
		c->per = GATE_PER_CAPTURE;
	if (c->per == GATE_PER_ITERATION)
		st = &key->per_iteration;
	c->base = st->median;
	for (size_t i = 0; i < n; i++) {
		const struct baseline_value *v = baseline_values__find(&vals[i], key->name);

		c->in_new |= v != NULL;
		if (c->per == GATE_PER_LAUNCH)
			samples[i] = v ? v->value : NAN;
		else if (c->per == GATE_PER_ITERATION)
			samples[i] = v ? fmax(v->per_iteration, 0) : 0;
		else
			samples[i] = v ? v->total : 0;
	}
	c->new = median_of(samples, n);
	/* What the key added to the run's time: per iteration where the run
	 * keys are compared so, else its per-launch change over its launches
	 * (a format-1 baseline's kernel keys are totals already). */
	if (r->per_iteration && key->has_per_iteration) {
		base_growth = key->per_iteration.median;
		for (size_t i = 0; i < n; i++) {
			const struct baseline_value *v = baseline_values__find(&vals[i], key->name);

			samples[i] = v ? fmax(v->per_iteration, 0) : 0;
		}
		new_growth = median_of(samples, n);
	} else {
		base_growth = c->base;
		new_growth = c->new;
	}
	c->growth = (new_growth - base_growth) * (c->per == GATE_PER_LAUNCH && !r->per_iteration ?
						     fmax(key->launches, 1) : 1);
	return decide(r, c, key, b, st, new_iterations, o);
}

/* A key only the new captures have: reported, never failed on its own. */
static int measure_added(struct gate_result *r, struct gate_case *c, const struct baseline_value *v,
			 const struct baseline_values *vals, size_t n, double *samples,
			 const struct gate_options *o)
{
	char vn[32];

	c->key = strdup(v->name);
	c->name = display_name(v->name, o, r->names);
	if (!c->key || !c->name)
		return PROF_E_NOMEM;
	c->unit = v->unit;
	c->in_new = true;
	c->verdict = GATE_ADDED;
	c->per = v->per == BASELINE_PER_LAUNCH ? GATE_PER_LAUNCH :
		 r->per_iteration		   ? GATE_PER_ITERATION : GATE_PER_CAPTURE;
	for (size_t q = 0; q < n; q++) {
		const struct baseline_value *w = baseline_values__find(&vals[q], v->name);

		samples[q] = !w ? (c->per == GATE_PER_LAUNCH ? NAN : 0) :
			     c->per == GATE_PER_LAUNCH	     ? w->value :
			     c->per == GATE_PER_ITERATION    ? fmax(w->per_iteration, 0) : w->total;
	}
	c->new = median_of(samples, n);
	c->allowed = c->new;
	/* All of its time is growth. */
	for (size_t q = 0; q < n; q++) {
		const struct baseline_value *w = baseline_values__find(&vals[q], v->name);

		samples[q] = !w ? 0 : r->per_iteration ? fmax(w->per_iteration, 0) : w->total;
	}
	c->growth = median_of(samples, n);
	format_value(vn, sizeof vn, c->unit, c->new);
	c->message = prof_strfmt("%s: not in the baseline (now %s%s)", c->name, vn, per_words(c->per));
	return c->message ? 0 : PROF_E_NOMEM;
}

int gate__run(struct gate_result *r, const struct baseline *b, const struct diff_profile *p,
	      size_t n, const struct gate_options *o, struct prof_error *err)
{
	struct baseline_values *vals = NULL;
	double *samples = NULL, new_iterations;
	size_t cap;
	int rc = 0;

	memset(r, 0, sizeof *r);
	if (n == 0)
		return prof_error__set(err, PROF_E_USAGE, "the gate needs at least one capture");
	for (size_t i = 0; i < n; i++) {
		rc = identity_check(b, &p[i], o, err);
		if (rc < 0)
			return rc;
	}
	vals = calloc(n, sizeof *vals);
	samples = calloc(n, sizeof *samples);
	r->program = strdup(b->program);
	r->gpu = strdup(b->gpu);
	r->ncaptures = n;
	for (size_t i = 0; i < n; i++)
		r->rows_left_out = prof_add_saturated(r->rows_left_out, p[i].rows_left_out);
	cap = b->nkeys;
	for (size_t i = 0; vals && i < n; i++) {
		rc = baseline_values__init(&vals[i], &p[i], err);
		if (rc < 0)
			goto out;
		cap += vals[i].n;
	}
	r->cases = calloc(cap + 1, sizeof *r->cases);
	r->names = rpt_symbols__new();
	if (!vals || !samples || !r->program || !r->gpu || !r->cases || !r->names)
		goto out_nomem;
	/* every kernel's name known before the first is shown */
	for (size_t k = 0; k < b->nkeys; k++)
		if (kernel_name_at(b->keys[k].name) &&
		    rpt_symbols__add(r->names, b->keys[k].name + kernel_name_at(b->keys[k].name)))
			goto out_nomem;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < vals[i].n; j++)
			if (kernel_name_at(vals[i].v[j].name) &&
			    rpt_symbols__add(r->names, vals[i].v[j].name + kernel_name_at(vals[i].v[j].name)))
				goto out_nomem;
	for (size_t i = 0; i < n; i++)
		samples[i] = p[i].loop.iterations;
	new_iterations = median_of(samples, n);
	if (choose_basis(r, b, p, n, new_iterations) < 0)
		goto out_nomem;
	/* Every baseline key, measured in each new capture. */
	for (size_t k = 0; k < b->nkeys; k++)
		if (measure_key(r, &r->cases[r->ncases++], &b->keys[k], b, vals, n, samples,
				new_iterations, o) < 0)
			goto out_nomem;
	/* Keys the baseline does not know. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < vals[i].n; j++) {
			const struct baseline_value *v = &vals[i].v[j];
			bool seen = baseline__find(b, v->name) != NULL;

			for (size_t q = 0; q < i && !seen; q++)
				seen = baseline_values__find(&vals[q], v->name) != NULL;
			if (!seen && measure_added(r, &r->cases[r->ncases++], v, vals, n, samples, o) < 0)
				goto out_nomem;
		}
	}
	if (explain_totals(r) < 0)
		goto out_nomem;
	qsort(r->cases, r->ncases, sizeof *r->cases, case_order);
	for (size_t i = 0; i < r->ncases; i++)
		r->nfailed += r->cases[i].verdict == GATE_FAIL;
	goto out;
out_nomem:
	rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
out:
	for (size_t i = 0; vals && i < n; i++)
		baseline_values__exit(&vals[i]);
	free(vals);
	free(samples);
	rpt_symbols__delete(r->names);
	r->names = NULL;
	if (rc < 0)
		gate__exit(r);
	return rc;
}

void gate__exit(struct gate_result *r)
{
	for (size_t i = 0; i < r->ncases; i++) {
		free(r->cases[i].key);
		free(r->cases[i].name);
		free(r->cases[i].message);
	}
	free(r->cases);
	free(r->program);
	free(r->gpu);
	free(r->basis);
	memset(r, 0, sizeof *r);
}

/* ---- outputs ----------------------------------------------------------- */

int gate__report(const struct gate_result *r, struct rpt_sink *sink, bool with_message)
{
	static const struct rpt_column cols[] = {
		{ "Result", RPT_TEXT, 0 }, { "Change (%)", RPT_REAL, 1 }, { "Base", RPT_REAL, 1 },
		{ "New", RPT_REAL, 1 }, { "Allowed", RPT_REAL, 1 }, { "Budget", RPT_REAL, 1 },
		{ "Noise", RPT_REAL, 1 }, { "Floor Lift", RPT_REAL, 1 }, { "Unit", RPT_TEXT, 0 },
		{ "Per", RPT_TEXT, 0 }, { "Key", RPT_TEXT, 0 }, { "Message", RPT_TEXT, 0 },
	};
	static const struct rpt_column sum_cols[] = {
		{ "Result", RPT_TEXT, 0 }, { "Failed", RPT_INT, 0 }, { "Keys", RPT_INT, 0 },
		{ "Captures", RPT_INT, 0 }, { "Program", RPT_TEXT, 0 }, { "GPU", RPT_TEXT, 0 },
		{ "Basis", RPT_TEXT, 0 },
	};
	/* Allowed = Base + Budget + Noise + Floor Lift */
	int rc = sink->begin(sink, "gate", "Gate: each key against the baseline", cols,
			     with_message ? 12 : 11);

	for (size_t i = 0; rc == 0 && i < r->ncases; i++) {
		const struct gate_case *c = &r->cases[i];
		struct rpt_cell cells[12] = {
			{ .s = gate_verdict__name(c->verdict) },
			{ .is_null = !c->in_base || !c->in_new || c->base == 0,
			  .d = c->base ? 100.0 * (c->new - c->base) / c->base : 0 },
			{ .is_null = !c->in_base, .d = c->base },
			{ .is_null = !c->in_new, .d = c->new },
			{ .is_null = !c->in_base, .d = c->allowed },
			{ .is_null = !c->in_base, .d = c->budget_amount },
			{ .is_null = !c->in_base, .d = c->noise },
			{ .is_null = !c->in_base, .d = c->floor_lift },
			{ .s = baseline_unit__name(c->unit) },
			{ .s = gate_per__name(c->per) },
			/* JSON: the whole key; text: as it reads in a log */
			{ .s = with_message ? c->key : c->name },
			{ .s = c->message },
		};
		rc = sink->row(sink, cells);
	}
	if (rc == 0)
		rc = sink->end(sink);
	if (rc == 0)
		rc = sink->begin(sink, "gate_summary", "Gate result", sum_cols, 7);
	if (rc == 0)
		rc = diff_left_out__note(sink, r->rows_left_out);
	if (rc == 0) {
		struct rpt_cell cells[7] = {
			{ .s = r->nfailed ? "FAIL" : "pass" }, { .i = (int64_t)r->nfailed },
			{ .i = (int64_t)r->ncases }, { .i = (int64_t)r->ncaptures },
			{ .s = r->program }, { .s = r->gpu }, { .s = r->basis },
		};
		rc = sink->row(sink, cells);
	}
	return rc ? rc : sink->end(sink);
}

/* The testcase's class groups keys by kind: perfkit.gate.kernel, ...; a
 * job's by rank and kind: perfkit.gate.rank1.kernel. */
static void junit_class(FILE *f, const char *key)
{
	size_t rank = rank_prefix_len(key);
	const char *colon;

	fputs("perfkit.gate.", f);
	if (rank)
		fprintf(f, "%.*s.", (int)rank - 1, key);
	key += rank;
	colon = strchr(key, ':');
	if (!colon)
		fputs("total", f);
	else
		fprintf(f, "%.*s", (int)(colon - key), key);
}

int gate__write_junit(const struct gate_result *r, FILE *f)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<testsuites name=\"perfkit gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n",
		r->ncases, r->nfailed);
	fputs("  <testsuite name=\"perfkit gate: ", f);
	prof_fputs_html(f, r->program[0] ? r->program : "(unnamed program)");
	fputs(" on ", f);
	prof_fputs_html(f, r->gpu[0] ? r->gpu : "(unnamed GPU)");
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"0\">\n",
		r->ncases, r->nfailed);
	for (size_t i = 0; i < r->ncases; i++) {
		const struct gate_case *c = &r->cases[i];

		fputs("    <testcase classname=\"", f);
		junit_class(f, c->key);
		fputs("\" name=\"", f);
		prof_fputs_html(f, c->name);
		fputs("\" time=\"0\"", f);
		if (c->verdict == GATE_FAIL) {
			/* the message on a line of its own: a log's lines stay short */
			fputs(">\n      <failure type=\"regression\" message=\"", f);
			prof_fputs_html(f, c->name);
			fputs(" regressed\">\n", f);
			prof_fputs_html(f, c->message);
			fputs("\n      </failure>\n    </testcase>\n", f);
		} else if (c->verdict != GATE_PASS || c->message) {
			fputs(">\n      <system-out>\n", f);
			prof_fputs_html(f, c->message);
			fputs("\n      </system-out>\n    </testcase>\n", f);
		} else {
			fputs("/>\n", f);
		}
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return ferror(f) ? PROF_E_IO : 0;
}
