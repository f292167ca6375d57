/* baseline.c - the keys of a capture, their statistics over repeated
 * captures, and the baseline JSON file (see baseline.h).
 *
 * The file is written with the JSON escaper every perfkit output uses and
 * read back with cJSON, validating every field: a baseline that is not what
 * this code wrote (or a user's edit of it) is refused with the reason, never
 * half-used. */
#include "baseline.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/file.h"
#include "prof/output.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/saturate.h"

const char *baseline_unit__name(enum baseline_unit u)
{
	switch (u) {
	case BASELINE_NS:
		return "ns";
	case BASELINE_BYTES:
		return "bytes";
	case BASELINE_COUNT:
		return "count";
	}
	return "?";
}

const char *baseline_per__name(enum baseline_per p)
{
	return p == BASELINE_PER_LAUNCH ? "launch" : "run";
}

static int baseline_unit__parse(const char *s)
{
	for (int u = BASELINE_NS; u <= BASELINE_COUNT; u++)
		if (strcmp(s, baseline_unit__name(u)) == 0)
			return u;
	return -1;
}

/* ---- the keys of one capture ------------------------------------------ */

/* The name a key gets back from a baseline file: capture names pass through
 * the JSON escaper (invalid UTF-8 becomes U+FFFD) and cJSON. Doing the same
 * round trip here makes a capture's keys match the file's byte for byte. */
char *baseline__canonical_name(const char *prefix, const char *name)
{
	char *buf = NULL, *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cJSON *j;

	if (!f)
		return NULL;
	prof_fputs_json(f, name);
	fclose(f);
	if (!buf)
		return NULL;
	j = cJSON_Parse(buf);
	if (cJSON_IsString(j)) {
		out = malloc(strlen(prefix) + strlen(j->valuestring) + 1);
		if (out)
			sprintf(out, "%s%s", prefix, j->valuestring);
	}
	cJSON_Delete(j);
	free(buf);
	return out;
}

static int values__add(struct baseline_values *vals, size_t *cap, const char *prefix,
		       const char *name, struct baseline_value v)
{
	if (vals->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct baseline_value *nv = realloc(vals->v, ncap * sizeof *nv);

		if (!nv)
			return PROF_E_NOMEM;
		vals->v = nv;
		*cap = ncap;
	}
	v.name = baseline__canonical_name(prefix, name);
	if (!v.name)
		return PROF_E_NOMEM;
	vals->v[vals->n++] = v;
	return 0;
}

static int value_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_value *)a)->name, ((const struct baseline_value *)b)->name);
}

/* b folded into a: a kernel launched with several shapes, a copy direction
 * with pageable and pinned host memory. Totals add up; a median launch
 * becomes the shapes' medians weighted by their launches. */
static void value__fold(struct baseline_value *a, const struct baseline_value *b)
{
	if (a->per == BASELINE_PER_LAUNCH && a->launches + b->launches > 0)
		a->value = (a->value * (double)a->launches + b->value * (double)b->launches) /
			   (double)(a->launches + b->launches);
	else if (a->per == BASELINE_PER_RUN)
		a->value += b->value;
	a->total += b->total;
	if (a->per_iteration >= 0 && b->per_iteration >= 0)
		a->per_iteration += b->per_iteration;
	if (b->largest_launch > a->largest_launch)
		a->largest_launch = b->largest_launch;
	a->launches += b->launches;
}

/* v within what a baseline file may hold. Sums of a capture's values are
 * held at INT64_MAX (prof_add_saturated), past BASELINE_MAX_NUMBER, and a
 * damaged capture's loop window can end before it starts: such a value is
 * held at the nearer end, so that a baseline perfkit saves always loads
 * back, and the gate, which reads the capture it checks through the same
 * code, compares like with like. */
static double loadable(double v)
{
	return v < 0 ? 0 : v > BASELINE_MAX_NUMBER ? BASELINE_MAX_NUMBER : v;
}

static void value__make_loadable(struct baseline_value *v)
{
	v->value = loadable(v->value);
	v->total = loadable(v->total);
	if (v->per_iteration >= 0)
		v->per_iteration = loadable(v->per_iteration);
	v->largest_launch = loadable(v->largest_launch);
}

/* Entries sharing a name fold into one key. */
static void values__fold(struct baseline_values *vals)
{
	size_t o = 0;

	qsort(vals->v, vals->n, sizeof *vals->v, value_cmp);
	for (size_t i = 0; i < vals->n; i++) {
		if (o > 0 && strcmp(vals->v[o - 1].name, vals->v[i].name) == 0) {
			value__fold(&vals->v[o - 1], &vals->v[i]);
			free(vals->v[i].name);
			continue;
		}
		vals->v[o++] = vals->v[i];
	}
	vals->n = o;
}

