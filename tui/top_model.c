/* top_model.c - perfkit top's incremental model (top_model.h): totals per
 * name, rate history and NVTX stacks, updated one row at a time, and the
 * sorted, filtered views the kernel and range tables draw from. */
#include "top_model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/event.h"
#include "prof/saturate.h"
#include "prof/units.h"

int top_model__init(struct top_model *m)
{
	memset(m, 0, sizeof *m);
	name_table__init(&m->kernel_names);
	name_table__init(&m->range_names);
	spark_ring__init(&m->kernels_hist);
	spark_ring__init(&m->copies_hist);
	spark_ring__init(&m->copy_bytes_hist);
	top_gpu_metrics__init(&m->gpu_metrics);
	m->late.rank = -1;
	/* index 0 of both tables is the fold-over name, so interning never fails */
	if (top_model__kernel_name(m, TOP_OTHER_NAME) != 0 ||
	    top_model__range_name(m, TOP_OTHER_NAME) != 0) {
		top_model__exit(m);
		return -1;
	}
	return 0;
}

void top_model__exit(struct top_model *m)
{
	name_table__exit(&m->kernel_names);
	name_table__exit(&m->range_names);
	free(m->kernels);
	free(m->ranges);
	free(m->threads);
	memset(m, 0, sizeof *m);
}

/* Grow a stats array to hold index i (zeroed). */
static int reserve(void **arr, size_t *cap, size_t i, size_t elem)
{
	size_t want = *cap ? *cap : 64;
	void *p;

	if (i < *cap)
		return 0;
	while (want <= i)
		want *= 2;
	p = realloc(*arr, want * elem);
	if (!p)
		return -1;
	memset((char *)p + *cap * elem, 0, (want - *cap) * elem);
	*arr = p;
	*cap = want;
	return 0;
}

static int32_t intern(struct top_model *m, struct name_table *t, void **stats, size_t *cap,
		      size_t elem, const char *raw)
{
	char small[2048], *clean = small;
	size_t need;
	int32_t i;

	if (!raw)
		raw = TOP_UNKNOWN_NAME;
	/* sanitising turns an invalid byte into 3 bytes of U+FFFD at most */
	need = strlen(raw) * 3 + 1;
	if (need > sizeof small && !(clean = malloc(need))) {
		m->out_of_memory = true;
		return 0;
	}
	prof_sanitize_term(clean, need < sizeof small ? sizeof small : need, raw);
	i = name_table__find(t, clean);
	if (i < 0 && t->n < TOP_MAX_NAMES) {
		/* stats first: a name never exists without its stats entry */
		if (reserve(stats, cap, t->n, elem) || (i = name_table__intern(t, clean)) < 0) {
			m->out_of_memory = true;
			i = 0;
		}
	}
	if (clean != small)
		free(clean);
	return i < 0 ? 0 : i;
}

int32_t top_model__kernel_name(struct top_model *m, const char *raw)
{
	return intern(m, &m->kernel_names, (void **)&m->kernels, &m->kernels_cap,
		      sizeof *m->kernels, raw);
}

int32_t top_model__range_name(struct top_model *m, const char *raw)
{
	return intern(m, &m->range_names, (void **)&m->ranges, &m->ranges_cap,
		      sizeof *m->ranges, raw);
}

/* floor(t / TOP_BUCKET_NS), also for times before the epoch */
static int64_t bucket_of(int64_t t_ns)
{
	int64_t b = t_ns / TOP_BUCKET_NS;

	return (t_ns < 0 && b * TOP_BUCKET_NS != t_ns) ? b - 1 : b;
}

static void seen(struct top_model *m, int64_t start_ns, int64_t end_ns)
{
	if (!m->first_ns || start_ns < m->first_ns)
		m->first_ns = start_ns;
	if (end_ns > m->last_ns)
		m->last_ns = end_ns;
	m->rows_read++;
}

void top_model__add_kernel(struct top_model *m, int32_t name, int64_t start_ns, int64_t end_ns)
{
	struct top_kernel_stat *k = &m->kernels[name];
	int64_t dur;

	if (prof_span_is_bad(start_ns, end_ns)) {
		m->rows_left_out++;
		return;
	}
	dur = end_ns - start_ns;
	if (!k->count || dur < k->min_ns)
		k->min_ns = dur;
	if (dur > k->max_ns)
		k->max_ns = dur;
	k->count++;
	k->total_ns = prof_add_saturated(k->total_ns, dur);
	m->kernel_count++;
	m->kernel_total_ns = prof_add_saturated(m->kernel_total_ns, dur);
	spark_ring__add(&m->kernels_hist, bucket_of(start_ns), 1);
	seen(m, start_ns, end_ns);
}

