/* job_pack.c - a job's summary as bytes and back, for the MPI processes
 * that map their share of the captures and send their summary to the one
 * that reduces them; and a share's probes, which every process gathers to
 * make the job's plan. Host byte order: the processes of one job run one
 * build on one kind of machine. */
#include "job_impl.h"
#include "model/overview.h"
#include "prof/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void put(struct out *o, const void *p, size_t n)
{
	/* an empty array may have no storage at all (p NULL) */
	if (o->failed || !n)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		char *g;

		while (cap < o->len + n)
			cap *= 2;
		g = realloc(o->buf, cap);
		if (!g) {
			o->failed = true;
			return;
		}
		o->buf = g;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void put_i64(struct out *o, int64_t v)
{
	put(o, &v, sizeof v);
}

static void put_str(struct out *o, const char *s)
{
	int64_t n = s ? (int64_t)strlen(s) : -1;

	put_i64(o, n);
	if (s)
		put(o, s, (size_t)n);
}

static void put_groups(struct out *o, const struct js_groups *gs)
{
	put_i64(o, (int64_t)gs->n);
	put_i64(o, gs->rows_left_out);
	for (size_t i = 0; i < gs->n; i++) {
		put_str(o, gs->g[i].label);
		put_str(o, gs->g[i].label2);
		put_i64(o, gs->g[i].key_is_null);
		put_i64(o, (int64_t)gs->g[i].n);
		put(o, gs->g[i].runs, gs->g[i].n * sizeof *gs->g[i].runs);
	}
}

/* A rank's window, field by field (its text whole). */
static void put_window(struct out *o, const struct sum_window *w)
{
	put_i64(o, w->zero_ns);
	put_i64(o, w->capture_start_ns);
	put_i64(o, w->capture_end_ns);
	put_i64(o, w->start_ns);
	put_i64(o, w->end_ns);
	put_i64(o, w->span_ns);
	put_i64(o, w->host_end_ns);
	put_i64(o, w->iterations);
	put_i64(o, w->whole_run);
	put_i64(o, w->mark);
	put_str(o, w->mark_name);
}

static void put_ranks(struct out *o, const struct js_ranks *r)
{
	put_i64(o, (int64_t)r->n);
	for (size_t i = 0; i < r->n; i++) {
		const struct js_process *p = &r->p[i];
		const struct rank_time *t = &p->time;

		put_i64(o, p->gpid);
		put_i64(o, p->launcher_rank);
		put_i64(o, p->has_cuda);
		put_i64(o, p->in_model);
		put_str(o, p->host);
		put_i64(o, p->ngpus);
		for (int g = 0; g < p->ngpus; g++) {
			put_i64(o, p->gpus[g].device_id);
			put_str(o, p->gpus[g].uuid);
		}
		put_i64(o, p->has_time);
		put_i64(o, t->nsteps);
		put_i64(o, t->step_med_ns);
		put_i64(o, t->step_p95_ns);
		put_i64(o, t->window_ns);
		put_i64(o, t->busy_ns);
		put_i64(o, t->compute_ns);
		put_i64(o, t->comm_ns);
		put_i64(o, t->hidden_ns);
		put_i64(o, t->exposed_ns);
		put_i64(o, t->idle_ns);
		put_i64(o, t->kernels);
		put_i64(o, t->rows_left_out);
		put_str(o, t->w.source);
		/* what diagnose's job rules read besides (JOB_PART_DIAGNOSE) */
		put_i64(o, p->capture);
		put_i64(o, p->local_gpid);
		put_window(o, &t->w);
		put_i64(o, t->slowed_ns);
		put_i64(o, t->hidden.n);
		put(o, t->hidden.v, (size_t)t->hidden.n * sizeof *t->hidden.v);
		put_i64(o, p->nccl.n);
		put_i64(o, p->nccl.left_out);
		put_i64(o, p->nccl.unknown);
		put_i64(o, p->nccl.narrivals);
		for (int k = 0; k < p->nccl.n; k++) {
			const struct nccl_sum_group *g = &p->nccl.g[k];

			put_i64(o, g->kind);
			put_i64(o, g->bucket);
			put_i64(o, g->rank);
			put_i64(o, g->calls);
			put_i64(o, g->bytes);
			put_i64(o, g->time_ns);
			put_i64(o, g->comm_ranks);
			put_i64(o, g->bytes_known);
			put_i64(o, g->name.kind);
			put_str(o, g->name.op);
			put_str(o, g->name.dtype);
			put_str(o, g->name.algo);
			put_str(o, g->name.proto);
			put_i64(o, g->ndur);
			put(o, g->dur, (size_t)g->ndur * sizeof *g->dur);
			/* its waits are found by the reduce's end (nccl_sum__emit) */
		}
		for (int k = 0; k < p->nccl.narrivals; k++) {
			const struct nccl_arrival *a = &p->nccl.arrivals[k];

			put_i64(o, (int64_t)a->comm);
			put_i64(o, a->seq);
			put_i64(o, a->global_pid);
			put_i64(o, a->start_ns);
			put_i64(o, a->end_ns);
			put_i64(o, a->bytes);
			put_i64(o, a->rank);
			put_i64(o, a->kind);
			put_i64(o, a->comm_ranks);
		}
	}
	put_i64(o, r->nccl_sizes.no_payload);
	put_i64(o, r->nccl_sizes.unreadable);
	put_i64(o, r->nccl_sizes.without_call);
	put_i64(o, r->nccl_sizes.nvtx);
	put_i64(o, r->link_capture);
	put(o, &r->link, sizeof r->link);
	put_i64(o, r->first_ns);
	put_i64(o, r->has_first);
	put_i64(o, r->bad_rows);
}

int job_summary__pack(const struct job_summary *s, char **buf, size_t *len)
{
	struct out o = { 0 };

	put_groups(&o, &s->kernels);
	put_groups(&o, &s->ranges);
	put_i64(&o, (int64_t)s->ndev);
	for (size_t i = 0; i < s->ndev; i++) {
		put_i64(&o, s->dev[i].id);
		put_i64(&o, (int64_t)s->dev[i].n);
		put(&o, s->dev[i].iv, s->dev[i].n * sizeof *s->dev[i].iv);
	}
	put_i64(&o, s->busy_first_ns);
	put_i64(&o, s->busy_last_ns);
	put_i64(&o, s->busy_left_out);
	put_i64(&o, s->busy_any);
	put_i64(&o, (int64_t)s->ntr);
	/* field by field: a struct's padding is no data */
	for (size_t i = 0; i < s->ntr; i++) {
		put_i64(&o, s->tr[i].copy_kind);
		put_i64(&o, s->tr[i].host_kind);
		put_i64(&o, s->tr[i].host_kind_null);
		put_i64(&o, s->tr[i].count);
		put_i64(&o, s->tr[i].bytes);
		put_i64(&o, s->tr[i].time_ns);
	}
	put_i64(&o, s->tr_left_out);
	put_i64(&o, s->dropped);
	put_i64(&o, s->not_written);
	put_i64(&o, s->gm_samples_dropped);
	put_i64(&o, (int64_t)s->ngpus);
	for (size_t i = 0; i < s->ngpus; i++) {
		put_i64(&o, s->gpus[i].id);
		put_str(&o, s->gpus[i].name);
		put_i64(&o, s->gpus[i].capture);
	}
	put_i64(&o, s->session_capture);
	put_i64(&o, s->session_null);
	put_i64(&o, s->session_start_ns);
	put_i64(&o, s->mapped);
	put_ranks(&o, &s->ranks);
	if (o.failed) {
		free(o.buf);
		return PROF_E_NOMEM;
	}
	*buf = o.buf;
	*len = o.len;
	return 0;
}

struct in {
	const char *p, *end;
	bool bad;
};

static void get(struct in *in, void *dst, size_t n)
{
	if (!n)
		return;
	if (in->bad || (size_t)(in->end - in->p) < n) {
		in->bad = true;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, in->p, n);
	in->p += n;
}

static int64_t get_i64(struct in *in)
{
	int64_t v;

	get(in, &v, sizeof v);
	return v;
}

/* n elements of size, each at least min_bytes of what is left: a count
 * past what the buffer can hold is damage, not an allocation to try */
static void *get_array(struct in *in, int64_t n, size_t size, bool copy)
{
	void *a;

	if (in->bad || n < 0 || (uint64_t)n > (uint64_t)(in->end - in->p) / (size ? size : 1)) {
		in->bad = true;
		return NULL;
	}
	a = malloc((size_t)n * size + 1);
	if (!a) {
		in->bad = true;
		return NULL;
	}
	if (copy)
		get(in, a, (size_t)n * size);
	return a;
}

/* Room for n items of size bytes, zeroed, each of which takes at least
 * min_bytes of the buffer (get_array's check); NULL and in->bad when the
 * count is damage or there is no memory. */
static void *get_items(struct in *in, int64_t n, size_t min_bytes, size_t size)
{
	void *a = get_array(in, n, min_bytes, false);

	if (!a)
		return NULL;
	free(a);
	a = calloc((size_t)n + 1, size);
	in->bad |= !a;
	return a;
}

static char *get_str(struct in *in)
{
	int64_t n = get_i64(in);
	char *s;

	if (n < 0)
		return NULL;
	s = get_array(in, n, 1, true);
	if (s)
		s[n] = '\0';
	return s;
}

static void get_groups(struct in *in, struct js_groups *gs)
{
	int64_t n = get_i64(in);

	gs->rows_left_out = get_i64(in);
	gs->g = get_items(in, n, 4 * sizeof(int64_t), sizeof *gs->g);
	if (!gs->g)
		return;
	gs->cap = (size_t)n + 1;
	for (int64_t i = 0; i < n && !in->bad; i++) {
		struct js_group *g = &gs->g[gs->n++];

		g->label = get_str(in);
		g->label2 = get_str(in);
		g->key_is_null = get_i64(in) != 0;
		g->n = (size_t)get_i64(in);
		g->runs = get_array(in, (int64_t)g->n, sizeof *g->runs, true);
		g->cap = g->n;
		if (!g->runs)
			g->n = g->cap = 0;
	}
}

/* A string into a fixed field of cap bytes (cut to fit). */
static void get_text(struct in *in, char *dst, size_t cap)
{
	char *s = get_str(in);

	snprintf(dst, cap, "%s", s ? s : "");
	free(s);
}

static void get_nccl(struct in *in, struct nccl_sum *ns)
{
	int64_t n = get_i64(in), narrivals;

	ns->left_out = get_i64(in);
	ns->unknown = get_i64(in);
	narrivals = get_i64(in);
	/* the smallest group is 10 numbers and 4 strings' lengths */
	ns->g = get_items(in, n, 14 * sizeof(int64_t), sizeof *ns->g);
	if (!ns->g)
		return;
	ns->cap = (int)n + 1;
	for (int64_t k = 0; k < n && !in->bad; k++) {
		struct nccl_sum_group *g = &ns->g[ns->n++];

		g->kind = (enum nccl_kind)get_i64(in);
		g->bucket = (int)get_i64(in);
		g->rank = (int)get_i64(in);
		g->calls = get_i64(in);
		g->bytes = get_i64(in);
		g->time_ns = get_i64(in);
		g->comm_ranks = (int)get_i64(in);
		g->bytes_known = get_i64(in) != 0;
		g->name.kind = (enum nccl_kind)get_i64(in);
		get_text(in, g->name.op, sizeof g->name.op);
		get_text(in, g->name.dtype, sizeof g->name.dtype);
		get_text(in, g->name.algo, sizeof g->name.algo);
		get_text(in, g->name.proto, sizeof g->name.proto);
		g->ndur = (int)get_i64(in);
		g->dur = get_array(in, g->ndur, sizeof *g->dur, true);
		g->cap = g->ndur;
		if (!g->dur)
			g->ndur = g->cap = 0;
	}
	/* an arrival is 9 numbers */
	ns->arrivals = get_items(in, narrivals, 9 * sizeof(int64_t), sizeof *ns->arrivals);
	if (!ns->arrivals)
		return;
	ns->arrivals_cap = (int)narrivals + 1;
	for (int64_t k = 0; k < narrivals && !in->bad; k++) {
		struct nccl_arrival *a = &ns->arrivals[ns->narrivals++];

		a->comm = (uint64_t)get_i64(in);
		a->seq = get_i64(in);
		a->global_pid = get_i64(in);
		a->start_ns = get_i64(in);
		a->end_ns = get_i64(in);
		a->bytes = get_i64(in);
		a->rank = (int32_t)get_i64(in);
		a->kind = (int32_t)get_i64(in);
		a->comm_ranks = (int32_t)get_i64(in);
	}
}

static void get_window(struct in *in, struct sum_window *w)
{
	w->zero_ns = get_i64(in);
	w->capture_start_ns = get_i64(in);
	w->capture_end_ns = get_i64(in);
	w->start_ns = get_i64(in);
	w->end_ns = get_i64(in);
	w->span_ns = get_i64(in);
	w->host_end_ns = get_i64(in);
	w->iterations = (int)get_i64(in);
	w->whole_run = get_i64(in) != 0;
	w->mark = (enum sum_loop_mark)get_i64(in);
	get_text(in, w->mark_name, sizeof w->mark_name);
}

static void get_ranks(struct in *in, struct js_ranks *r)
{
	int64_t n = get_i64(in);

	r->link_capture = -1;
	/* the smallest process is 36 numbers and 3 strings' lengths */
	r->p = get_items(in, n, 39 * sizeof(int64_t), sizeof *r->p);
	if (!r->p)
		return;
	r->cap = (size_t)n + 1;
	for (int64_t i = 0; i < n && !in->bad; i++) {
		struct js_process *p = &r->p[r->n++];
		struct rank_time *t = &p->time;
		int64_t ngpus;

		p->gpid = get_i64(in);
		p->launcher_rank = (int)get_i64(in);
		p->has_cuda = get_i64(in) != 0;
		p->in_model = get_i64(in) != 0;
		p->host = get_str(in);
		ngpus = get_i64(in);
		p->gpus = get_items(in, ngpus, 2 * sizeof(int64_t), sizeof *p->gpus);
		for (int64_t g = 0; p->gpus && g < ngpus && !in->bad; g++, p->ngpus++) {
			p->gpus[g].device_id = (int32_t)get_i64(in);
			p->gpus[g].uuid = get_str(in);
		}
		p->has_time = get_i64(in) != 0;
		t->nsteps = (int)get_i64(in);
		t->step_med_ns = get_i64(in);
		t->step_p95_ns = get_i64(in);
		t->window_ns = get_i64(in);
		t->busy_ns = get_i64(in);
		t->compute_ns = get_i64(in);
		t->comm_ns = get_i64(in);
		t->hidden_ns = get_i64(in);
		t->exposed_ns = get_i64(in);
		t->idle_ns = get_i64(in);
		t->kernels = get_i64(in);
		t->rows_left_out = get_i64(in);
		get_text(in, t->w.source, sizeof t->w.source);
		p->capture = (int)get_i64(in);
		p->local_gpid = get_i64(in);
		get_window(in, &t->w);
		t->slowed_ns = get_i64(in);
		t->hidden.n = (int)get_i64(in);
		t->hidden.v = get_array(in, t->hidden.n, sizeof *t->hidden.v, true);
		t->hidden.cap = t->hidden.n;
		if (!t->hidden.v)
			t->hidden.n = t->hidden.cap = 0;
		get_nccl(in, &p->nccl);
	}
	r->nccl_sizes.no_payload = get_i64(in);
	r->nccl_sizes.unreadable = get_i64(in);
	r->nccl_sizes.without_call = get_i64(in);
	r->nccl_sizes.nvtx = get_i64(in) != 0;
	r->link_capture = (int)get_i64(in);
	get(in, &r->link, sizeof r->link);
	r->first_ns = get_i64(in);
	r->has_first = get_i64(in) != 0;
	r->bad_rows = get_i64(in);
}

int job_summary__unpack(const char *buf, size_t len, struct job_summary *s)
{
	struct in in = { buf, buf + len, false };
	int64_t n;

	memset(s, 0, sizeof *s);
	get_groups(&in, &s->kernels);
	get_groups(&in, &s->ranges);
	n = get_i64(&in);
	s->dev = get_items(&in, n, 2 * sizeof(int64_t), sizeof *s->dev);
	s->devcap = s->dev ? (size_t)n + 1 : 0;
	for (int64_t i = 0; s->dev && i < n && !in.bad; i++) {
		struct js_device *d = &s->dev[s->ndev++];

		d->id = get_i64(&in);
		d->n = (size_t)get_i64(&in);
		d->iv = get_array(&in, (int64_t)d->n, sizeof *d->iv, true);
		d->cap = d->n;
		if (!d->iv)
			d->n = d->cap = 0;
	}
	s->busy_first_ns = get_i64(&in);
	s->busy_last_ns = get_i64(&in);
	s->busy_left_out = get_i64(&in);
	s->busy_any = get_i64(&in) != 0;
	n = get_i64(&in);
	s->tr = get_items(&in, n, 6 * sizeof(int64_t), sizeof *s->tr);
	for (int64_t i = 0; s->tr && i < n && !in.bad; i++) {
		struct sum_transfer *t = &s->tr[s->ntr++];

		t->copy_kind = get_i64(&in);
		t->host_kind = get_i64(&in);
		t->host_kind_null = get_i64(&in) != 0;
		t->count = get_i64(&in);
		t->bytes = get_i64(&in);
		t->time_ns = get_i64(&in);
	}
	s->trcap = s->ntr;
	s->tr_left_out = get_i64(&in);
	s->dropped = get_i64(&in);
	s->not_written = get_i64(&in);
	s->gm_samples_dropped = get_i64(&in);
	n = get_i64(&in);
	s->gpus = get_items(&in, n, 3 * sizeof(int64_t), sizeof *s->gpus);
	for (int64_t i = 0; s->gpus && i < n && !in.bad; i++) {
		struct js_gpu *g = &s->gpus[s->ngpus++];

		g->id = get_i64(&in);
		g->name = get_str(&in);
		g->capture = (int)get_i64(&in);
	}
	s->gpucap = s->ngpus;
	s->session_capture = (int)get_i64(&in);
	s->session_null = get_i64(&in) != 0;
	s->session_start_ns = get_i64(&in);
	s->mapped = (int)get_i64(&in);
	get_ranks(&in, &s->ranks);
	if (in.bad || in.p != in.end) {
		job_summary__exit(s);
		return PROF_E_CORRUPT;
	}
	return 0;
}

/* ---- a share's probes ------------------------------------------------------- */

static void put_probe(struct out *o, const struct job_capture *c)
{
	put_str(o, c->host);
	put_i64(o, c->nsys);
	put_str(o, c->command);
	put_str(o, c->gpu);
	put_str(o, c->exit_status);
	put_str(o, c->trace);
	put_str(o, c->python_sampling_hz);
	put_i64(o, c->start_ns);
	put_i64(o, c->duration_ns);
	put_i64(o, c->has_span);
	put_i64(o, c->pid);
	put_i64(o, c->ran_from_ns);
	put_i64(o, c->ran_to_ns);
	put_i64(o, c->has_ran);
	put_i64(o, c->nranks);
	for (int k = 0; k < c->nranks; k++) {
		put_i64(o, c->ranks[k].rank);
		put_i64(o, c->ranks[k].world_size);
		put_str(o, c->ranks[k].launcher);
	}
	put_i64(o, c->clock_start.realtime_ns);
	put_i64(o, c->clock_start.timestamp_ns);
	put_i64(o, c->clock_end.realtime_ns);
	put_i64(o, c->clock_end.timestamp_ns);
	put_i64(o, c->has_clock_start);
	put_i64(o, c->has_clock_end);
	put_i64(o, c->npids);
	put(o, c->pids, (size_t)c->npids * sizeof *c->pids);
}

static void put_collectives(struct out *o, const struct job_capture *c)
{
	put_i64(o, c->nnccl);
	for (int k = 0; k < c->nnccl; k++) {
		const struct job_collective_end *e = &c->nccl[k];

		put_i64(o, (int64_t)e->key.hash);
		put_i64(o, e->key.seq);
		put_i64(o, e->key.space);
		put_i64(o, e->pid);
		put_i64(o, e->end_ns);
		put_i64(o, e->dur_ns);
	}
}

int job_share__pack(const struct job_plan *p, int rank, int size, enum job_probe_part part, int failed,
		    int rc, const struct prof_error *err, char **buf, size_t *len)
{
	struct out o = { 0 };

	put_i64(&o, failed);
	if (failed >= 0) {
		put_i64(&o, rc);
		put_i64(&o, err->code);
		put_str(&o, err->msg);
	}
	for (int i = rank; i < p->n && failed < 0; i += size) {
		if (part == JOB_PROBE_META)
			put_probe(&o, &p->c[i]);
		else
			put_collectives(&o, &p->c[i]);
	}
	if (o.failed) {
		free(o.buf);
		return PROF_E_NOMEM;
	}
	*buf = o.buf;
	*len = o.len;
	return 0;
}

static void get_probe(struct in *in, struct job_capture *c)
{
	int64_t n;

	c->host = get_str(in);
	in->bad |= !c->host;
	c->nsys = get_i64(in) != 0;
	c->command = get_str(in);
	c->gpu = get_str(in);
	c->exit_status = get_str(in);
	c->trace = get_str(in);
	c->python_sampling_hz = get_str(in);
	c->start_ns = get_i64(in);
	c->duration_ns = get_i64(in);
	c->has_span = get_i64(in) != 0;
	c->pid = get_i64(in);
	c->ran_from_ns = get_i64(in);
	c->ran_to_ns = get_i64(in);
	c->has_ran = get_i64(in) != 0;
	n = get_i64(in);
	/* a rank is 2 numbers and its launcher's length */
	c->ranks = get_items(in, n, 3 * sizeof(int64_t), sizeof *c->ranks);
	for (int64_t k = 0; c->ranks && k < n && !in->bad; k++, c->nranks++) {
		c->ranks[k].rank = (int)get_i64(in);
		c->ranks[k].world_size = (int)get_i64(in);
		c->ranks[k].launcher = get_str(in);
		in->bad |= !c->ranks[k].launcher;
	}
	c->clock_start.realtime_ns = get_i64(in);
	c->clock_start.timestamp_ns = get_i64(in);
	c->clock_end.realtime_ns = get_i64(in);
	c->clock_end.timestamp_ns = get_i64(in);
	c->has_clock_start = get_i64(in) != 0;
	c->has_clock_end = get_i64(in) != 0;
	n = get_i64(in);
	c->pids = get_array(in, n, sizeof *c->pids, true);
	c->npids = c->pids ? (int)n : 0;
}

static void get_collectives(struct in *in, struct job_capture *c)
{
	int64_t n = get_i64(in);

	/* an end is 6 numbers */
	c->nccl = get_items(in, n, 6 * sizeof(int64_t), sizeof *c->nccl);
	for (int64_t k = 0; c->nccl && k < n && !in->bad; k++, c->nnccl++) {
		struct job_collective_end *e = &c->nccl[k];

		e->key.hash = (uint64_t)get_i64(in);
		e->key.seq = get_i64(in);
		e->key.space = (uint8_t)get_i64(in);
		e->pid = get_i64(in);
		e->end_ns = get_i64(in);
		e->dur_ns = get_i64(in);
	}
}

int job_share__unpack(struct job_plan *p, int rank, int size, enum job_probe_part part, const char *buf,
		      size_t len, int *failed, int *rc, struct prof_error *err)
{
	struct in in = { buf, buf + len, false };

	*failed = (int)get_i64(&in);
	if (*failed >= 0) {
		*rc = (int)get_i64(&in);
		err->code = (int)get_i64(&in);
		get_text(&in, err->msg, sizeof err->msg);
	}
	if (!p) /* whether the share failed, and how: all that is read */
		return in.bad ? PROF_E_CORRUPT : 0;
	for (int i = rank; i < p->n && *failed < 0 && !in.bad; i += size) {
		if (part == JOB_PROBE_META)
			get_probe(&in, &p->c[i]);
		else
			get_collectives(&in, &p->c[i]);
	}
	if (in.bad || in.p != in.end) {
		*failed = -1;
		return PROF_E_CORRUPT;
	}
	return 0;
}