/* A per-run key: the capture's total and what ran in its loop per iteration. */
static struct baseline_value per_run(enum baseline_unit unit, int64_t total, int64_t in_loop,
				     const struct diff_profile *p, double largest_launch)
{
	int iterations = p->loop.iterations;

	return (struct baseline_value){
		.unit = unit, .per = BASELINE_PER_RUN, .value = (double)total, .total = (double)total,
		.per_iteration = iterations > 0 ? (double)in_loop / iterations : -1,
		.largest_launch = largest_launch,
	};
}

/* A per-launch key: the median launch, its launches and time per iteration. */
static struct baseline_value per_launch(const struct diff_stat *st, const struct diff_profile *p)
{
	int iterations = p->loop.iterations;

	return (struct baseline_value){
		.unit = BASELINE_NS, .per = BASELINE_PER_LAUNCH, .value = (double)st->median_ns,
		.total = (double)st->total_ns,
		.per_iteration = iterations > 0 ? (double)st->loop_total_ns / iterations : -1,
		.launches = st->count,
	};
}

/* The longest median launch of the kernels and copies that ran in the loop:
 * what one launch more or less at a window's edge adds to its GPU time. */
static double longest_loop_launch(const struct diff_profile *p)
{
	double longest = 0;

	for (int sec = DIFF_KERNELS; sec <= DIFF_COPIES; sec++)
		for (size_t i = 0; i < p->sec[sec].n; i++)
			if (p->sec[sec].v[i].loop_count > 0 && p->sec[sec].v[i].median_ns > longest)
				longest = (double)p->sec[sec].v[i].median_ns;
	return longest;
}

/* The keys of one process (a whole capture, or one rank of a job), each
 * name after `rank` ("" or "rank1/"). */
static int values__add_process(struct baseline_values *vals, size_t *cap, const char *rank,
			       const struct diff_profile *p)
{
	const struct diff_section *k = &p->sec[DIFF_KERNELS], *c = &p->sec[DIFF_COPIES];
	const struct diff_section *r = &p->sec[DIFF_RANGES];
	const struct sum_window *w = &p->loop;
	char kernel[48], copy[48], nvtx[48];
	int rc;

	snprintf(kernel, sizeof kernel, "%skernel:", rank);
	snprintf(copy, sizeof copy, "%scopy_bytes:", rank);
	snprintf(nvtx, sizeof nvtx, "%snvtx:", rank);
	rc = values__add(vals, cap, rank, "gpu_time",
			 per_run(BASELINE_NS, p->gpu_time_ns, p->loop_gpu_time_ns, p, longest_loop_launch(p)));
	if (rc == 0)
		/* The loop's window runs on past its last step's host side to the
		 * end of the GPU work it launched: that tail is its edge. */
		rc = values__add(vals, cap, rank, "wall_time",
				 per_run(BASELINE_NS, p->wall_ns, w->span_ns, p,
					 (double)prof_span_saturated(w->host_end_ns, w->end_ns)));
	if (rc == 0)
		rc = values__add(vals, cap, rank, "kernel_count",
				 per_run(BASELINE_COUNT, p->kernel_count, p->loop_kernel_count, p, 1));
	if (rc == 0)
		rc = values__add(vals, cap, rank, "alloc_count",
				 per_run(BASELINE_COUNT, p->alloc_count, p->loop_alloc_count, p, 1));
	for (size_t i = 0; rc == 0 && i < k->n; i++)
		rc = values__add(vals, cap, kernel, k->v[i].name, per_launch(&k->v[i], p));
	for (size_t i = 0; rc == 0 && i < c->n; i++)
		if (c->v[i].copy_kind >= 0)
			rc = values__add(vals, cap, copy, diff_copy_kind__name(c->v[i].copy_kind),
					 per_run(BASELINE_BYTES, c->v[i].bytes, c->v[i].loop_bytes, p,
						 c->v[i].count ? (double)c->v[i].bytes / c->v[i].count : 0));
	for (size_t i = 0; rc == 0 && i < r->n; i++)
		rc = values__add(vals, cap, nvtx, r->v[i].name, per_launch(&r->v[i], p));
	return rc;
}

/* A job's step: its slowest rank's median step, what the job waits for;
 * a step of each iteration, so its value and its figure per iteration
 * are one. No key when no rank has steps. */
static int values__add_step(struct baseline_values *vals, size_t *cap, const struct diff_profile *job)
{
	int64_t slowest = -1;

	for (int i = 0; i < job->nranks; i++)
		if (job->ranks[i].nsteps > 0 && job->ranks[i].step_med_ns > slowest)
			slowest = job->ranks[i].step_med_ns;
	if (slowest < 0)
		return 0;
	return values__add(vals, cap, "", BASELINE_STEP_KEY, (struct baseline_value){
		.unit = BASELINE_NS, .per = BASELINE_PER_RUN, .value = (double)slowest,
		.total = (double)slowest, .per_iteration = (double)slowest,
	});
}