void top_model__add_copy(struct top_model *m, int64_t start_ns, int64_t end_ns, int64_t bytes)
{
	if (prof_span_is_bad(start_ns, end_ns)) {
		m->rows_left_out++;
		return;
	}
	m->copy_count++;
	m->copy_bytes = prof_add_saturated(m->copy_bytes, bytes);
	spark_ring__add(&m->copies_hist, bucket_of(start_ns), 1);
	spark_ring__add(&m->copy_bytes_hist, bucket_of(start_ns), bytes);
	seen(m, start_ns, end_ns);
}

void top_model__add_memset(struct top_model *m, int64_t start_ns, int64_t end_ns)
{
	if (prof_span_is_bad(start_ns, end_ns)) {
		m->rows_left_out++;
		return;
	}
	seen(m, start_ns, end_ns);
}

struct top_gpu *top_model__gpu(struct top_model *m, int32_t device, const char *uuid)
{
	char id[sizeof m->gpus[0].uuid] = "";
	struct top_gpu *g;

	if (uuid && *uuid)
		prof_sanitize_term(id, sizeof id, uuid);
	for (int i = 0; id[0] && i < m->ngpus; i++)
		if (!strcmp(m->gpus[i].uuid, id))
			return &m->gpus[i];
	for (int i = 0; i < m->ngpus; i++) {
		g = &m->gpus[i];
		if (g->device != device || (id[0] && g->uuid[0]))
			continue;
		if (id[0])
			memcpy(g->uuid, id, sizeof id);
		return g;
	}
	if (m->ngpus == TOP_MAX_GPUS)
		return NULL;
	g = &m->gpus[m->ngpus++];
	memset(g, 0, sizeof *g);
	g->device = device;
	memcpy(g->uuid, id, sizeof id);
	spark_ring__init(&g->busy_hist);
	return g;
}

void top_gpu__label(const struct top_model *m, const struct top_gpu *g, char *buf, size_t cap)
{
	const char *name = g->name[0] ? g->name : "unknown";
	size_t n = strncmp(g->uuid, "GPU-", 4) == 0 ? 4 : 0;
	bool shared = false;

	for (int i = 0; i < m->ngpus; i++)
		shared |= &m->gpus[i] != g && m->gpus[i].device == g->device;
	while (g->uuid[n] && g->uuid[n] != '-' && n < 12)
		n++;
	if (shared && g->uuid[0])
		snprintf(buf, cap, "%.*s %s", (int)n, g->uuid, name);
	else
		snprintf(buf, cap, "%s", name);
}

void top_gpu__add_busy(struct top_gpu *g, int64_t start_ns, int64_t end_ns)
{
	/* the model counted it as left out (top_model__add_kernel, __add_copy,
	 * __add_memset) */
	if (!g || prof_span_is_bad(start_ns, end_ns))
		return;
	/* a bucket's busy time, by the work's start: a long kernel may push
	 * one second past 100%, which the reading caps */
	spark_ring__add(&g->busy_hist, bucket_of(start_ns), end_ns - start_ns);
}

void top_gpu__add_work(struct top_gpu *g, int64_t start_ns, int64_t end_ns, bool is_kernel, int64_t bytes)
{
	int64_t dur;

	if (!g || prof_span_is_bad(start_ns, end_ns))
		return;
	dur = end_ns - start_ns;
	if (is_kernel) {
		g->kernel_count++;
		g->kernel_ns = prof_add_saturated(g->kernel_ns, dur);
	} else {
		g->copy_count++;
		g->copy_bytes = prof_add_saturated(g->copy_bytes, bytes > 0 ? bytes : 0);
	}
	top_gpu__add_busy(g, start_ns, end_ns);
}

double top_gpu__busy_percent(const struct top_model *m, const struct top_gpu *g)
{
	double p = 100.0 * (double)spark_ring__get(&g->busy_hist, top_model__last_bucket(m)) /
		   (double)TOP_BUCKET_NS;

	return p > 100 ? 100 : p;
}

