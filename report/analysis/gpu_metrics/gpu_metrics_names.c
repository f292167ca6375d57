/* gpu_metrics_names.c - the sampled metrics averaged per sampler, per
 * kernel name and per NVTX range name (gpu_metrics.h): for each sampler,
 * the union of each name's instances on its device (kernels) or in its
 * process (ranges), then one pass over its samples feeding the three
 * sweeps of metric_overlap.h and the caller's own look at each period. */
#include "gpu_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "metric_overlap.h"
#include "prof/tables.h"
#include "model/sql.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define UNNAMED "[unnamed]"

/* The intervals of one subject's names against one sampler. */
struct name_set {
	struct mo_interval *iv;
	int n, cap;
	int first;       /* the table row of group 0 */
	int ngroups;
	struct mo_sweep sweep;
};

static void row_exit(struct gm_row *r)
{
	free(r->name);
	free(r->mean);
}

static void table_exit(struct gm_table *t)
{
	for (int i = 0; i < t->n; i++)
		row_exit(&t->rows[i]);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

void gm_summary__exit(struct gm_summary *sum)
{
	table_exit(&sum->devices);
	table_exit(&sum->kernels);
	table_exit(&sum->ranges);
}

static struct gm_row *new_row(struct gm_table *t, int sampler, const char *name, int nmetrics)
{
	struct gm_row *r;

	if (array__grow((void **)&t->rows, &t->cap, t->n + 1, sizeof *t->rows))
		return NULL;
	r = &t->rows[t->n];
	memset(r, 0, sizeof *r);
	r->sampler = sampler;
	r->mean = malloc(sizeof *r->mean * (size_t)(nmetrics > 0 ? nmetrics : 1));
	r->name = name ? strdup(name) : NULL;
	if (!r->mean || (name && !r->name)) {
		row_exit(r);
		return NULL;
	}
	for (int m = 0; m < nmetrics; m++)
		r->mean[m] = NAN;
	t->n++;
	return r;
}

/* The kernels of the sampler's device (and process, when known) starting
 * in the window, in name order; columns: name id, name, start, end, blocks. */
static char *kernel_sql(const struct gm_sampler *smp)
{
	char *sql = malloc(1024);

	if (!sql)
		return NULL;
	snprintf(sql, 1024,
		 "SELECT k.nid, s.value, k.start, k.end, k.blocks FROM (SELECT "
		 PROF_SQL_KERNEL_NAME_ID("") " AS nid, start, end,"
		 " coalesce(gridX, 1) * coalesce(gridY, 1) * coalesce(gridZ, 1) AS blocks"
		 " FROM " PROF_T_KERNEL " WHERE deviceId = ?3 AND start >= ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("") "%s) k"
		 " LEFT JOIN " PROF_T_STRINGS " s ON s.id = k.nid ORDER BY k.nid, k.start",
		 smp->pid_known ? " AND (globalPid IS NULL OR globalPid = 0 OR globalPid = ?4)" : "");
	return sql;
}

/* The push/pop and start/end ranges of the sampler's process (of every
 * process when it is unknown) starting in the window, in name order;
 * columns: name, name, start, end, 0. */
static char *range_sql(const struct gm_sampler *smp)
{
	char *sql = malloc(1024);

	if (!sql)
		return NULL;
	snprintf(sql, 1024,
		 "SELECT coalesce(s.value, n.text) AS name, coalesce(s.value, n.text), n.start, n.end, 0"
		 " FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId"
		 " WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND NOT " SUM_BAD_SPAN("n.")
		 " AND n.start >= ?1 AND n.start < ?2%s ORDER BY 1, n.start",
		 smp->pid_known ? " AND " PROF_SQL_PID_OF_TID("n.globalTid") " = "
				  PROF_SQL_PID_OF_TID("?4") : "");
	return sql;
}

static bool same_key(struct prof_cursor *c, bool by_id, int64_t id, const char *text)
{
	if (by_id)
		return !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) == id;
	if (prof_cursor__is_null(c, 0))
		return text == NULL;
	return text && !strcmp(prof_cursor__text(c, 0), text);
}