int baseline__job_size(const struct diff_profile *p)
{
	return p->nranks > 0 ? p->nranks : 1;
}

int baseline_values__init(struct baseline_values *vals, const struct diff_profile *p,
			  struct prof_error *err)
{
	size_t cap = 0;
	int rc = 0;

	memset(vals, 0, sizeof *vals);
	/* A job's ranks each on their own (their sum would count two ranks'
	 * work per step), and the job's step. */
	if (p->nranks == 0)
		rc = values__add_process(vals, &cap, "", p);
	for (int i = 0; rc == 0 && i < p->nranks; i++) {
		char rank[32];

		snprintf(rank, sizeof rank, "rank%d/", p->ranks[i].rank);
		rc = values__add_process(vals, &cap, rank, &p->ranks[i]);
	}
	if (rc == 0 && p->nranks > 0)
		rc = values__add_step(vals, &cap, p);
	if (rc < 0) {
		baseline_values__exit(vals);
		return prof_error__set(err, rc, "out of memory");
	}
	values__fold(vals);
	for (size_t i = 0; i < vals->n; i++)
		value__make_loadable(&vals->v[i]);
	return 0;
}

void baseline_values__exit(struct baseline_values *vals)
{
	for (size_t i = 0; i < vals->n; i++)
		free(vals->v[i].name);
	free(vals->v);
	memset(vals, 0, sizeof *vals);
}

const struct baseline_value *baseline_values__find(const struct baseline_values *vals, const char *name)
{
	struct baseline_value key = { .name = (char *)name };

	return bsearch(&key, vals->v, vals->n, sizeof *vals->v, value_cmp);
}

/* ---- statistics -------------------------------------------------------- */

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n)
{
	if (n == 0)
		return 0;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

size_t baseline_stats__compute(struct baseline_stats *st, double *samples, size_t n)
{
	double *dev;
	size_t m = 0;

	memset(st, 0, sizeof *st);
	for (size_t i = 0; i < n; i++)
		if (!isnan(samples[i]))
			samples[m++] = samples[i];
	if (m == 0)
		return 0;
	qsort(samples, m, sizeof *samples, double_cmp);
	st->min = samples[0];
	st->max = samples[m - 1];
	st->median = median_sorted(samples, m);
	dev = malloc(m * sizeof *dev);
	if (!dev) {
		/* Without memory for the deviations, the range is the safe spread. */
		st->mad = st->max - st->min;
		return m;
	}
	for (size_t i = 0; i < m; i++)
		dev[i] = fabs(samples[i] - st->median);
	qsort(dev, m, sizeof *dev, double_cmp);
	st->mad = median_sorted(dev, m);
	free(dev);
	return m;
}

/* ---- building ---------------------------------------------------------- */

static int identity_mismatch(struct prof_error *err, const struct diff_profile *a,
			     const struct diff_profile *b, const char *what, const char *va,
			     const char *vb)
{
	return prof_error__set(err, PROF_E_USAGE,
			       "captures of different %ss cannot form one baseline: %s has '%s', %s has '%s'",
			       what, a->path, va, b->path, vb);
}

/* Every capture has a loop, marked as the first capture's is. */
static bool common_loop(const struct diff_profile *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].loop.iterations <= 0 || !sum_window__same_mark(&p[i].loop, &p[0].loop))
			return false;
	return true;
}

