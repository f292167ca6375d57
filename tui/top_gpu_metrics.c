/* top_gpu_metrics.c - the sampled GPU metrics perfkit top shows, per second
 * of capture time (top_gpu_metrics.h). Metric names are told apart as the
 * reports tell them (report/analysis, gm_kind__of). */
#include "top_gpu_metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"

/* The series' scale: percent x 100. */
#define FULL 10000

void top_gpu_metrics__init(struct top_gpu_metrics *g)
{
	memset(g, 0, sizeof *g);
	for (int k = 0; k < TOP_GM__COUNT; k++) {
		spark_ring__init(&g->weighted[k]);
		spark_ring__init(&g->covered[k]);
	}
}

int top_gpu_metrics__kind(const char *metric_name)
{
	switch (gm_kind__of(metric_name)) {
	case GM_SM_ACTIVE:
		return TOP_GM_SM_ACTIVE;
	case GM_TENSOR_ACTIVE:
		return TOP_GM_TENSOR_ACTIVE;
	case GM_DRAM_READ:
		return TOP_GM_DRAM_READ;
	case GM_DRAM_WRITE:
		return TOP_GM_DRAM_WRITE;
	default:
		return -1;
	}
}

static struct top_gm_sampler *sampler(struct top_gpu_metrics *g, int64_t type_id)
{
	for (int i = 0; i < g->nsamplers; i++)
		if (g->sampler[i].type_id == type_id)
			return &g->sampler[i];
	if (g->nsamplers == TOP_GM_SAMPLERS)
		return NULL;
	g->sampler[g->nsamplers] = (struct top_gm_sampler){ .type_id = type_id };
	return &g->sampler[g->nsamplers++];
}

void top_gpu_metrics__add(struct top_gpu_metrics *g, int64_t ts_ns, int64_t type_id, int kind, double value,
			  int64_t bucket)
{
	struct top_gm_sampler *s = kind >= 0 && kind < TOP_GM__COUNT ? sampler(g, type_id) : NULL;
	int64_t period;

	if (!s || !isfinite(value))
		return;
	g->has[kind] = true;
	/* the rows of one sample share its timestamp; a later one starts the next */
	if (ts_ns > s->cur_ns) {
		s->prev_ns = s->cur_ns;
		s->cur_ns = ts_ns;
	}
	/* the sampler's first sample has no period; an older row, none known */
	if (!s->prev_ns || ts_ns != s->cur_ns)
		return;
	period = s->cur_ns - s->prev_ns;
	if (value < 0)
		value = 0;
	spark_ring__add(&g->weighted[kind], bucket, (int64_t)llround(value * 100) * period);
	spark_ring__add(&g->covered[kind], bucket, period);
}

/* The kinds a row shows (summed, as DRAM read + write). */
static int row_kinds(const struct top_gpu_metrics *g, int row, int kinds[2])
{
	int n = 0;

	for (int r = 0; r < TOP_GM_ROW__COUNT; r++) {
		int k[2], nk = 0;

		if (r == TOP_GM_ROW_SM && g->has[TOP_GM_SM_ACTIVE])
			k[nk++] = TOP_GM_SM_ACTIVE;
		if (r == TOP_GM_ROW_TENSOR && g->has[TOP_GM_TENSOR_ACTIVE])
			k[nk++] = TOP_GM_TENSOR_ACTIVE;
		if (r == TOP_GM_ROW_DRAM && g->has[TOP_GM_DRAM_READ])
			k[nk++] = TOP_GM_DRAM_READ;
		if (r == TOP_GM_ROW_DRAM && g->has[TOP_GM_DRAM_WRITE])
			k[nk++] = TOP_GM_DRAM_WRITE;
		if (!nk)
			continue;
		if (n++ == row) {
			memcpy(kinds, k, sizeof k[0] * (size_t)nk);
			return nk;
		}
	}
	return 0;
}

int top_gpu_metrics__rows(const struct top_gpu_metrics *g)
{
	int kinds[2], n = 0;

	while (row_kinds(g, n, kinds))
		n++;
	return n;
}

/* The row's value in one second, percent x 100; -1 when no sample covers it. */
static int64_t row_value(const struct top_gpu_metrics *g, const int *kinds, int nk, int64_t bucket)
{
	int64_t sum = 0;
	bool any = false;

	for (int i = 0; i < nk; i++) {
		int64_t covered = spark_ring__get(&g->covered[kinds[i]], bucket);

		if (covered <= 0)
			continue;
		sum += spark_ring__get(&g->weighted[kinds[i]], bucket) / covered;
		any = true;
	}
	return any ? sum : -1;
}

void top_gpu_metrics__row(const struct top_gpu_metrics *g, int row, int64_t bucket, char *label, size_t label_cap,
			  char *value, size_t value_cap)
{
	int kinds[2], nk = row_kinds(g, row, kinds);
	int64_t v = nk ? row_value(g, kinds, nk, bucket) : -1;

	/* as wide as the rates' labels, 12 columns */
	snprintf(label, label_cap, "%s", !nk ? "" : kinds[0] == TOP_GM_SM_ACTIVE ? "SM active"
					     : kinds[0] == TOP_GM_TENSOR_ACTIVE ? "tensor pipe"
					     : nk == 2 ? "DRAM r+w" : kinds[0] == TOP_GM_DRAM_READ ? "DRAM read"
					     : "DRAM write");
	if (v < 0)
		snprintf(value, value_cap, "N/A");
	else
		snprintf(value, value_cap, "%.1f%%", (double)v / 100);
}

int64_t top_gpu_metrics__window(const struct top_gpu_metrics *g, int row, int64_t last, int n, int64_t *out)
{
	int kinds[2], nk = row_kinds(g, row, kinds);

	for (int i = 0; i < n; i++) {
		int64_t v = nk ? row_value(g, kinds, nk, last - n + 1 + i) : -1;

		out[i] = v > 0 ? v : 0;
	}
	return FULL;
}