void top_model__add_memory(struct top_model *m, int64_t start_ns, int64_t bytes, int operation,
			   int mem_kind)
{
	/* Host allocations (pinned, pageable) are in the same table; the
	 * header shows device memory, as the Chrome trace's counter does. */
	if (mem_kind == PROF_MEM_DEVICE)
		m->device_memory_bytes = operation == 0 ? prof_add_saturated(m->device_memory_bytes, bytes)
							: prof_span_saturated(bytes, m->device_memory_bytes);
	seen(m, start_ns, start_ns);
}

void top_model__add_gpu_metric(struct top_model *m, int64_t ts_ns, int64_t type_id, int kind, double value)
{
	top_gpu_metrics__add(&m->gpu_metrics, ts_ns, type_id, kind, value, bucket_of(ts_ns));
	seen(m, ts_ns, ts_ns);
}

struct top_thread *top_model__thread(struct top_model *m, int64_t global_tid)
{
	size_t lo = 0, hi = m->n_threads;
	struct top_thread *t;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->threads[mid].global_tid < global_tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n_threads && m->threads[lo].global_tid == global_tid)
		return &m->threads[lo];
	if (m->n_threads >= TOP_MAX_THREADS)
		return NULL;
	if (!m->threads) {
		m->threads = calloc(TOP_MAX_THREADS, sizeof *m->threads);
		if (!m->threads) {
			m->out_of_memory = true;
			return NULL;
		}
	}
	memmove(&m->threads[lo + 1], &m->threads[lo], (m->n_threads - lo) * sizeof *m->threads);
	m->n_threads++;
	t = &m->threads[lo];
	memset(t, 0, sizeof *t);
	t->global_tid = global_tid;
	return t;
}

static bool contains(const struct top_frame *outer, int64_t start_ns, int64_t end_ns)
{
	return outer->start_ns <= start_ns && end_ns <= outer->end_ns;
}

/* Put a range on its thread's stack. Frames that enclose it stay above it;
 * the frames that it encloses stay below it (in completion order these are
 * its children, which ended first); anything else ended before it or
 * overlaps it without nesting, and leaves. */
static void push_range(struct top_thread *t, int32_t name, int64_t start_ns, int64_t end_ns)
{
	struct top_frame below[TOP_NVTX_DEPTH];
	int outer = 0, nbelow = 0;

	while (outer < t->depth && contains(&t->frame[outer], start_ns, end_ns))
		outer++;
	if (outer == TOP_NVTX_DEPTH)
		return;
	for (int i = outer; i < t->depth; i++) {
		if (t->frame[i].start_ns < start_ns || t->frame[i].end_ns > end_ns)
			break;
		below[nbelow++] = t->frame[i];
	}
	t->frame[outer] = (struct top_frame){ name, start_ns, end_ns };
	t->depth = outer + 1;
	for (int i = 0; i < nbelow && t->depth < TOP_NVTX_DEPTH; i++)
		t->frame[t->depth++] = below[i];
}

void top_model__add_range(struct top_model *m, int32_t name, int64_t start_ns, int64_t end_ns,
			  int64_t global_tid)
{
	struct top_range_stat *r = &m->ranges[name];
	struct top_thread *t;

	if (prof_span_is_bad(start_ns, end_ns)) {
		m->rows_left_out++;
		return;
	}
	r->count++;
	r->total_ns = prof_add_saturated(r->total_ns, end_ns - start_ns);
	seen(m, start_ns, end_ns);
	t = top_model__thread(m, global_tid);
	if (!t)
		return;
	if (end_ns > t->last_ns)
		t->last_ns = end_ns;
	/* at the clock, a range that has already ended is on no stack */
	if (m->nvtx_mode == TOP_NVTX_AT_CLOCK && end_ns <= m->clock_ns)
		return;
	push_range(t, name, start_ns, end_ns);
}

void top_model__set_clock(struct top_model *m, int64_t clock_ns)
{
	m->clock_ns = clock_ns;
	if (m->nvtx_mode != TOP_NVTX_AT_CLOCK)
		return;
	for (size_t i = 0; i < m->n_threads; i++) {
		struct top_thread *t = &m->threads[i];
		int d = 0;

		while (d < t->depth && t->frame[d].end_ns > clock_ns)
			d++;
		t->depth = d;
	}
}

int64_t top_model__last_bucket(const struct top_model *m)
{
	return bucket_of(m->clock_ns) - 1;
}