static int build_loop(struct baseline *b, const struct diff_profile *p, size_t n)
{
	double *its;
	struct baseline_stats st;

	b->iterations = calloc(n, sizeof *b->iterations);
	its = calloc(n, sizeof *its);
	if (!b->iterations || !its) {
		free(its);
		return PROF_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		its[i] = b->iterations[i] = p[i].loop.iterations;
	baseline_stats__compute(&st, its, n);
	free(its);
	b->loop.mark = p[0].loop.mark;
	snprintf(b->loop.mark_name, sizeof b->loop.mark_name, "%s", p[0].loop.mark_name);
	b->loop.iterations = (int)st.median;
	return 0;
}

/* The samples of one key over the captures, from each capture's sorted
 * values at pos[i]; a per-run key a capture lacks counts 0 there, a
 * per-launch key has no sample. */
static int build_key(struct baseline_key *key, const struct baseline_value *first,
		     struct baseline_values *vals, size_t *pos, size_t n, bool per_iteration,
		     double *scratch)
{
	double *launches = scratch;

	memset(key, 0, sizeof *key);
	key->budget_pct = -1;
	key->unit = first->unit;
	key->per = first->per;
	key->name = strdup(first->name);
	key->samples = calloc(n, sizeof *key->samples);
	key->per_iteration_samples = calloc(n, sizeof *key->per_iteration_samples);
	key->nsamples = n;
	if (!key->name || !key->samples || !key->per_iteration_samples)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct baseline_value *v = NULL;

		if (pos[i] < vals[i].n && strcmp(vals[i].v[pos[i]].name, key->name) == 0)
			v = &vals[i].v[pos[i]++];
		key->samples[i] = v ? v->value : key->per == BASELINE_PER_RUN ? 0 : NAN;
		key->per_iteration_samples[i] = v && v->per_iteration > 0 ? v->per_iteration : 0;
		launches[i] = v ? (double)v->launches : NAN;
		if (v && v->largest_launch > key->largest_launch)
			key->largest_launch = v->largest_launch;
	}
	memcpy(scratch + n, key->samples, n * sizeof *scratch);
	baseline_stats__compute(&key->st, scratch + n, n);
	if (key->per == BASELINE_PER_LAUNCH) {
		struct baseline_stats st;

		baseline_stats__compute(&st, launches, n);
		key->launches = st.median;
	}
	key->has_per_iteration = per_iteration;
	if (per_iteration) {
		memcpy(scratch + n, key->per_iteration_samples, n * sizeof *scratch);
		baseline_stats__compute(&key->per_iteration, scratch + n, n);
	}
	return 0;
}

int baseline__build(struct baseline *b, const struct diff_profile *p, size_t n,
		    struct prof_error *err)
{
	struct baseline_values *vals = NULL;
	double *scratch = NULL; /* samples in capture order stay; stats sort a copy */
	size_t *pos = NULL;
	bool per_iteration;
	int rc = 0;

	memset(b, 0, sizeof *b);
	b->version = BASELINE_FORMAT_VERSION;
	if (n == 0)
		return prof_error__set(err, PROF_E_USAGE, "a baseline needs at least one capture");
	for (size_t i = 1; i < n; i++) {
		if (strcmp(p[i].program, p[0].program) != 0)
			return identity_mismatch(err, &p[0], &p[i], "program", p[0].program,
						 p[i].program);
		if (strcmp(p[i].gpu, p[0].gpu) != 0)
			return identity_mismatch(err, &p[0], &p[i], "GPU", p[0].gpu, p[i].gpu);
		if (baseline__job_size(&p[i]) != baseline__job_size(&p[0]))
			return prof_error__set(err, PROF_E_USAGE,
					       "captures of jobs of different sizes cannot form one baseline:"
					       " %s has %d rank%s, %s has %d", p[0].path,
					       baseline__job_size(&p[0]), baseline__job_size(&p[0]) == 1 ? "" : "s",
					       p[i].path, baseline__job_size(&p[i]));
	}
	b->ranks = baseline__job_size(&p[0]);
	vals = calloc(n, sizeof *vals);
	pos = calloc(n, sizeof *pos);
	scratch = calloc(2 * n, sizeof *scratch);
	/* As the file will hold them, so a saved baseline is the one built. */
	b->program = baseline__canonical_name("", p[0].program);
	b->launcher = baseline__canonical_name("", p[0].launcher ? p[0].launcher : "");
	b->gpu = baseline__canonical_name("", p[0].gpu);
	b->captures = calloc(n, sizeof *b->captures);
	if (!vals || !pos || !scratch || !b->program || !b->launcher || !b->gpu || !b->captures)
		goto out_nomem;
	b->ncaptures = n;
	per_iteration = common_loop(p, n);
	if (per_iteration && build_loop(b, p, n) < 0)
		goto out_nomem;
	for (size_t i = 0; i < n; i++) {
		b->captures[i] = strdup(p[i].path);
		if (!b->captures[i])
			goto out_nomem;
		rc = baseline_values__init(&vals[i], &p[i], err);
		if (rc < 0)
			goto out;
	}
	/* Merge the n sorted key lists. */
	for (;;) {
		const struct baseline_value *next = NULL;
		struct baseline_key *keys;

		for (size_t i = 0; i < n; i++)
			if (pos[i] < vals[i].n &&
			    (!next || strcmp(vals[i].v[pos[i]].name, next->name) < 0))
				next = &vals[i].v[pos[i]];
		if (!next)
			break;
		keys = realloc(b->keys, (b->nkeys + 1) * sizeof *keys);
		if (!keys)
			goto out_nomem;
		b->keys = keys;
		b->nkeys++;
		if (build_key(&b->keys[b->nkeys - 1], next, vals, pos, n, per_iteration, scratch) < 0)
			goto out_nomem;
	}
	goto out;
out_nomem:
	rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
out:
	for (size_t i = 0; vals && i < n; i++)
		baseline_values__exit(&vals[i]);
	free(vals);
	free(pos);
	free(scratch);
	if (rc < 0)
		baseline__exit(b);
	return rc;
}

