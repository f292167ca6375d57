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
		       const char *name, enum baseline_unit unit, int64_t value)
{
	char *key;

	if (vals->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct baseline_value *v = realloc(vals->v, ncap * sizeof *v);

		if (!v)
			return PROF_E_NOMEM;
		vals->v = v;
		*cap = ncap;
	}
	key = baseline__canonical_name(prefix, name);
	if (!key)
		return PROF_E_NOMEM;
	vals->v[vals->n++] = (struct baseline_value){ .name = key, .unit = unit, .value = value };
	return 0;
}

static int value_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_value *)a)->name, ((const struct baseline_value *)b)->name);
}

/* Entries sharing a name (a kernel launched with several shapes, a copy
 * direction with pageable and pinned host memory) fold into one key. */
static void values__fold(struct baseline_values *vals)
{
	size_t o = 0;

	qsort(vals->v, vals->n, sizeof *vals->v, value_cmp);
	for (size_t i = 0; i < vals->n; i++) {
		if (o > 0 && strcmp(vals->v[o - 1].name, vals->v[i].name) == 0) {
			vals->v[o - 1].value += vals->v[i].value;
			free(vals->v[i].name);
			continue;
		}
		vals->v[o++] = vals->v[i];
	}
	vals->n = o;
}

int baseline_values__init(struct baseline_values *vals, const struct diff_profile *p,
			  struct prof_error *err)
{
	const struct diff_section *k = &p->sec[DIFF_KERNELS], *c = &p->sec[DIFF_COPIES];
	const struct diff_section *r = &p->sec[DIFF_RANGES];
	size_t cap = 0;
	int rc;

