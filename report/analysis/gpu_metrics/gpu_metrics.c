/* gpu_metrics.c - a capture's sampled GPU metrics: the catalogue of
 * samplers and metric columns, and each sampler's samples as periods in
 * time order (gpu_metrics.h). The averages by name are gpu_metrics_names.c. */
#include "gpu_metrics.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "model/memo.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

static const struct {
	const char *name, *label, *unit;
} known[GM__KNOWN] = {
	[GM_SM_ACTIVE] = { "SMs Active [Throughput %]", "SM Active", "%" },
	[GM_SM_ISSUE] = { "SM Issue [Throughput %]", "SM Issue", "%" },
	[GM_TENSOR_ACTIVE] = { "Tensor Active [Throughput %]", "Tensor Active", "%" },
	[GM_WARPS_IN_FLIGHT] = { "Compute Warps in Flight [Throughput %]", "Warps in Flight", "%" },
	[GM_UNALLOC_WARPS_ACTIVE_SMS] = { "Unallocated Warps in Active SMs [Throughput %]",
					  "Unallocated Warps in Active SMs", "%" },
	[GM_UNALLOC_WARPS_IDLE_SMS] = { "Unallocated Warps in Idle SMs [Throughput %]",
					"Unallocated Warps in Idle SMs", "%" },
	[GM_DRAM_READ] = { "DRAM Read Bandwidth [Throughput %]", "DRAM Read", "%" },
	[GM_DRAM_WRITE] = { "DRAM Write Bandwidth [Throughput %]", "DRAM Write", "%" },
	[GM_PCIE_RX] = { "PCIe RX Throughput [Throughput %]", "PCIe RX", "%" },
	[GM_PCIE_TX] = { "PCIe TX Throughput [Throughput %]", "PCIe TX", "%" },
	[GM_NVLINK_RX] = { "NVLink RX Throughput [Throughput %]", "NVLink RX", "%" },
	[GM_NVLINK_TX] = { "NVLink TX Throughput [Throughput %]", "NVLink TX", "%" },
	[GM_GR_ACTIVE] = { "GR Active [Throughput %]", "GR Active", "%" },
	[GM_GPC_CLOCK] = { "GPC Clock Frequency [MHz]", "GPC Clock", "MHz" },
};

const char *gm_kind__name(enum gm_kind k)
{
	return k >= 0 && k < GM__KNOWN ? known[k].name : NULL;
}

const char *gm_kind__label(enum gm_kind k)
{
	return k >= 0 && k < GM__KNOWN ? known[k].label : NULL;
}

/* nsys spells some names with other capitals across versions ("Compute
 * Warps In Flight"). */
static bool same_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return *a == *b;
}

enum gm_kind gm_kind__of(const char *name)
{
	for (int k = 0; name && k < GM__KNOWN; k++)
		if (same_name(name, known[k].name))
			return (enum gm_kind)k;
	return GM_OTHER;
}

/* ---- the catalogue --------------------------------------------------------- */

void gm_catalog__exit(struct gm_catalog *c)
{
	for (int i = 0; i < c->nmetrics; i++) {
		free(c->metrics[i].name);
		free(c->metrics[i].column);
	}
	for (int i = 0; i < c->nsamplers; i++) {
		free(c->samplers[i].metric_ids);
		free(c->samplers[i].metric_col);
	}
	free(c->samplers);
	memset(c, 0, sizeof *c);
}

int gm_catalog__column(const struct gm_catalog *c, enum gm_kind k)
{
	for (int i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].kind == (int)k)
			return i;
	return -1;
}

/* The column of name, added when there is room; -1 past GM_MAX_METRICS. */
static int column_of(struct gm_catalog *c, const char *name)
{
	enum gm_kind k = gm_kind__of(name);
	struct gm_metric *m;

	for (int i = 0; i < c->nmetrics; i++)
		if (k != GM_OTHER ? c->metrics[i].kind == (int)k : !strcmp(c->metrics[i].name, name))
			return i;
	if (c->nmetrics == GM_MAX_METRICS) {
		c->left_out++;
		return -1;
	}
	m = &c->metrics[c->nmetrics];
	m->kind = k;
	m->name = strdup(name);
	if (k != GM_OTHER) {
		size_t len = strlen(known[k].label) + strlen(known[k].unit) + 4;

		m->column = malloc(len);
		if (m->column)
			snprintf(m->column, len, "%s (%s)", known[k].label, known[k].unit);
	} else {
		m->column = strdup(name);
	}
	if (!m->name || !m->column) {
		free(m->name);
		free(m->column);
		return PROF_E_NOMEM;
	}
	return c->nmetrics++;
}