/* ---- the file ---------------------------------------------------------- */

/* A number that reads back as the same double: integers as such, others in
 * the fewest digits that round-trip; an absent sample as null. */
static void put_number(FILE *f, double v)
{
	char buf[32];

	if (isnan(v)) {
		fputs("null", f);
		return;
	}
	if (v == floor(v) && fabs(v) < 9.0e15) {
		fprintf(f, "%.0f", v);
		return;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void put_stats(FILE *f, const struct baseline_stats *st, const double *samples, size_t n)
{
	fputs("\"median\": ", f);
	put_number(f, st->median);
	fputs(", \"min\": ", f);
	put_number(f, st->min);
	fputs(", \"max\": ", f);
	put_number(f, st->max);
	fputs(", \"mad\": ", f);
	put_number(f, st->mad);
	fputs(", \"samples\": [", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		put_number(f, samples[i]);
	}
	fputs("]", f);
}

static const char *mark_name(enum sum_loop_mark m)
{
	return m == SUM_LOOP_NVTX ? "nvtx" : m == SUM_LOOP_KERNEL ? "kernel" : "none";
}

static void put_key(FILE *f, const struct baseline_key *k)
{
	prof_fputs_json(f, k->name);
	fprintf(f, ": {\"unit\": \"%s\", \"per\": \"%s\", ", baseline_unit__name(k->unit),
		baseline_per__name(k->per));
	put_stats(f, &k->st, k->samples, k->nsamples);
	if (k->budget_pct >= 0)
		fprintf(f, ", \"max_regression\": \"%g%%\"", k->budget_pct);
	if (k->per == BASELINE_PER_LAUNCH) {
		fputs(", \"launches\": ", f);
		put_number(f, k->launches);
	} else {
		fputs(", \"largest_launch\": ", f);
		put_number(f, k->largest_launch);
	}
	if (k->has_per_iteration) {
		fputs(",\n      \"per_iteration\": {", f);
		put_stats(f, &k->per_iteration, k->per_iteration_samples,
			  k->per_iteration_samples ? k->nsamples : 0);
		fputs("}", f);
	}
	fputs("}", f);
}

static void put_baseline(FILE *f, const struct baseline *b)
{
	fprintf(f, "{\n  \"perfkit_baseline\": %d,\n  \"program\": ", BASELINE_FORMAT_VERSION);
	prof_fputs_json(f, b->program);
	fputs(",\n  \"launcher\": ", f);
	prof_fputs_json(f, b->launcher ? b->launcher : "");
	fputs(",\n  \"gpu\": ", f);
	prof_fputs_json(f, b->gpu);
	fprintf(f, ",\n  \"ranks\": %d", b->ranks);
	fputs(",\n  \"captures\": [", f);
	for (size_t i = 0; i < b->ncaptures; i++) {
		fputs(i ? ", " : "", f);
		prof_fputs_json(f, b->captures[i]);
	}
	fputs("],\n  \"loop\": ", f);
	if (b->loop.mark == SUM_LOOP_NONE) {
		fputs("null", f);
	} else {
		fprintf(f, "{\"marked_by\": \"%s\", \"name\": ", mark_name(b->loop.mark));
		prof_fputs_json(f, b->loop.mark_name);
		fputs(", \"iterations\": [", f);
		for (size_t i = 0; i < b->ncaptures; i++)
			fprintf(f, "%s%d", i ? ", " : "", b->iterations[i]);
		fputs("]}", f);
	}
	fputs(",\n  \"keys\": {", f);
	for (size_t i = 0; i < b->nkeys; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		put_key(f, &b->keys[i]);
	}
	fputs("\n  }\n}\n", f);
}

int baseline__save(const struct baseline *b, const char *path, unsigned flags,
		   struct prof_error *err)
{
	struct prof_output *out = NULL;
	int rc = prof_output__open(path, flags, NULL, &out, err);

	if (rc)
		return rc;
	put_baseline(prof_output__stream(out), b);
	/* a write that failed (a full disk) shows in the commit */
	rc = prof_output__commit(out, err);
	prof_output__delete(out);
	return rc;
}

int baseline__parse_percent(const char *s, double *pct)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end == '%')
		end++;
	if (*end)
		return -1;
	*pct = v;
	return 0;
}