/* One subject's names against a sampler: rows in t (from set->first on) and
 * the union of each name's instances in set->iv, sorted by start. */
static int load_names(struct prof_store *s, char *sql, bool by_id, const struct gm_sampler *smp, int sampler,
		      const struct gm_options *o, int nmetrics, struct gm_table *t, struct name_set *set,
		      struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *key = NULL;
	int64_t key_id = 0;
	struct gm_row *row = NULL;
	int last = -1, rc;

	set->first = t->n;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, o->from_ns);
	prof_cursor__bind_int64(c, 2, o->to_ns);
	prof_cursor__bind_int64(c, 3, smp->device);
	prof_cursor__bind_int64(c, 4, smp->global_pid);
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t start = prof_cursor__int64(c, 2), end = prof_cursor__int64(c, 3);

		if (!row || !same_key(c, by_id, key_id, key)) {
			const char *name = prof_cursor__is_null(c, 1) ? UNNAMED : prof_cursor__text(c, 1);

			free(key);
			key = NULL;
			key_id = prof_cursor__is_null(c, 0) ? 0 : prof_cursor__int64(c, 0);
			if ((!by_id && !prof_cursor__is_null(c, 0) && !(key = strdup(prof_cursor__text(c, 0)))) ||
			    !(row = new_row(t, sampler, name, nmetrics))) {
				rc = PROF_E_NOMEM;
				break;
			}
			last = -1;
		}
		row->instances++;
		if (prof_cursor__int64(c, 4) > row->max_blocks)
			row->max_blocks = prof_cursor__int64(c, 4);
		if (mo_intervals__merge(&set->iv, &set->n, &set->cap, &last, start, end, t->n - 1 - set->first)) {
			rc = PROF_E_NOMEM;
			break;
		}
	}
	free(key);
	prof_cursor__close(c);
	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0)
		return rc;
	set->ngroups = t->n - set->first;
	for (int i = 0; i < set->n; i++) {
		struct gm_row *r = &t->rows[set->first + set->iv[i].group];

		r->time_ns = prof_add_saturated(r->time_ns, prof_span_saturated(set->iv[i].start_ns, set->iv[i].end_ns));
	}
	mo_intervals__sort(set->iv, set->n);
	return 0;
}

/* A sweep's results into its rows. */
static void fill_rows(struct gm_table *t, const struct name_set *set, int nmetrics)
{
	for (int g = 0; g < set->ngroups; g++) {
		struct gm_row *r = &t->rows[set->first + g];
		const struct mo_group *mg = &set->sweep.groups[g];

		r->covered_ns = mg->covered_ns;
		r->touched_ns = mg->touched_ns;
		r->samples = mg->periods;
		for (int m = 0; m < nmetrics; m++)
			r->mean[m] = mo_sweep__mean(&set->sweep, g, m);
	}
}

static void name_set_exit(struct name_set *set)
{
	mo_sweep__exit(&set->sweep);
	free(set->iv);
	memset(set, 0, sizeof *set);
}

/* Every period of one sampler into its sweeps and the caller's hook. */
static int sweep_sampler(struct prof_store *s, const struct gm_catalog *c, int sampler, const struct gm_options *o,
			 struct name_set *sets, int nsets, struct prof_error *err)
{
	struct gm_reader *r = NULL;
	const double *values;
	int64_t from, to;
	int rc = gm_reader__open(s, c, sampler, o->from_ns, o->to_ns, &r, err);

	while (rc >= 0 && (rc = gm_reader__next(r, &from, &to, &values, err)) > 0) {
		for (int i = 0; i < nsets; i++)
			if (mo_sweep__add(&sets[i].sweep, from, to, values)) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				break;
			}
		if (rc >= 0 && o->on_sample)
			rc = o->on_sample(o->arg, sampler, from, to, values, err);
	}
	gm_reader__close(r);
	return rc < 0 ? rc : 0;
}