/* ---- views ------------------------------------------------------------------ */

bool top_name_matches(const char *name, const char *needle)
{
	size_t n;

	if (!needle || !*needle)
		return true;
	n = strlen(needle);
	for (const char *p = name; *p; p++) {
		size_t i = 0;

		while (i < n && p[i] &&
		       tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return false;
}

static int view_reserve(struct top_view *v, size_t n)
{
	int32_t *rows;

	if (n <= v->cap)
		return 0;
	rows = realloc(v->rows, n * sizeof *rows);
	if (!rows)
		return -1;
	v->rows = rows;
	v->cap = n;
	return 0;
}

void top_view__exit(struct top_view *v)
{
	free(v->rows);
	memset(v, 0, sizeof *v);
}

/* qsort has no context argument; the model is used from one thread. */
static struct {
	const struct top_model *m;
	enum top_sort sort;
	int dir; /* -1 descending, 1 ascending */
} order;

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_kernel(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	const struct top_kernel_stat *ka = &order.m->kernels[a], *kb = &order.m->kernels[b];
	const char *na = name_table__name(&order.m->kernel_names, a);
	const char *nb = name_table__name(&order.m->kernel_names, b);
	int c = 0;

	switch (order.sort) {
	case TOP_SORT_TOTAL:
	case TOP_SORT_SHARE: /* a share of one sum orders as the totals do */
		c = cmp_i64(ka->total_ns, kb->total_ns);
		break;
	case TOP_SORT_COUNT:
		c = cmp_i64(ka->count, kb->count);
		break;
	case TOP_SORT_AVG: {
		/* avg a < avg b  <=>  total a * count b < total b * count a */
		double x = (double)ka->total_ns * (double)kb->count;
		double y = (double)kb->total_ns * (double)ka->count;

		c = (x > y) - (x < y);
		break;
	}
	case TOP_SORT_NAME:
	case TOP_SORT__COUNT:
		break;
	}
	c *= order.dir;
	if (!c)
		c = strcmp(na, nb) * (order.sort == TOP_SORT_NAME ? order.dir : 1);
	return c;
}

int top_model__kernel_view(const struct top_model *m, enum top_sort sort, bool ascending,
			   const char *filter, struct top_view *out)
{
	size_t n = m->kernel_names.n;

	out->n = 0;
	if (view_reserve(out, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (m->kernels[i].count > 0 &&
		    top_name_matches(name_table__name(&m->kernel_names, (int32_t)i), filter))
			out->rows[out->n++] = (int32_t)i;
	order.m = m;
	order.sort = sort;
	order.dir = ascending ? 1 : -1;
	qsort(out->rows, out->n, sizeof *out->rows, cmp_kernel);
	return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	int c = -cmp_i64(order.m->ranges[a].total_ns, order.m->ranges[b].total_ns);

	return c ? c : strcmp(name_table__name(&order.m->range_names, a),
			      name_table__name(&order.m->range_names, b));
}

int top_model__range_view(const struct top_model *m, struct top_view *out)
{
	size_t n = m->range_names.n;

	out->n = 0;
	if (view_reserve(out, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (m->ranges[i].count > 0)
			out->rows[out->n++] = (int32_t)i;
	order.m = m;
	qsort(out->rows, out->n, sizeof *out->rows, cmp_range);
	return 0;
}

void top_windows__text(const struct top_windows *w, char *buf, size_t cap)
{
	char at[32];

	if (!w->any) {
		snprintf(buf, cap, "%s", "");
	} else if (w->open) {
		/* a window opened before the first record the clock counts from */
		if (w->open_start_ns > w->from_ns)
			prof_units__duration(at + 1, sizeof at - 1, w->open_start_ns - w->from_ns,
					     PROF_UNITS_COMPACT);
		at[0] = '+';
		snprintf(buf, cap, "window %d open since %s%s%s%s", w->open,
			 w->open_start_ns > w->from_ns ? at : "the start",
			 w->opened_by[0] ? " (opened by " : "", w->opened_by, w->opened_by[0] ? ")" : "");
	} else if (w->finished) {
		snprintf(buf, cap, "%d capture window%s, none open", w->closed, w->closed == 1 ? "" : "s");
	} else if (w->closed == 0) {
		snprintf(buf, cap, "%s", "paused: no window opened yet");
	} else {
		snprintf(buf, cap, "paused: no window open (%d closed)", w->closed);
	}
}