/* The baseline file as text; binary data is not a baseline. */
static char *read_baseline(const char *path, struct prof_error *err)
{
	char *text;
	size_t len;
	int rc = prof_file__read(path, 0, &text, &len);

	if (rc == PROF_E_NOMEM) {
		prof_error__set(err, PROF_E_NOMEM, "out of memory");
		return NULL;
	}
	if (rc) {
		prof_error__set(err, PROF_E_IO, "cannot read baseline %s: %s", path, strerror(errno));
		return NULL;
	}
	if (strlen(text) != len) {
		prof_error__set(err, PROF_E_USAGE, "%s is not a perfkit baseline (binary data)", path);
		free(text);
		return NULL;
	}
	return text;
}

/* A non-negative number of ns/bytes/launches; format 1 held integers only. */
static bool valid_number(double d, bool integral, double *v)
{
	if (!isfinite(d) || d < 0 || d > BASELINE_MAX_NUMBER || (integral && d != floor(d)))
		return false;
	*v = d;
	return true;
}

static bool get_number(const cJSON *obj, const char *field, bool integral, double *v)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);

	return cJSON_IsNumber(j) && valid_number(j->valuedouble, integral, v);
}

static int bad(struct prof_error *err, const char *path, const char *what, const char *key)
{
	if (key)
		return prof_error__set(err, PROF_E_USAGE, "baseline %s: key '%s': %s", path, key, what);
	return prof_error__set(err, PROF_E_USAGE, "baseline %s: %s", path, what);
}

/* "median", "min", "max", "mad" and optionally "samples" (one per capture;
 * null, an absent sample, only where nulls_ok) of a key or of its
 * "per_iteration". */
static int load_stats(struct baseline_stats *st, double **samples, size_t *nsamples, const cJSON *j,
		      size_t ncaptures, int version, bool nulls_ok, const char *path, const char *key,
		      struct prof_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "samples");
	const char *what = version == 1 ? "non-negative integers" : "non-negative numbers";
	const cJSON *s;
	char msg[160];

	if (!get_number(j, "median", version == 1, &st->median) ||
	    !get_number(j, "min", version == 1, &st->min) || !get_number(j, "max", version == 1, &st->max) ||
	    !get_number(j, "mad", version == 1, &st->mad)) {
		snprintf(msg, sizeof msg, "\"median\", \"min\", \"max\" and \"mad\" must be %s", what);
		return bad(err, path, msg, key);
	}
	if (st->min > st->median || st->median > st->max)
		return bad(err, path, "needs min <= median <= max", key);
	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != ncaptures)
		return bad(err, path, "\"samples\" must hold one number per capture", key);
	*samples = calloc(ncaptures ? ncaptures : 1, sizeof **samples);
	if (!*samples)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	*nsamples = 0;
	cJSON_ArrayForEach(s, arr) {
		double d = NAN;

		if (!(nulls_ok && cJSON_IsNull(s)) &&
		    !(cJSON_IsNumber(s) && valid_number(s->valuedouble, version == 1, &d))) {
			snprintf(msg, sizeof msg, "\"samples\" must be %s%s", what,
				 nulls_ok ? " or null" : "");
			return bad(err, path, msg, key);
		}
		(*samples)[(*nsamples)++] = d;
	}
	return 0;
}

static int load_key(struct baseline_key *k, const cJSON *j, size_t ncaptures, int version,
		    const char *path, struct prof_error *err)
{
	const cJSON *unit = cJSON_GetObjectItemCaseSensitive(j, "unit");
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(j, "per");
	const cJSON *budget = cJSON_GetObjectItemCaseSensitive(j, "max_regression");
	const cJSON *per_iteration = cJSON_GetObjectItemCaseSensitive(j, "per_iteration");
	size_t nper_iteration = 0;
	int u, rc;

	k->budget_pct = -1;
	k->name = strdup(j->string);
	if (!k->name)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!cJSON_IsObject(j))
		return bad(err, path, "is not an object", j->string);
	u = cJSON_IsString(unit) ? baseline_unit__parse(unit->valuestring) : -1;
	if (u < 0)
		return bad(err, path, "\"unit\" must be \"ns\", \"bytes\" or \"count\"", j->string);
	k->unit = u;
	/* Format 1 held every key as the run's total. */
	k->per = BASELINE_PER_RUN;
	if (version > 1) {
		if (!cJSON_IsString(per) ||
		    (strcmp(per->valuestring, "run") != 0 && strcmp(per->valuestring, "launch") != 0))
			return bad(err, path, "\"per\" must be \"run\" or \"launch\"", j->string);
		k->per = strcmp(per->valuestring, "launch") == 0 ? BASELINE_PER_LAUNCH : BASELINE_PER_RUN;
	}
	rc = load_stats(&k->st, &k->samples, &k->nsamples, j, ncaptures, version,
			k->per == BASELINE_PER_LAUNCH, path, j->string, err);
	if (rc < 0)
		return rc;
	if (budget) {
		if (cJSON_IsNumber(budget) && isfinite(budget->valuedouble) && budget->valuedouble >= 0)
			k->budget_pct = budget->valuedouble;
		else if (!cJSON_IsString(budget) ||
			 baseline__parse_percent(budget->valuestring, &k->budget_pct) < 0)
			return bad(err, path, "\"max_regression\" must be a percentage such as \"10%\"",
				   j->string);
	}
	if (version == 1)
		return 0;
	if (cJSON_GetObjectItemCaseSensitive(j, "launches") &&
	    !get_number(j, "launches", false, &k->launches))
		return bad(err, path, "\"launches\" must be a non-negative number", j->string);
	if (cJSON_GetObjectItemCaseSensitive(j, "largest_launch") &&
	    !get_number(j, "largest_launch", false, &k->largest_launch))
		return bad(err, path, "\"largest_launch\" must be a non-negative number", j->string);
	if (!per_iteration || cJSON_IsNull(per_iteration))
		return 0;
	if (!cJSON_IsObject(per_iteration))
		return bad(err, path, "\"per_iteration\" must be an object", j->string);
	k->has_per_iteration = true;
	return load_stats(&k->per_iteration, &k->per_iteration_samples, &nper_iteration, per_iteration,
			  ncaptures, version, false, path, j->string, err);
}