static int one_sampler(struct prof_store *s, const struct gm_catalog *c, int sampler, const struct gm_options *o,
		       struct gm_summary *out, struct prof_error *err)
{
	const struct gm_sampler *smp = &c->samplers[sampler];
	enum { DEVICE, KERNELS, RANGES, NSETS };
	struct name_set sets[NSETS] = { { 0 } };
	struct gm_table *tables[NSETS] = { &out->devices, &out->kernels, &out->ranges };
	int rc = 0;

	/* the device's row: the whole window as one interval */
	sets[DEVICE].first = out->devices.n;
	sets[DEVICE].ngroups = 1;
	if (!new_row(&out->devices, sampler, NULL, c->nmetrics) ||
	    mo_intervals__merge(&sets[DEVICE].iv, &sets[DEVICE].n, &sets[DEVICE].cap, &(int){ -1 }, o->from_ns,
				o->to_ns, 0))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc && o->kernels)
		rc = load_names(s, kernel_sql(smp), true, smp, sampler, o, c->nmetrics, &out->kernels,
				&sets[KERNELS], err);
	else
		sets[KERNELS].first = out->kernels.n;
	if (!rc && o->ranges)
		rc = load_names(s, range_sql(smp), false, smp, sampler, o, c->nmetrics, &out->ranges,
				&sets[RANGES], err);
	else
		sets[RANGES].first = out->ranges.n;
	for (int i = 0; !rc && i < NSETS; i++)
		if (mo_sweep__init(&sets[i].sweep, sets[i].iv, sets[i].n, sets[i].ngroups, c->nmetrics))
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc)
		rc = sweep_sampler(s, c, sampler, o, sets, NSETS, err);
	for (int i = 0; !rc && i < NSETS; i++)
		fill_rows(tables[i], &sets[i], c->nmetrics);
	if (!rc)
		out->devices.rows[sets[DEVICE].first].time_ns = out->devices.rows[sets[DEVICE].first].covered_ns;
	for (int i = 0; i < NSETS; i++)
		name_set_exit(&sets[i]);
	return rc;
}

/* Kernels in the window on a device that no sampler of their process watched. */
static int count_unsampled(struct prof_store *s, const struct gm_options *o, int64_t *out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	/* a sampler or a kernel of no known process watches or is watched by
	 * every one of the device */
	*out = 0;
	rc = prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2"
				  " AND NOT EXISTS (SELECT 1 FROM " PROF_T_GPU_METRIC_TYPES " t"
				  " WHERE (t.typeId & 255) = k.deviceId AND (t.globalPid IS NULL"
				  " OR k.globalPid IS NULL OR k.globalPid = 0 OR t.globalPid = k.globalPid))",
			       &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, o->from_ns);
	prof_cursor__bind_int64(c, 2, o->to_ns);
	rc = prof_cursor__next(c, err);
	if (rc > 0)
		*out = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int by_time(const void *x, const void *y)
{
	const struct gm_row *a = x, *b = y;
	int by_name;

	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? 1 : -1;
	by_name = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	return by_name ? by_name : (a->sampler > b->sampler) - (a->sampler < b->sampler);
}

int gm_summary__compute(struct prof_store *s, const struct gm_catalog *c, const struct gm_options *o,
			struct gm_summary *out, struct prof_error *err)
{
	int rc = 0;

	memset(out, 0, sizeof *out);
	out->nmetrics = c->nmetrics;
	for (int i = 0; !rc && i < c->nsamplers; i++)
		rc = one_sampler(s, c, i, o, out, err);
	if (!rc && c->nsamplers && o->kernels)
		rc = count_unsampled(s, o, &out->unsampled_kernels, err);
	if (rc) {
		gm_summary__exit(out);
		return rc;
	}
	if (out->kernels.n > 1)
		qsort(out->kernels.rows, (size_t)out->kernels.n, sizeof *out->kernels.rows, by_time);
	if (out->ranges.n > 1)
		qsort(out->ranges.rows, (size_t)out->ranges.n, sizeof *out->ranges.rows, by_time);
	return 0;
}
