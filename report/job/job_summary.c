/* job_summary.c - the reports a job needs across its ranks, by map and
 * reduce: each capture read alone into a summary (map: memory bounded by
 * what one capture's summary holds), summaries merged two at a time
 * (reduce: exact, so in any order and any grouping the same), the reports
 * printed from the whole by the functions that print them from one store.
 * What exactness carries: per kernel name and per range the durations as
 * ascending (value, count) runs (the exact median and the bit-exact
 * standard deviation need every value), per device the union of its busy
 * intervals (two captures may share a device number), the rest as sums;
 * rank_sum's and nccl_sum's parts per process (job_ranks.c). */
#include "job_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "model/groups.h"
#include "model/overview.h"
#include "model/sums.h"
#include "prof/error.h"
#include "prof/saturate.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static int cmp_text(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = true;
	return d;
}

/* ---- groups as runs ------------------------------------------------------- */

static int group_cmp(const struct js_group *a, const struct js_group *b)
{
	int c = cmp_text(a->label, b->label);

	if (c)
		return c;
	if ((c = cmp_text(a->label2, b->label2)))
		return c;
	return (b->key_is_null > a->key_is_null) - (b->key_is_null < a->key_is_null);
}

static int group_qcmp(const void *a, const void *b)
{
	return group_cmp(a, b);
}

static void group_free(struct js_group *g)
{
	free(g->label);
	free(g->label2);
	free(g->runs);
}

/* Ascending runs a and b merged into *out (equal values counted once). */
static int merge_runs(const struct sum_run *a, size_t na, const struct sum_run *b, size_t nb,
		      struct sum_run **out, size_t *nout)
{
	struct sum_run *m = malloc((na + nb ? na + nb : 1) * sizeof *m);
	size_t i = 0, j = 0, n = 0;

	if (!m)
		return PROF_E_NOMEM;
	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].value < b[j].value))
			m[n++] = a[i++];
		else if (i == na || b[j].value < a[i].value)
			m[n++] = b[j++];
		else {
			m[n++] = (struct sum_run){ a[i].value, a[i].count + b[j].count };
			i++;
			j++;
		}
	}
	*out = m;
	*nout = n;
	return 0;
}

struct runs_ctx {
	struct js_groups *gs;
	bool failed;
};

static int take_run(void *ctx, const char *label, const char *label2, bool key_is_null,
		    int64_t key, struct sum_run run)
{
	struct runs_ctx *c = ctx;
	struct js_groups *gs = c->gs;
	struct js_group *g = gs->n ? &gs->g[gs->n - 1] : NULL;

	(void)key;
	/* runs come group by group: a new group when the labels change */
	if (!g || cmp_text(g->label, label) || cmp_text(g->label2, label2) ||
	    g->key_is_null != key_is_null) {
		if (sum_array__grow(&gs->g, &gs->cap, gs->n, sizeof *gs->g))
			return PROF_E_NOMEM;
		g = &gs->g[gs->n++];
		memset(g, 0, sizeof *g);
		g->label = dup_or_null(label, &c->failed);
		g->label2 = dup_or_null(label2, &c->failed);
		g->key_is_null = key_is_null;
		if (c->failed)
			return PROF_E_NOMEM;
	}
	if (sum_array__grow(&g->runs, &g->cap, g->n, sizeof *g->runs))
		return PROF_E_NOMEM;
	g->runs[g->n++] = run;
	return 0;
}

/* Sorted by labels, groups of equal labels made one (a capture whose
 * names were interned twice). */
static int normalise_groups(struct js_groups *gs)
{
	size_t out = 0;

	if (gs->n > 1)
		qsort(gs->g, gs->n, sizeof *gs->g, group_qcmp);
	for (size_t i = 0; i < gs->n; i++) {
		if (out && !group_cmp(&gs->g[out - 1], &gs->g[i])) {
			struct js_group *d = &gs->g[out - 1];
			struct sum_run *m;
			size_t n;

			if (merge_runs(d->runs, d->n, gs->g[i].runs, gs->g[i].n, &m, &n))
				return PROF_E_NOMEM;
			free(d->runs);
			d->runs = m;
			d->n = d->cap = n;
			group_free(&gs->g[i]);
			continue;
		}
		gs->g[out++] = gs->g[i];
	}
	gs->n = out;
	return 0;
}