static struct gm_sampler *sampler_of(struct gm_catalog *c, int64_t type_id)
{
	struct gm_sampler *smp;

	if (c->nsamplers && c->samplers[c->nsamplers - 1].type_id == type_id)
		return &c->samplers[c->nsamplers - 1];
	if (array__grow((void **)&c->samplers, &c->cap, c->nsamplers + 1, sizeof *c->samplers))
		return NULL;
	smp = &c->samplers[c->nsamplers++];
	memset(smp, 0, sizeof *smp);
	smp->type_id = type_id;
	smp->device = (int)(type_id & 0xFF);
	return smp;
}

static int add_metric(struct gm_sampler *smp, int64_t metric_id, int col)
{
	int cap = smp->nids;

	for (int i = 0; i < smp->nids; i++)
		if (smp->metric_ids[i] == metric_id)
			return 0;
	if (array__grow((void **)&smp->metric_ids, &cap, smp->nids + 1, sizeof *smp->metric_ids))
		return PROF_E_NOMEM;
	cap = smp->nids;
	if (array__grow((void **)&smp->metric_col, &cap, smp->nids + 1, sizeof *smp->metric_col))
		return PROF_E_NOMEM;
	smp->metric_ids[smp->nids] = metric_id;
	smp->metric_col[smp->nids++] = col;
	smp->has[col] = true;
	return 0;
}

/* Known metrics in their order, then the others by name; samplers' column
 * numbers follow. */