	memset(vals, 0, sizeof *vals);
	rc = values__add(vals, &cap, "", "gpu_time", BASELINE_NS, p->gpu_time_ns);
	if (rc == 0)
		rc = values__add(vals, &cap, "", "wall_time", BASELINE_NS, p->wall_ns);
	if (rc == 0)
		rc = values__add(vals, &cap, "", "kernel_count", BASELINE_COUNT, p->kernel_count);
	if (rc == 0)
		rc = values__add(vals, &cap, "", "alloc_count", BASELINE_COUNT, p->alloc_count);
	for (size_t i = 0; rc == 0 && i < k->n; i++)
		rc = values__add(vals, &cap, "kernel:", k->v[i].name, BASELINE_NS, k->v[i].total_ns);
	for (size_t i = 0; rc == 0 && i < c->n; i++)
		if (c->v[i].copy_kind >= 0)
			rc = values__add(vals, &cap, "copy_bytes:",
					 diff_copy_kind__name(c->v[i].copy_kind), BASELINE_BYTES,
					 c->v[i].bytes);
	for (size_t i = 0; rc == 0 && i < r->n; i++)
		rc = values__add(vals, &cap, "nvtx:", r->v[i].name, BASELINE_NS, r->v[i].total_ns);
	if (rc < 0) {
		baseline_values__exit(vals);
		return prof_error__set(err, rc, "out of memory");
	}
	values__fold(vals);
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

static int int64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t median_sorted(const int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	if (n % 2)
		return v[n / 2];
	return v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
}

void baseline_stats__compute(struct baseline_stats *st, int64_t *samples, size_t n)
{
	int64_t *dev;

	memset(st, 0, sizeof *st);
	if (n == 0)
		return;
	qsort(samples, n, sizeof *samples, int64_cmp);
	st->min = samples[0];
	st->max = samples[n - 1];
	st->median = median_sorted(samples, n);
	dev = malloc(n * sizeof *dev);
	if (!dev) {
		/* Without memory for the deviations, the range is the safe spread. */
		st->mad = st->max - st->min;
		return;
	}
	for (size_t i = 0; i < n; i++)
		dev[i] = samples[i] > st->median ? samples[i] - st->median : st->median - samples[i];
	qsort(dev, n, sizeof *dev, int64_cmp);
	st->mad = median_sorted(dev, n);
	free(dev);
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

int baseline__build(struct baseline *b, const struct diff_profile *p, size_t n,
		    struct prof_error *err)
{
	struct baseline_values *vals = NULL;
	int64_t *scratch = NULL; /* samples in capture order stay; stats sort a copy */
	size_t *pos = NULL;
	int rc = 0;

	memset(b, 0, sizeof *b);
	if (n == 0)
		return prof_error__set(err, PROF_E_USAGE, "a baseline needs at least one capture");
	for (size_t i = 1; i < n; i++) {
		if (strcmp(p[i].program, p[0].program) != 0)
			return identity_mismatch(err, &p[0], &p[i], "program", p[0].program,
						 p[i].program);
		if (strcmp(p[i].gpu, p[0].gpu) != 0)
			return identity_mismatch(err, &p[0], &p[i], "GPU", p[0].gpu, p[i].gpu);
	}
	vals = calloc(n, sizeof *vals);
	pos = calloc(n, sizeof *pos);
	scratch = calloc(n, sizeof *scratch);
	/* As the file will hold them, so a saved baseline is the one built. */
	b->program = baseline__canonical_name("", p[0].program);
	b->gpu = baseline__canonical_name("", p[0].gpu);
	b->captures = calloc(n, sizeof *b->captures);
	if (!vals || !pos || !scratch || !b->program || !b->gpu || !b->captures)
		goto out_nomem;
	b->ncaptures = n;
	for (size_t i = 0; i < n; i++) {
		b->captures[i] = strdup(p[i].path);
		if (!b->captures[i])
			goto out_nomem;
		rc = baseline_values__init(&vals[i], &p[i], err);
		if (rc < 0)
			goto out;
	}
	/* Merge the n sorted key lists; a key missing from a capture counts 0. */
	for (;;) {
		const struct baseline_value *next = NULL;
		struct baseline_key *key, *keys;

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
		key = &b->keys[b->nkeys];
		memset(key, 0, sizeof *key);
		key->budget_pct = -1;
		key->unit = next->unit;
		key->name = strdup(next->name);
		key->samples = calloc(n, sizeof *key->samples);
		key->nsamples = n;
		b->nkeys++;
		if (!key->name || !key->samples)
			goto out_nomem;
		for (size_t i = 0; i < n; i++)
			if (pos[i] < vals[i].n && strcmp(vals[i].v[pos[i]].name, key->name) == 0)
				key->samples[i] = vals[i].v[pos[i]++].value;
		memcpy(scratch, key->samples, n * sizeof *scratch);
		baseline_stats__compute(&key->st, scratch, n);
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

int baseline__save(const struct baseline *b, const char *path, struct prof_error *err)
{
	FILE *f = fopen(path, "w");
	int failed;

	if (!f)
		return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"perfkit_baseline\": %d,\n  \"program\": ", BASELINE_FORMAT_VERSION);
	prof_fputs_json(f, b->program);
	fputs(",\n  \"gpu\": ", f);
	prof_fputs_json(f, b->gpu);
	fputs(",\n  \"captures\": [", f);
	for (size_t i = 0; i < b->ncaptures; i++) {
		fputs(i ? ", " : "", f);
		prof_fputs_json(f, b->captures[i]);
	}
	fputs("],\n  \"keys\": {", f);
	for (size_t i = 0; i < b->nkeys; i++) {
		const struct baseline_key *k = &b->keys[i];

		fputs(i ? ",\n    " : "\n    ", f);
		prof_fputs_json(f, k->name);
		fprintf(f, ": {\"unit\": \"%s\", \"median\": %" PRId64 ", \"min\": %" PRId64
			   ", \"max\": %" PRId64 ", \"mad\": %" PRId64,
			baseline_unit__name(k->unit), k->st.median, k->st.min, k->st.max, k->st.mad);
		if (k->budget_pct >= 0)
			fprintf(f, ", \"max_regression\": \"%g%%\"", k->budget_pct);
		fputs(", \"samples\": [", f);
		for (size_t s = 0; s < k->nsamples; s++)
			fprintf(f, "%s%" PRId64, s ? ", " : "", k->samples[s]);
		fputs("]}", f);
	}
	fputs("\n  }\n}\n", f);
	failed = ferror(f);
	/* Close whatever happened: a full disk often shows only at fclose. */
	if (fclose(f) != 0 || failed)
		return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", path, strerror(errno));
	return 0;
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

/* A non-negative integer number of ns/bytes/launches. */
static bool get_count(const cJSON *obj, const char *field, int64_t *v)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, field);
	double d;

	if (!cJSON_IsNumber(j))
		return false;
	d = j->valuedouble;
	if (!isfinite(d) || d < 0 || d > 9.0e18 || d != floor(d))
		return false;
	*v = (int64_t)d;
	return true;
}

static int bad(struct prof_error *err, const char *path, const char *what, const char *key)
{
	if (key)
		return prof_error__set(err, PROF_E_USAGE, "baseline %s: key '%s': %s", path, key, what);
	return prof_error__set(err, PROF_E_USAGE, "baseline %s: %s", path, what);
}

static int load_key(struct baseline_key *k, const cJSON *j, size_t ncaptures, const char *path,
		    struct prof_error *err)
{
	const cJSON *unit = cJSON_GetObjectItemCaseSensitive(j, "unit");
	const cJSON *budget = cJSON_GetObjectItemCaseSensitive(j, "max_regression");
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(j, "samples");
	const cJSON *s;
	int u;

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
	if (!get_count(j, "median", &k->st.median) || !get_count(j, "min", &k->st.min) ||
	    !get_count(j, "max", &k->st.max) || !get_count(j, "mad", &k->st.mad))
		return bad(err, path, "\"median\", \"min\", \"max\" and \"mad\" must be non-negative integers",
			   j->string);
	if (k->st.min > k->st.median || k->st.median > k->st.max)
		return bad(err, path, "needs min <= median <= max", j->string);
	if (budget) {
		if (cJSON_IsNumber(budget) && isfinite(budget->valuedouble) && budget->valuedouble >= 0)
			k->budget_pct = budget->valuedouble;
		else if (!cJSON_IsString(budget) ||
			 baseline__parse_percent(budget->valuestring, &k->budget_pct) < 0)
			return bad(err, path, "\"max_regression\" must be a percentage such as \"10%\"",
				   j->string);
	}
	if (!samples)
		return 0;
	if (!cJSON_IsArray(samples) || (size_t)cJSON_GetArraySize(samples) != ncaptures)
		return bad(err, path, "\"samples\" must hold one number per capture", j->string);
	k->samples = calloc(ncaptures ? ncaptures : 1, sizeof *k->samples);
	if (!k->samples)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	cJSON_ArrayForEach(s, samples) {
		double d = cJSON_IsNumber(s) ? s->valuedouble : -1;

		if (!isfinite(d) || d < 0 || d > 9.0e18 || d != floor(d))
			return bad(err, path, "\"samples\" must be non-negative integers", j->string);
		k->samples[k->nsamples++] = (int64_t)d;
	}
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
	const cJSON *version, *program, *gpu, *captures, *keys, *j;
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
	if (version->valuedouble != BASELINE_FORMAT_VERSION) {
		rc = prof_error__set(err, PROF_E_USAGE,
				     "baseline %s has format version %g; this perfkit reads version %d",
				     path, version->valuedouble, BASELINE_FORMAT_VERSION);
		goto out;
	}
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
	b->path = strdup(path);
	b->program = strdup(program->valuestring);
	b->gpu = strdup(gpu->valuestring);
	b->captures = calloc((size_t)cJSON_GetArraySize(captures), sizeof *b->captures);
	b->keys = calloc((size_t)cJSON_GetArraySize(keys) + 1, sizeof *b->keys);
	if (!b->path || !b->program || !b->gpu || !b->captures || !b->keys) {
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
	cJSON_ArrayForEach(j, keys) {
		rc = load_key(&b->keys[b->nkeys++], j, b->ncaptures, path, err);
		if (rc < 0)
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
	}
	for (size_t i = 0; i < b->ncaptures; i++)
		free(b->captures[i]);
	free(b->keys);
	free(b->captures);
	free(b->path);
	free(b->program);
	free(b->gpu);
	memset(b, 0, sizeof *b);
}

const struct baseline_key *baseline__find(const struct baseline *b, const char *name)
{
	struct baseline_key key = { .name = (char *)name };

	return bsearch(&key, b->keys, b->nkeys, sizeof *b->keys, key_cmp);
}