/* a += b, both sorted; b is emptied. */
static int reduce_groups(struct js_groups *a, struct js_groups *b)
{
	struct js_group *m = malloc((a->n + b->n + 1) * sizeof *m);
	size_t i = 0, j = 0, n = 0;
	int rc = 0;

	if (!m)
		return PROF_E_NOMEM;
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : group_cmp(&a->g[i], &b->g[j]);

		if (c < 0) {
			m[n++] = a->g[i++];
		} else if (c > 0) {
			m[n++] = b->g[j++];
		} else {
			struct sum_run *runs = NULL;
			size_t nr = 0;

			if (!rc)
				rc = merge_runs(a->g[i].runs, a->g[i].n, b->g[j].runs, b->g[j].n, &runs,
						&nr);
			m[n] = a->g[i++];
			if (runs) {
				free(m[n].runs);
				m[n].runs = runs;
				m[n].n = m[n].cap = nr;
			}
			n++;
			group_free(&b->g[j++]);
		}
	}
	free(a->g);
	free(b->g);
	a->g = m;
	a->n = a->cap = n;
	a->rows_left_out += b->rows_left_out;
	memset(b, 0, sizeof *b);
	return rc;
}

static void groups_free(struct js_groups *gs)
{
	for (size_t i = 0; i < gs->n; i++)
		group_free(&gs->g[i]);
	free(gs->g);
	memset(gs, 0, sizeof *gs);
}

/* The sum_groups the summaries print, sorted as they sort them. */
static int to_sum_groups(const struct js_groups *js, struct sum_groups *gs)
{
	bool failed = false;

	memset(gs, 0, sizeof *gs);
	gs->g = calloc(js->n + 1, sizeof *gs->g);
	if (!gs->g)
		return PROF_E_NOMEM;
	gs->cap = js->n + 1;
	gs->rows_left_out = js->rows_left_out;
	for (size_t i = 0; i < js->n; i++) {
		struct sum_group *g = &gs->g[gs->n++];

		g->label = dup_or_null(js->g[i].label, &failed);
		g->label2 = dup_or_null(js->g[i].label2, &failed);
		g->key_is_null = js->g[i].key_is_null;
		sum_group__fold_runs(g, js->g[i].runs, js->g[i].n);
	}
	sum_groups__sort_by_total(gs);
	return failed ? PROF_E_NOMEM : 0;
}

/* ---- busy intervals ------------------------------------------------------- */

static void devices_free(struct job_summary *s)
{
	for (size_t i = 0; i < s->ndev; i++)
		free(s->dev[i].iv);
	free(s->dev);
	s->dev = NULL;
	s->ndev = s->devcap = 0;
}

static int take_interval(void *ctx, int64_t device_id, int64_t start, int64_t end)
{
	struct job_summary *s = ctx;
	struct js_device *d = s->ndev ? &s->dev[s->ndev - 1] : NULL;

	if (!d || d->id != device_id) {
		if (sum_array__grow(&s->dev, &s->devcap, s->ndev, sizeof *s->dev))
			return PROF_E_NOMEM;
		d = &s->dev[s->ndev++];
		memset(d, 0, sizeof *d);
		d->id = device_id;
	}
	if (sum_array__grow(&d->iv, &d->cap, d->n, sizeof *d->iv))
		return PROF_E_NOMEM;
	d->iv[d->n++] = (struct js_interval){ start, end };
	return 0;
}

/* The union of two devices' ascending, disjoint interval lists, joined as
 * the overview joins rows: one that starts at or before the current end
 * extends it. */