static int reorder_columns(struct gm_catalog *c)
{
	int order[GM_MAX_METRICS], where[GM_MAX_METRICS], n = 0;
	struct gm_metric sorted[GM_MAX_METRICS];

	for (int k = 0; k < GM__KNOWN; k++)
		for (int i = 0; i < c->nmetrics; i++)
			if (c->metrics[i].kind == k)
				order[n++] = i;
	for (int i = 0; i < c->nmetrics; i++) {
		int j;

		if (c->metrics[i].kind != GM_OTHER)
			continue;
		for (j = n; j > 0 && c->metrics[order[j - 1]].kind == GM_OTHER &&
			    strcmp(c->metrics[order[j - 1]].name, c->metrics[i].name) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	for (int i = 0; i < n; i++) {
		sorted[i] = c->metrics[order[i]];
		where[order[i]] = i;
	}
	memcpy(c->metrics, sorted, sizeof sorted[0] * (size_t)n);
	for (int s = 0; s < c->nsamplers; s++) {
		struct gm_sampler *smp = &c->samplers[s];

		memset(smp->has, 0, sizeof smp->has);
		for (int i = 0; i < smp->nids; i++) {
			smp->metric_col[i] = where[smp->metric_col[i]];
			smp->has[smp->metric_col[i]] = true;
		}
	}
	return 0;
}

/* Which samplers' rows come in time order by rowid. Sorting a sampler's
 * rows by timestamp costs several times the scan that finds out (4.2M rows:
 * 1.3 s against 0.3 s), and writers write them in that order. The scan
 * reads every row of the file, whatever the views show: a sampler in order
 * there is in order in any part of it. A finished capture's answer is kept
 * for the connection (model/memo.h), as a page reads the samples three
 * times. */
struct type_order {
	int64_t type_id, last;
	bool in_order;
};

/* bsearch's order of a typeId against an element whose first member is
 * its typeId (struct gm_sampler, struct type_order) */
static int by_type_id(const void *key, const void *elem)
{
	int64_t k = *(const int64_t *)key, t = *(const int64_t *)elem;

	return (k > t) - (k < t);
}

static struct gm_sampler *sampler_by_type(struct gm_catalog *c, int64_t type_id)
{
	/* the catalogue's samplers are in typeId order */
	return c->nsamplers ? bsearch(&type_id, c->samplers, (size_t)c->nsamplers, sizeof *c->samplers, by_type_id)
			    : NULL;
}

/* sql (one column) read from the file's every row of table, whatever the
 * views show. */
static char *every_row_sql(struct prof_store *s, const char *sql, const char *table)
{
	const char *rows = prof_store__all_rows(s, table);

	return rows ? prof_strfmt(sql, rows) : prof_strfmt(sql, table);
}

/* Every sampler's order over the file's rows, into *out (*n of them, in
 * typeId order): the samplers the file describes, each row looked up by
 * its typeId (of a job of many samplers too, a lookup a row). */
static int scan_order(struct prof_store *s, struct type_order **out, int *n, struct prof_error *err)
{
	char *types = every_row_sql(s, "SELECT DISTINCT typeId FROM (%s) WHERE typeId IS NOT NULL ORDER BY typeId",
				    PROF_T_GPU_METRIC_TYPES);
	char *samples = every_row_sql(s, "SELECT typeId, timestamp FROM (%s) WHERE timestamp IS NOT NULL ORDER BY rowid",
				      PROF_T_GPU_METRICS);
	struct prof_cursor *cur = NULL;
	struct type_order *v = NULL, *at = NULL;
	int cap = 0, rc;

	*out = NULL;
	*n = 0;
	rc = types && samples ? prof_cursor__open(s, types, &cur, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		if (array__grow((void **)&v, &cap, *n + 1, sizeof *v)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		v[(*n)++] = (struct type_order){ prof_cursor__int64(cur, 0), INT64_MIN, true };
	}
	prof_cursor__close(cur);
	cur = NULL;
	if (rc == 0 && *n > 0)
		rc = prof_cursor__open(s, samples, &cur, err);
	while (rc >= 0 && *n > 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		int64_t type_id = prof_cursor__int64(cur, 0), ts = prof_cursor__int64(cur, 1);

		/* rows of one sampler mostly follow each other; a row of no
		 * sampler the file describes is no reader's */
		if ((!at || at->type_id != type_id) &&
		    !(at = bsearch(&type_id, v, (size_t)*n, sizeof *v, by_type_id)))
			continue;
		if (ts < at->last)
			at->in_order = false;
		at->last = ts;
	}
	prof_cursor__close(cur);
	free(types);
	free(samples);
	if (rc < 0) {
		free(v);
		*n = 0;
		return rc;
	}
	*out = v;
	return 0;
}

/* The answer kept, in one statement: a table is there whole or not at all. */
static void keep_order(struct prof_store *s, const struct type_order *v, int n)
{
	struct prof_error ignored = { 0 };
	struct prof_cursor *c = NULL;
	char *sql = NULL;
	size_t len = 0;
	FILE *f;

	if (n > 10000 || !(f = open_memstream(&sql, &len)))
		return;
	if (n == 0)
		fputs("CREATE TEMP TABLE " MEMO_GPU_METRICS_ORDER " (typeId INTEGER, in_order INTEGER)", f);
	else
		fputs("CREATE TEMP TABLE " MEMO_GPU_METRICS_ORDER " AS SELECT column1 AS typeId, column2 AS in_order"
		      " FROM (VALUES ", f);
	for (int i = 0; i < n; i++)
		fputs(i ? ", (?, ?)" : "(?, ?)", f);
	if (n > 0)
		fputs(")", f);
	if (fclose(f) == 0 && prof_cursor__open(s, sql, &c, &ignored) == 0) {
		for (int i = 0; i < n; i++) {
			prof_cursor__bind_int64(c, 2 * i + 1, v[i].type_id);
			prof_cursor__bind_int64(c, 2 * i + 2, v[i].in_order);
		}
		(void)prof_cursor__next(c, &ignored);
	}
	prof_cursor__close(c);
	free(sql);
}

static int check_order(struct prof_store *s, struct gm_catalog *c, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	struct type_order *v = NULL;
	bool kept = false;
	int n = 0, rc;

	if (!c->nsamplers)
		return 0;
	for (int i = 0; i < c->nsamplers; i++)
		c->samplers[i].in_order = true;
	/* a capture still being written gains rows between two reads */
	if (prof_store__is_finished(s) && sum_temp__exists(s, MEMO_GPU_METRICS_ORDER, &kept, err) < 0)
		return err->code;
	if (kept) {
		rc = prof_cursor__open(s, "SELECT typeId, in_order FROM temp." MEMO_GPU_METRICS_ORDER, &cur, err);
		while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
			struct gm_sampler *smp = sampler_by_type(c, prof_cursor__int64(cur, 0));

			if (smp)
				smp->in_order = prof_cursor__int64(cur, 1) != 0;
		}
		prof_cursor__close(cur);
		return rc < 0 ? rc : 0;
	}
	rc = scan_order(s, &v, &n, err);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		struct gm_sampler *smp = sampler_by_type(c, v[i].type_id);

		if (smp)
			smp->in_order = v[i].in_order;
	}
	if (prof_store__is_finished(s))
		keep_order(s, v, n);
	free(v);
	return 0;
}

/* The catalogue column of a metricId of the sampler, -1 when it has none. */
static int column_of_id(const struct gm_sampler *smp, int64_t metric_id)
{
	for (int i = 0; i < smp->nids; i++)
		if (smp->metric_ids[i] == metric_id)
			return smp->metric_col[i];
	return -1;
}

/* ---- the samples kept in memory -------------------------------------------- */

/* A finished capture's samples read once for the connection
 * (prof_store__keep), by the catalogue's samplers: whether each one's rows
 * came in time order, and the rows (none past GM_KEPT_ROWS: the readers
 * then read the file). One pass over the table reads them and finds their
 * order, where a reader's own read is a pass a sampler, and the order's a
 * pass more. */
struct gm_kept {
	int n;
	int64_t *type_id;
	bool *in_order;
	struct gm_rows *rows; /* NULL: too many to keep */
	/* every sampler's rows, one after another (rows[i] are a stretch) */
	int64_t *ts;
	int8_t *col;
	double *value;
};

/* its key among what the store keeps */
static const char kept_key;

static void kept_rows_free(struct gm_kept *k)
{
	free(k->rows);
	free(k->ts);
	free(k->col);
	free(k->value);
	k->rows = NULL;
	k->ts = NULL;
	k->col = NULL;
	k->value = NULL;
}

static void kept_free(void *value)
{
	struct gm_kept *k = value;

	if (!k)
		return;
	kept_rows_free(k);
	free(k->type_id);
	free(k->in_order);
	free(k);
}

struct row_at {
	int64_t ts;
	size_t at;
};

/* time order, and among rows of one time the order they were read in */
static int by_time_then_read(const void *a, const void *b)
{
	const struct row_at *x = a, *y = b;

	if (x->ts != y->ts)
		return (x->ts > y->ts) - (x->ts < y->ts);
	return (x->at > y->at) - (x->at < y->at);
}

/* Rows read out of time order, put in it (in their place). */
static int sort_rows(struct gm_rows *r)
{
	size_t n = r->n ? r->n : 1;
	struct row_at *order = malloc(n * sizeof *order);
	int8_t *col = malloc(n);
	double *value = malloc(n * sizeof *value);
	int rc = order && col && value ? 0 : PROF_E_NOMEM;

	if (rc == 0) {
		for (size_t i = 0; i < r->n; i++)
			order[i] = (struct row_at){ r->ts[i], i };
		qsort(order, r->n, sizeof *order, by_time_then_read);
		memcpy(col, r->col, r->n);
		memcpy(value, r->value, r->n * sizeof *value);
		for (size_t i = 0; i < r->n; i++) {
			r->ts[i] = order[i].ts;
			r->col[i] = col[order[i].at];
			r->value[i] = value[order[i].at];
		}
	}
	free(order);
	free(col);
	free(value);
	return rc;
}

/* The rows read (in file order, sampler[i] each one's) placed sampler by
 * sampler, each keeping its rows' order (a counting sort); rows[i] say
 * where. One sampler's rows are in place already. */
static int place_by_sampler(struct gm_kept *k, const int *sampler, size_t n)
{
	size_t m = n ? n : 1, *start = calloc((size_t)k->n + 1, sizeof *start), *at = calloc((size_t)k->n, sizeof *at);
	bool move = k->n > 1;
	int64_t *ts = move ? malloc(m * sizeof *ts) : NULL;
	int8_t *col = move ? malloc(m) : NULL;
	double *value = move ? malloc(m * sizeof *value) : NULL;
	int rc = start && at && (!move || (ts && col && value)) ? 0 : PROF_E_NOMEM;

	for (size_t i = 0; rc == 0 && i < n; i++)
		k->rows[sampler[i]].n++;
	for (int i = 0; rc == 0 && i < k->n; i++)
		start[i + 1] = start[i] + k->rows[i].n;
	if (rc == 0 && move) {
		int64_t *old_ts = k->ts;
		int8_t *old_col = k->col;
		double *old_value = k->value;

		memcpy(at, start, (size_t)k->n * sizeof *at);
		for (size_t i = 0; i < n; i++) {
			size_t to = at[sampler[i]]++;

			ts[to] = k->ts[i];
			col[to] = k->col[i];
			value[to] = k->value[i];
		}
		k->ts = ts;
		k->col = col;
		k->value = value;
		/* the arrays read, freed below */
		ts = old_ts;
		col = old_col;
		value = old_value;
	}
	for (int i = 0; rc == 0 && i < k->n; i++) {
		k->rows[i].ts = k->ts + start[i];
		k->rows[i].col = k->col + start[i];
		k->rows[i].value = k->value + start[i];
	}
	free(start);
	free(at);
	free(ts);
	free(col);
	free(value);
	return rc;
}

/* The rows GPU_METRICS holds at most, from its largest rowid (a count
 * would read them all): the arrays are made once, and pages of them
 * never written are never touched. A file whose rowids leave gaps may
 * count more rows than GM_KEPT_ROWS and be read from the file. */
static int64_t most_rows(struct prof_store *s)
{
	struct prof_cursor *c = NULL;
	struct prof_error ignored = { 0 };
	int64_t most = INT64_MAX;

	if (prof_cursor__open(s, "SELECT max(rowid) FROM main." PROF_T_GPU_METRICS, &c, &ignored) == 0 &&
	    prof_cursor__next(c, &ignored) > 0)
		most = prof_cursor__is_null(c, 0) ? 0 : prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return most < 0 ? 0 : most;
}

/* The samples of the capture as the connection reads it, by the
 * catalogue's samplers, in one pass. */
static int read_kept(struct prof_store *s, const struct gm_catalog *c, struct gm_kept **out,
		     struct prof_error *err)
{
	struct gm_kept *k = calloc(1, sizeof *k);
	struct prof_cursor *cur = NULL;
	int64_t most = most_rows(s), *last = NULL;
	int *sampler = NULL;
	size_t n = 0;
	int at = -1, rc = 0;

	*out = NULL;
	if (!k)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	k->n = c->nsamplers;
	k->type_id = malloc((size_t)k->n * sizeof *k->type_id);
	k->in_order = malloc((size_t)k->n * sizeof *k->in_order);
	last = malloc((size_t)k->n * sizeof *last);
	if (!k->type_id || !k->in_order || !last)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc == 0 && most <= GM_KEPT_ROWS) {
		size_t cap = most > 0 ? (size_t)most : 1;

		k->rows = calloc((size_t)k->n, sizeof *k->rows);
		k->ts = malloc(cap * sizeof *k->ts);
		k->col = malloc(cap);
		k->value = malloc(cap * sizeof *k->value);
		sampler = malloc(cap * sizeof *sampler);
		if (!k->rows || !k->ts || !k->col || !k->value || !sampler)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; rc == 0 && i < k->n; i++) {
		k->type_id[i] = c->samplers[i].type_id;
		k->in_order[i] = true;
		last[i] = INT64_MIN;
	}
	if (rc == 0)
		rc = prof_cursor__open(s, "SELECT typeId, timestamp, metricId, value FROM " PROF_T_GPU_METRICS
					  " WHERE timestamp IS NOT NULL ORDER BY rowid", &cur, err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		int64_t type_id = prof_cursor__int64(cur, 0), ts = prof_cursor__int64(cur, 1);
		double v;

		/* rows of one sampler mostly follow each other; a row of no
		 * sampler the catalogue holds is no reader's */
		if (at < 0 || k->type_id[at] != type_id) {
			const struct gm_sampler *smp =
				bsearch(&type_id, c->samplers, (size_t)c->nsamplers, sizeof *c->samplers, by_type_id);

			if (!smp)
				continue;
			at = (int)(smp - c->samplers);
		}
		if (ts < last[at])
			k->in_order[at] = false;
		last[at] = ts;
		if (!k->rows)
			continue;
		if (n == (size_t)most) {
			/* more rows than the largest rowid (rowids below 1):
			 * read from the file */
			kept_rows_free(k);
			continue;
		}
		v = prof_cursor__is_null(cur, 3) ? NAN : prof_cursor__double(cur, 3);
		k->ts[n] = ts;
		k->col[n] = (int8_t)column_of_id(&c->samplers[at], prof_cursor__int64(cur, 2));
		k->value[n] = isfinite(v) ? v : NAN;
		sampler[n++] = at;
	}
	prof_cursor__close(cur);
	if (rc == 0 && k->rows && place_by_sampler(k, sampler, n))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; rc == 0 && k->rows && i < k->n; i++)
		if (!k->in_order[i] && sort_rows(&k->rows[i]))
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	free(sampler);
	free(last);
	if (rc < 0) {
		kept_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

/* Whether k was read for a catalogue of these samplers (every catalogue
 * of one connection is the same). */
static bool kept_fits(const struct gm_kept *k, const struct gm_catalog *c)
{
	if (k->n != c->nsamplers)
		return false;
	for (int i = 0; i < k->n; i++)
		if (k->type_id[i] != c->samplers[i].type_id)
			return false;
	return true;
}

/* The rows of c's samplers read now (read_kept), with their order kept as
 * a memo for the connections the memos are handed to. */
static int read_rows(struct prof_store *s, const struct gm_catalog *c, struct gm_kept **out,
		     struct prof_error *err)
{
	struct type_order *order;
	struct gm_kept *k;
	int rc = read_kept(s, c, &k, err);

	if (rc)
		return rc;
	order = malloc((size_t)k->n * sizeof *order);
	for (int i = 0; order && i < k->n; i++)
		order[i] = (struct type_order){ k->type_id[i], 0, k->in_order[i] };
	if (order)
		keep_order(s, order, k->n);
	free(order);
	*out = k;
	return 0;
}

/* The rows of c's samplers as the connections to the file share them
 * (prof_store__shared_take, under the samplers' ids): the HTML page's
 * GPU-metrics section and its diagnosis, on two connections, each read
 * every sample (23 and 14 ms of a 0.1 s page). Kept on s too, not its to
 * free, so that its next catalogue takes no lock. */
static int shared_rows(struct prof_store *s, const struct gm_catalog *c, struct gm_kept **out,
		       struct prof_error *err)
{
	int64_t *tag = malloc((size_t)c->nsamplers * sizeof *tag);
	size_t tag_len = (size_t)c->nsamplers * sizeof *tag;
	void *shared = NULL;
	struct gm_kept *k;
	int got, rc;

	if (!tag)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; i < c->nsamplers; i++)
		tag[i] = c->samplers[i].type_id;
	got = prof_store__shared_take(s, &kept_key, tag, tag_len, &shared);
	if (got == 1) {
		k = shared;
	} else {
		rc = read_rows(s, c, &k, err);
		if (rc) {
			if (got == 0)
				prof_store__shared_drop(s, &kept_key, tag, tag_len);
			free(tag);
			return rc;
		}
		if (got == 0)
			prof_store__shared_give(s, &kept_key, tag, tag_len, k, kept_free);
	}
	free(tag);
	/* shared: the last connection frees it; else s's own */
	rc = prof_store__keep(s, &kept_key, k, got >= 0 ? NULL : kept_free, err);
	if (rc) {
		if (got < 0)
			kept_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

/* The samplers' order and rows from what the connection keeps, or its
 * siblings share, read now when none does. A capture still being written
 * gains rows between two reads, and one read under --rank or --window
 * reads part of them: their readers read the file, the order found by a
 * scan. */
static int use_kept(struct prof_store *s, struct gm_catalog *c, struct prof_error *err)
{
	struct gm_kept *k;
	int rc;

	if (!c->nsamplers)
		return 0;
	k = prof_store__kept(s, &kept_key);
	/* rows kept for other samplers stay: earlier catalogues read them */
	if (!prof_store__is_finished(s) || prof_store__restricted(s) || (k && !kept_fits(k, c)))
		return check_order(s, c, err);
	if (!k && (rc = shared_rows(s, c, &k, err)) != 0)
		return rc;
	for (int i = 0; i < c->nsamplers; i++) {
		c->samplers[i].in_order = k->in_order[i];
		c->samplers[i].rows = k->rows ? &k->rows[i] : NULL;
	}
	return 0;
}

int gm_catalog__load(struct prof_store *s, struct gm_catalog *c, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	int rc;

	/* a column the file lacks reads NULL: a table of another shape has no
	 * description perfkit can read, and no rows are kept */
	memset(c, 0, sizeof *c);
	rc = prof_cursor__open(s, "SELECT typeId, metricId, metricName, globalPid FROM " PROF_T_GPU_METRIC_TYPES
				  " WHERE typeId IS NOT NULL AND metricId IS NOT NULL AND metricName IS NOT NULL"
				  " ORDER BY typeId, metricId",
			       &cur, err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		struct gm_sampler *smp = sampler_of(c, prof_cursor__int64(cur, 0));
		int col;

		if (!smp) {
			rc = PROF_E_NOMEM;
			break;
		}
		if (!smp->pid_known && !prof_cursor__is_null(cur, 3)) {
			smp->global_pid = prof_cursor__int64(cur, 3);
			smp->pid_known = true;
		}
		col = column_of(c, prof_cursor__text(cur, 2));
		if (col == PROF_E_NOMEM || (col >= 0 && add_metric(smp, prof_cursor__int64(cur, 1), col))) {
			rc = PROF_E_NOMEM;
			break;
		}
	}
	prof_cursor__close(cur);
	if (rc == PROF_E_NOMEM)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc >= 0)
		rc = reorder_columns(c);
	if (rc >= 0)
		rc = use_kept(s, c, err);
	if (rc < 0)
		gm_catalog__exit(c);
	return rc < 0 ? rc : 0;
}


/* ---- the samples as periods -------------------------------------------------- */

struct gm_reader {
	const struct gm_sampler *smp;
	struct prof_cursor *cur;
	/* or its rows in memory, from the one at */
	const struct gm_rows *rows;
	size_t at;
	/* the row read last */
	int64_t row_ts;
	int row_col;
	double row_value;
	int64_t from_ns, to_ns;
	bool have_prev, pending, done;
	int64_t prev_ns;
	double values[GM_MAX_METRICS];
	int nmetrics;
};

/* The sampler's last timestamp before t: the start of the first period
 * that reaches into [t, ...). t itself when there is none. */
static int period_origin(struct prof_store *s, int64_t type_id, int64_t t, int64_t *out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(s, "SELECT max(timestamp) FROM " PROF_T_GPU_METRICS
				      " WHERE typeId = ?1 AND timestamp < ?2", &c, err);

	*out = t;
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, type_id);
	prof_cursor__bind_int64(c, 2, t);
	rc = prof_cursor__next(c, err);
	if (rc > 0 && !prof_cursor__is_null(c, 0))
		*out = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The first row at or after t in rows in time order. */
static size_t first_row_at(const struct gm_rows *rows, int64_t t)
{
	size_t lo = 0, hi = rows->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows->ts[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where a window from t starts reading: the first row of the last sample
 * before t, the start of the first period that reaches into [t, ...); the
 * first row at or after t when there is none. */
static size_t first_row_of_window(const struct gm_rows *rows, int64_t t)
{
	size_t at = first_row_at(rows, t);

	return at > 0 ? first_row_at(rows, rows->ts[at - 1]) : at;
}

int gm_reader__open(struct prof_store *s, const struct gm_catalog *c, int sampler, int64_t from_ns,
		    int64_t to_ns, struct gm_reader **out, struct prof_error *err)
{
	struct gm_reader *r = calloc(1, sizeof *r);
	int64_t origin = from_ns;
	int rc;

	*out = NULL;
	if (!r)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	r->smp = &c->samplers[sampler];
	r->from_ns = from_ns;
	r->to_ns = to_ns;
	r->nmetrics = c->nmetrics;
	if (r->smp->rows) {
		r->rows = r->smp->rows;
		r->at = first_row_of_window(r->rows, from_ns);
		*out = r;
		return 0;
	}
	/* Rows in time order are read from the sampler's first, the periods
	 * before from_ns passed over (gm_reader__next): finding where the
	 * first period starts would be one more scan of the table, which has
	 * no index. Rows to sort are read from there on, so fewer are sorted. */
	if (r->smp->in_order)
		origin = INT64_MIN;
	rc = origin > INT64_MIN ? period_origin(s, r->smp->type_id, from_ns, &origin, err) : 0;
	if (!rc)
		rc = prof_cursor__open(s, r->smp->in_order
					  ? "SELECT timestamp, metricId, value FROM " PROF_T_GPU_METRICS
					    " WHERE typeId = ?1 AND timestamp >= ?2 ORDER BY rowid"
					  : "SELECT timestamp, metricId, value FROM " PROF_T_GPU_METRICS
					    " WHERE typeId = ?1 AND timestamp >= ?2 ORDER BY timestamp",
				       &r->cur, err);
	if (rc) {
		gm_reader__close(r);
		return rc;
	}
	prof_cursor__bind_int64(r->cur, 1, r->smp->type_id);
	prof_cursor__bind_int64(r->cur, 2, origin);
	*out = r;
	return 0;
}

/* The next row into r->row_*: 1, 0 at the end, < 0 an error. */
static int next_row(struct gm_reader *r, struct prof_error *err)
{
	double v;
	int rc;

	if (r->rows) {
		if (r->at == r->rows->n)
			return 0;
		r->row_ts = r->rows->ts[r->at];
		r->row_col = r->rows->col[r->at];
		r->row_value = r->rows->value[r->at++];
		return 1;
	}
	rc = prof_cursor__next(r->cur, err);
	if (rc <= 0)
		return rc;
	r->row_ts = prof_cursor__int64(r->cur, 0);
	r->row_col = column_of_id(r->smp, prof_cursor__int64(r->cur, 1));
	v = prof_cursor__is_null(r->cur, 2) ? NAN : prof_cursor__double(r->cur, 2);
	r->row_value = isfinite(v) ? v : NAN;
	return 1;
}

int gm_reader__next(struct gm_reader *r, int64_t *from_ns, int64_t *to_ns, const double **values,
		    struct prof_error *err)
{
	while (!r->done) {
		int64_t ts;
		int rc;

		if (!r->pending && (rc = next_row(r, err)) <= 0) {
			r->done = true;
			return rc;
		}
		/* every row of one timestamp is one sample */
		ts = r->row_ts;
		for (int m = 0; m < r->nmetrics; m++)
			r->values[m] = NAN;
		r->pending = false;
		do {
			if (r->row_col >= 0)
				r->values[r->row_col] = r->row_value;
			rc = next_row(r, err);
			if (rc < 0)
				return rc;
		} while (rc > 0 && r->row_ts == ts);
		r->pending = rc > 0;
		if (!r->pending)
			r->done = true;
		/* the first sample has no start: it only opens the next period */
		if (!r->have_prev) {
			r->have_prev = true;
			r->prev_ns = ts;
			r->done = r->done || ts >= r->to_ns;
			continue;
		}
		*from_ns = r->prev_ns;
		*to_ns = ts;
		r->prev_ns = ts;
		if (*from_ns >= r->to_ns) {
			r->done = true;
			return 0;
		}
		if (ts <= r->from_ns)
			continue;
		*values = r->values;
		return 1;
	}
	return 0;
}

void gm_reader__close(struct gm_reader *r)
{
	if (!r)
		return;
	prof_cursor__close(r->cur);
	free(r);
}