/* "loop": null, or {"marked_by": "nvtx" | "kernel", "name": ..., "iterations":
 * [one positive count per capture]}. */
static int load_loop(struct baseline *b, const cJSON *loop, const char *path, struct prof_error *err)
{
	const cJSON *by = cJSON_GetObjectItemCaseSensitive(loop, "marked_by");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(loop, "name");
	const cJSON *its = cJSON_GetObjectItemCaseSensitive(loop, "iterations");
	const cJSON *j;
	double *samples;
	struct baseline_stats st;
	size_t n = 0;

	if (!loop || cJSON_IsNull(loop))
		return 0;
	if (!cJSON_IsObject(loop) || !cJSON_IsString(by) || !cJSON_IsString(name) ||
	    (strcmp(by->valuestring, "nvtx") != 0 && strcmp(by->valuestring, "kernel") != 0))
		return bad(err, path, "\"loop\" must say what marked it (\"marked_by\": \"nvtx\" or"
				      " \"kernel\") and its \"name\"", NULL);
	if (!cJSON_IsArray(its) || (size_t)cJSON_GetArraySize(its) != b->ncaptures)
		return bad(err, path, "\"loop\" must hold one number of \"iterations\" per capture", NULL);
	b->iterations = calloc(b->ncaptures, sizeof *b->iterations);
	samples = calloc(b->ncaptures, sizeof *samples);
	if (!b->iterations || !samples) {
		free(samples);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	cJSON_ArrayForEach(j, its) {
		if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1 && j->valuedouble <= INT32_MAX) ||
		    j->valuedouble != floor(j->valuedouble)) {
			free(samples);
			return bad(err, path, "\"loop\" \"iterations\" must be positive integers", NULL);
		}
		samples[n] = b->iterations[n] = (int)j->valuedouble;
		n++;
	}
	baseline_stats__compute(&st, samples, n);
	free(samples);
	b->loop.mark = strcmp(by->valuestring, "nvtx") == 0 ? SUM_LOOP_NVTX : SUM_LOOP_KERNEL;
	snprintf(b->loop.mark_name, sizeof b->loop.mark_name, "%s", name->valuestring);
	b->loop.iterations = (int)st.median;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_key *)a)->name, ((const struct baseline_key *)b)->name);
}