static int union_intervals(struct js_device *a, struct js_device *b)
{
	struct js_interval *m = malloc((a->n + b->n + 1) * sizeof *m);
	size_t i = 0, j = 0, n = 0;

	if (!m)
		return PROF_E_NOMEM;
	while (i < a->n || j < b->n) {
		struct js_interval next = j == b->n || (i < a->n && a->iv[i].start <= b->iv[j].start)
						  ? a->iv[i++] : b->iv[j++];

		if (n && next.start <= m[n - 1].end) {
			if (next.end > m[n - 1].end)
				m[n - 1].end = next.end;
		} else {
			m[n++] = next;
		}
	}
	free(a->iv);
	free(b->iv);
	a->iv = m;
	a->n = a->cap = n;
	b->iv = NULL;
	b->n = b->cap = 0;
	return 0;
}

static int reduce_devices(struct job_summary *a, struct job_summary *b)
{
	struct js_device *m = malloc((a->ndev + b->ndev + 1) * sizeof *m);
	size_t i = 0, j = 0, n = 0;
	int rc = 0;

	if (!m)
		return PROF_E_NOMEM;
	while (i < a->ndev || j < b->ndev) {
		if (j == b->ndev || (i < a->ndev && a->dev[i].id < b->dev[j].id)) {
			m[n++] = a->dev[i++];
		} else if (i == a->ndev || b->dev[j].id < a->dev[i].id) {
			m[n++] = b->dev[j++];
		} else {
			if (!rc)
				rc = union_intervals(&a->dev[i], &b->dev[j]);
			free(b->dev[j].iv);
			m[n++] = a->dev[i++];
			j++;
		}
	}
	free(a->dev);
	free(b->dev);
	a->dev = m;
	a->ndev = a->devcap = n;
	b->dev = NULL;
	b->ndev = b->devcap = 0;
	if (b->busy_any) {
		a->busy_first_ns = !a->busy_any || b->busy_first_ns < a->busy_first_ns
					   ? b->busy_first_ns : a->busy_first_ns;
		a->busy_last_ns = !a->busy_any || b->busy_last_ns > a->busy_last_ns
					  ? b->busy_last_ns : a->busy_last_ns;
		a->busy_any = true;
	}
	a->busy_left_out += b->busy_left_out;
	return rc;
}

/* ---- transfers, GPUs ------------------------------------------------------ */

static int transfer_key_cmp(const struct sum_transfer *a, const struct sum_transfer *b)
{
	if (a->copy_kind != b->copy_kind)
		return a->copy_kind < b->copy_kind ? -1 : 1;
	if (a->host_kind_null != b->host_kind_null)
		return a->host_kind_null ? -1 : 1;
	if (!a->host_kind_null && a->host_kind != b->host_kind)
		return a->host_kind < b->host_kind ? -1 : 1;
	return 0;
}

static int transfer_qcmp(const void *a, const void *b)
{
	return transfer_key_cmp(a, b);
}

/* The overview's order: most bytes first, then copy kind and host kind
 * (NULL first), as its SQL orders them. */
static int transfer_show_cmp(const void *pa, const void *pb)
{
	const struct sum_transfer *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return transfer_key_cmp(a, b);
}

static int reduce_transfers(struct job_summary *a, struct job_summary *b)
{
	for (size_t j = 0; j < b->ntr; j++) {
		size_t i = 0;

		while (i < a->ntr && transfer_key_cmp(&a->tr[i], &b->tr[j]))
			i++;
		if (i < a->ntr) {
			a->tr[i].count += b->tr[j].count;
			a->tr[i].bytes = prof_add_saturated(a->tr[i].bytes, b->tr[j].bytes);
			a->tr[i].time_ns = prof_add_saturated(a->tr[i].time_ns, b->tr[j].time_ns);
			continue;
		}
		if (sum_array__grow(&a->tr, &a->trcap, a->ntr, sizeof *a->tr))
			return PROF_E_NOMEM;
		a->tr[a->ntr++] = b->tr[j];
	}
	if (a->ntr > 1)
		qsort(a->tr, a->ntr, sizeof *a->tr, transfer_qcmp);
	a->tr_left_out += b->tr_left_out;
	return 0;
}

static int gpu_qcmp(const void *pa, const void *pb)
{
	const struct js_gpu *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* Each GPU id once, from the first capture that has it (as the merge keeps
 * the first TARGET_INFO_GPU row of an id), by id. */
static int reduce_gpus(struct job_summary *a, struct job_summary *b)
{
	for (size_t j = 0; j < b->ngpus; j++) {
		size_t i = 0;

		while (i < a->ngpus && a->gpus[i].id != b->gpus[j].id)
			i++;
		if (i < a->ngpus) {
			if (b->gpus[j].capture < a->gpus[i].capture) {
				free(a->gpus[i].name);
				a->gpus[i] = b->gpus[j];
			} else {
				free(b->gpus[j].name);
			}
			continue;
		}
		if (sum_array__grow(&a->gpus, &a->gpucap, a->ngpus, sizeof *a->gpus))
			return PROF_E_NOMEM;
		a->gpus[a->ngpus++] = b->gpus[j];
	}
	free(b->gpus);
	b->gpus = NULL;
	b->ngpus = b->gpucap = 0;
	if (a->ngpus > 1)
		qsort(a->gpus, a->ngpus, sizeof *a->gpus, gpu_qcmp);
	return 0;
}

/* ---- map ------------------------------------------------------------------- */

static int64_t offset_at(void *ctx, int64_t t)
{
	return job_time__apply(ctx, t) - t;
}

static int map_gpus(struct prof_store *st, int capture, struct job_summary *s,
		    struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	rc = prof_cursor__open(st, "SELECT id, name FROM " PROF_T_GPU " ORDER BY rowid", &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t id = prof_cursor__int64(c, 0);
		bool seen = false, failed = false;

		for (size_t i = 0; i < s->ngpus && !seen; i++)
			seen = s->gpus[i].id == id;
		if (seen)
			continue;
		if (sum_array__grow(&s->gpus, &s->gpucap, s->ngpus, sizeof *s->gpus))
			rc = nomem(err);
		else
			s->gpus[s->ngpus++] = (struct js_gpu){
				id, dup_or_null(prof_cursor__text(c, 1), &failed), capture };
		if (failed)
			rc = nomem(err);
	}
	if (c)
		prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static void map_session_start(struct prof_store *st, int capture, struct job_summary *s)
{
	struct prof_cursor *c = NULL;
	struct prof_error ignored;

	s->session_capture = -1;
	if (prof_cursor__open(st, "SELECT utcEpochNs FROM " PROF_T_SESSION_START " LIMIT 1", &c,
			      &ignored) < 0)
		return;
	if (prof_cursor__next(c, &ignored) > 0) {
		s->session_capture = capture;
		s->session_null = prof_cursor__is_null(c, 0);
		s->session_start_ns = prof_cursor__int64(c, 0);
	}
	prof_cursor__close(c);
}

/* The overview's and cuda_gpu_kern_sum's parts of capture i. */
static int map_overview(struct prof_store *st, const struct job_plan *p, int i,
			struct job_summary *s, struct prof_error *err)
{
	struct sum_overview transfers = { 0 };
	struct runs_ctx kc = { &s->kernels, false }, rc_ = { &s->ranges, false };
	struct sum_runs_walk kw = { .run = take_run, .ctx = &kc };
	struct sum_runs_walk rw = { .run = take_run, .ctx = &rc_ };
	struct sum_time_move move = { offset_at, &p->maps[i] };
	struct sum_busy_walk bw = { .interval = take_interval, .ctx = s };
	int rc;

	rc = sum_kernel_runs(st, &kw, err);
	s->kernels.rows_left_out = kw.rows_left_out;
	if (rc >= 0)
		rc = sum_nvtx_runs(st, &rw, err);
	s->ranges.rows_left_out = rw.rows_left_out;
	if (rc >= 0 && (normalise_groups(&s->kernels) || normalise_groups(&s->ranges)))
		rc = nomem(err);
	if (rc >= 0)
		rc = sum_busy__walk(st, &move, &bw, err);
	s->busy_first_ns = bw.first_ns;
	s->busy_last_ns = bw.last_ns;
	s->busy_any = bw.any;
	s->busy_left_out = bw.rows_left_out;
	if (rc >= 0)
		rc = sum_overview__load_transfers(st, &transfers, err);
	if (rc >= 0) {
		s->tr = transfers.transfers;
		s->ntr = transfers.ntransfers;
		s->trcap = transfers.transfers_cap;
		s->tr_left_out = transfers.transfers_left_out;
		transfers.transfers = NULL;
		if (s->ntr > 1)
			qsort(s->tr, s->ntr, sizeof *s->tr, transfer_qcmp);
	}
	sum_overview__exit(&transfers);
	if (rc >= 0)
		rc = map_gpus(st, i, s, err);
	if (rc >= 0 && s->ngpus > 1)
		qsort(s->gpus, s->ngpus, sizeof *s->gpus, gpu_qcmp);
	if (rc >= 0)
		map_session_start(st, i, s);
	return rc;
}

int job_summary__map(const struct job_plan *p, int i, struct job_summary *s,
		     struct prof_error *err)
{
	struct prof_store *st = NULL;
	int rc;

	memset(s, 0, sizeof *s);
	s->session_capture = -1;
	s->ranks.link_capture = -1;
	s->mapped = 1;
	rc = prof_store__open_capture(p->c[i].path, &st, err);
	if (rc < 0)
		return rc;
	if (p->parts & (JOB_PART_RANKS | JOB_PART_NCCL))
		rc = js_ranks__map_store(p, i, st, p->parts, &s->ranks, err);
	if (rc >= 0 && (p->parts & JOB_PART_OVERVIEW))
		rc = map_overview(st, p, i, s, err);
	s->dropped = prof_store__counter(st, "dropped_records");
	s->not_written = prof_store__counter(st, "rows_not_written");
	s->gm_samples_dropped = prof_store__counter(st, PROF_COUNTER_GPU_METRIC_SAMPLES_DROPPED);
	if (rc >= 0)
		rc = prof_store__check_read(st, err);
	prof_store__close(st);
	if (rc < 0)
		job_summary__exit(s);
	return rc < 0 ? rc : 0;
}

/* ---- reduce ---------------------------------------------------------------- */

int job_summary__reduce(struct job_summary *a, struct job_summary *b, struct prof_error *err)
{
	int rc = reduce_groups(&a->kernels, &b->kernels);

	if (!rc)
		rc = js_ranks__reduce(&a->ranks, &b->ranks);
	if (!rc)
		rc = reduce_groups(&a->ranges, &b->ranges);
	if (!rc)
		rc = reduce_devices(a, b);
	if (!rc)
		rc = reduce_transfers(a, b);
	if (!rc)
		rc = reduce_gpus(a, b);
	if (!rc && b->session_capture >= 0 &&
	    (a->session_capture < 0 || b->session_capture < a->session_capture)) {
		a->session_capture = b->session_capture;
		a->session_null = b->session_null;
		a->session_start_ns = b->session_start_ns;
	}
	a->dropped += b->dropped;
	a->not_written += b->not_written;
	a->gm_samples_dropped += b->gm_samples_dropped;
	a->mapped += b->mapped;
	job_summary__exit(b);
	return rc ? nomem(err) : 0;
}

void job_summary__exit(struct job_summary *s)
{
	groups_free(&s->kernels);
	groups_free(&s->ranges);
	devices_free(s);
	free(s->tr);
	for (size_t i = 0; i < s->ngpus; i++)
		free(s->gpus[i].name);
	free(s->gpus);
	js_ranks__exit(&s->ranks);
	memset(s, 0, sizeof *s);
	s->session_capture = -1;
	s->ranks.link_capture = -1;
}

/* ---- the reports ----------------------------------------------------------- */

struct meta_ctx {
	struct sum_overview *o;
	bool failed;
};

static int put_meta(void *ctx, const char *key, const char *value)
{
	static const char *const keys[] = { "command", "host", "gpu", "start_ns", "duration_ns",
					    "exit_status" };
	struct meta_ctx *m = ctx;
	char **fields[] = { &m->o->command, &m->o->host, &m->o->gpu, &m->o->start,
			    &m->o->duration, &m->o->exit_status };

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (strcmp(key, keys[i]))
			continue;
		free(*fields[i]);
		*fields[i] = strdup(value);
		if (!*fields[i])
			m->failed = true;
	}
	return 0;
}

int job_summary__overview(const struct job_plan *p, const struct job_summary *s,
			  struct sum_overview *o, struct prof_error *err)
{
	struct meta_ctx m = { o, false };
	int64_t lo = INT64_MIN, hi = INT64_MAX, start_ns, duration_ns;
	int rc = 0;

	memset(o, 0, sizeof *o);
	o->name = strdup(p->name);
	job_meta__write(p, put_meta, &m);
	if (!o->name || m.failed)
		goto nomem;
	o->has_job_time = job_plan__time(p, &o->job_time);
	o->dropped = s->dropped;
	o->not_written = s->not_written;
	o->gm_samples_dropped = s->gm_samples_dropped;
	o->has_session_start = s->session_capture >= 0 && !s->session_null;
	o->session_start_ns = s->session_start_ns;
	/* by id, as the overview lists TARGET_INFO_GPU (each id once) */
	for (size_t i = 0; !o->gpu && i < s->ngpus; i++)
		if (sum_gpu_names__add(&o->gpu_names, s->gpus[i].id, s->gpus[i].name))
			goto nomem;
	if (sum_overview__span(o, &start_ns, &duration_ns)) {
		lo = start_ns;
		hi = prof_add_saturated(start_ns, duration_ns);
	}
	o->busy = calloc(s->ndev + 1, sizeof *o->busy);
	if (!o->busy)
		goto nomem;
	o->busy_cap = s->ndev + 1;
	for (size_t d = 0; d < s->ndev; d++) {
		int64_t ns = 0;

		for (size_t k = 0; k < s->dev[d].n; k++)
			ns = prof_add_saturated(ns, sum_busy__clipped(s->dev[d].iv[k].start,
								     s->dev[d].iv[k].end, lo, hi));
		o->busy[o->nbusy++] = (struct sum_busy_device){ s->dev[d].id, ns };
	}
	o->busy_first_ns = s->busy_first_ns;
	o->busy_last_ns = s->busy_last_ns;
	o->busy_any = s->busy_any;
	o->busy_left_out = s->busy_left_out;
	if (to_sum_groups(&s->kernels, &o->kernels) || to_sum_groups(&s->ranges, &o->ranges))
		goto nomem;
	o->transfers = malloc((s->ntr + 1) * sizeof *o->transfers);
	if (!o->transfers)
		goto nomem;
	memcpy(o->transfers, s->tr, s->ntr * sizeof *s->tr);
	o->ntransfers = o->transfers_cap = s->ntr;
	qsort(o->transfers, o->ntransfers, sizeof *o->transfers, transfer_show_cmp);
	o->transfers_left_out = s->tr_left_out;
	return rc;
nomem:
	sum_overview__exit(o);
	return nomem(err);
}

int job_summary__kern_sum(const struct job_summary *s, struct sum_groups *gs,
			  struct prof_error *err)
{
	return to_sum_groups(&s->kernels, gs) ? nomem(err) : 0;
}