int baseline__load(struct baseline *b, const char *path, struct prof_error *err)
{
	char *text = read_baseline(path, err);
	const char *end = NULL;
	cJSON *root = NULL;
	const cJSON *version, *program, *launcher, *gpu, *ranks, *captures, *keys, *j;
	int rc = 0;

	memset(b, 0, sizeof *b);
	if (!text)
		return err->code;
	root = cJSON_ParseWithOpts(text, &end, 1);
	if (!root) {
		int line = 1;

		for (const char *c = text; end && c < end; c++)
			line += *c == '\n';
		rc = prof_error__set(err, PROF_E_USAGE, "baseline %s is not valid JSON (line %d)",
				     path, line);
		goto out;
	}
	version = cJSON_GetObjectItemCaseSensitive(root, "perfkit_baseline");
	if (!cJSON_IsObject(root) || !cJSON_IsNumber(version)) {
		rc = prof_error__set(err, PROF_E_USAGE,
				     "%s is not a perfkit baseline (no \"perfkit_baseline\" version)", path);
		goto out;
	}
	if (version->valuedouble != 1 && version->valuedouble != BASELINE_FORMAT_VERSION) {
		rc = prof_error__set(err, PROF_E_USAGE,
				     "baseline %s has format version %g; this perfkit reads versions 1 to %d",
				     path, version->valuedouble, BASELINE_FORMAT_VERSION);
		goto out;
	}
	b->version = (int)version->valuedouble;
	program = cJSON_GetObjectItemCaseSensitive(root, "program");
	gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
	captures = cJSON_GetObjectItemCaseSensitive(root, "captures");
	keys = cJSON_GetObjectItemCaseSensitive(root, "keys");
	if (!cJSON_IsString(program) || !cJSON_IsString(gpu)) {
		rc = bad(err, path, "\"program\" and \"gpu\" must be strings", NULL);
		goto out;
	}
	if (!cJSON_IsArray(captures) || cJSON_GetArraySize(captures) < 1) {
		rc = bad(err, path, "\"captures\" must list the captures it was made from", NULL);
		goto out;
	}
	if (!cJSON_IsObject(keys)) {
		rc = bad(err, path, "\"keys\" must be an object", NULL);
		goto out;
	}
	launcher = cJSON_GetObjectItemCaseSensitive(root, "launcher");
	if (launcher && !cJSON_IsString(launcher)) {
		rc = bad(err, path, "\"launcher\" must be a string", NULL);
		goto out;
	}
	/* absent in a file saved before jobs were keyed rank by rank: 0, unknown */
	ranks = cJSON_GetObjectItemCaseSensitive(root, "ranks");
	if (ranks && !(cJSON_IsNumber(ranks) && ranks->valuedouble >= 1 &&
		       ranks->valuedouble <= INT32_MAX && ranks->valuedouble == floor(ranks->valuedouble))) {
		rc = bad(err, path, "\"ranks\" must be a positive integer (the job's size)", NULL);
		goto out;
	}
	b->ranks = ranks ? (int)ranks->valuedouble : 0;
	b->path = strdup(path);
	b->program = strdup(program->valuestring);
	b->launcher = strdup(launcher ? launcher->valuestring : "");
	b->gpu = strdup(gpu->valuestring);
	b->captures = calloc((size_t)cJSON_GetArraySize(captures), sizeof *b->captures);
	b->keys = calloc((size_t)cJSON_GetArraySize(keys) + 1, sizeof *b->keys);
	if (!b->path || !b->program || !b->launcher || !b->gpu || !b->captures || !b->keys) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(j, captures) {
		if (!cJSON_IsString(j)) {
			rc = bad(err, path, "\"captures\" must hold file names", NULL);
			goto out;
		}
		b->captures[b->ncaptures] = strdup(j->valuestring);
		if (!b->captures[b->ncaptures++]) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
	}
	if (b->version > 1) {
		rc = load_loop(b, cJSON_GetObjectItemCaseSensitive(root, "loop"), path, err);
		if (rc < 0)
			goto out;
	}
	cJSON_ArrayForEach(j, keys) {
		rc = load_key(&b->keys[b->nkeys++], j, b->ncaptures, b->version, path, err);
		if (rc < 0)
			goto out;
	}
	/* every key of a capture would then be "added", nothing compared, and
	 * every gate passed */
	if (b->nkeys == 0) {
		rc = bad(err, path, "\"keys\" is empty: there is nothing to gate against", NULL);
		goto out;
	}
	qsort(b->keys, b->nkeys, sizeof *b->keys, key_cmp);
	for (size_t i = 1; i < b->nkeys; i++)
		if (strcmp(b->keys[i - 1].name, b->keys[i].name) == 0) {
			rc = bad(err, path, "appears twice", b->keys[i].name);
			goto out;
		}
out:
	cJSON_Delete(root);
	free(text);
	if (rc < 0)
		baseline__exit(b);
	return rc;
}

void baseline__exit(struct baseline *b)
{
	for (size_t i = 0; i < b->nkeys; i++) {
		free(b->keys[i].name);
		free(b->keys[i].samples);
		free(b->keys[i].per_iteration_samples);
	}
	free(b->iterations);
	for (size_t i = 0; i < b->ncaptures; i++)
		free(b->captures[i]);
	free(b->keys);
	free(b->captures);
	free(b->path);
	free(b->program);
	free(b->launcher);
	free(b->gpu);
	memset(b, 0, sizeof *b);
}

const struct baseline_key *baseline__find(const struct baseline *b, const char *name)
{
	struct baseline_key key = { .name = (char *)name };

	return bsearch(&key, b->keys, b->nkeys, sizeof *b->keys, key_cmp);
}

const struct sum_window *baseline__loop(const struct baseline *b)
{
	return b->loop.mark == SUM_LOOP_NONE ? NULL : &b->loop;
}
