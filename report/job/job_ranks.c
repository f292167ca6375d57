/* job_ranks.c - rank_sum and nccl_sum of a job by map and reduce: each
 * capture's processes as its rank model reads them (sum_ranks__read), with
 * each one's steps and time split found on its rows alone, as
 * rank_times__load finds each rank's in the merged capture, and its NCCL
 * calls grouped by kind and message size; the job's processes numbered
 * together (sum_ranks__number) once all are in, and the rows printed by
 * the functions that print them of one store (analysis/rank_report.h).
 *
 * Every number of those reports but nccl_sum's waits is a difference of
 * times of one process, which a shift leaves as it is: a capture is read
 * as it lies unless its times move by a rate, and then from a copy of it
 * moved as the merge moves it, so that the job prints the merged capture's
 * bytes. The waits compare the arrivals of one collective on every rank,
 * across captures: each NCCL call's arrival (communicator, place, rank,
 * start and end) is carried on the job's time base, and the collectives
 * are matched once all are in, by nccl_sum__emit as of a merged capture. */
#define _GNU_SOURCE /* asprintf */
#include "job_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/grow.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/sums.h"
#include "model/window.h"
#include "prof/error.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* globalPid as the merge writes it (libprof/src/merge.c): the host index
 * above the pid bits, 0 kept. */
static int64_t job_gpid(const struct prof_merge_map *m, int64_t gpid)
{
	if (m->host_index < 0 || gpid == 0)
		return gpid;
	return (gpid & (((int64_t)1 << PROF_GLOBAL_HOST_SHIFT) - 1)) |
	       ((int64_t)m->host_index << PROF_GLOBAL_HOST_SHIFT);
}

static void process_free(struct js_process *p)
{
	for (int g = 0; g < p->ngpus; g++)
		free(p->gpus[g].uuid);
	free(p->gpus);
	free(p->host);
	rank_time__exit(&p->time);
	nccl_sum__exit(&p->nccl);
}

void js_ranks__exit(struct js_ranks *r)
{
	for (size_t i = 0; i < r->n; i++)
		process_free(&r->p[i]);
	free(r->p);
	memset(r, 0, sizeof *r);
	r->link_capture = -1;
}

static int by_gpid(const void *a, const void *b)
{
	const struct js_process *x = a, *y = b;

	return (x->gpid > y->gpid) - (x->gpid < y->gpid);
}

static void sort(struct js_ranks *r)
{
	if (r->n > 1)
		qsort(r->p, r->n, sizeof *r->p, by_gpid);
}

struct js_process *js_ranks__find(const struct js_ranks *r, int64_t gpid)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->p[mid].gpid < gpid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->p[lo].gpid == gpid ? &r->p[lo] : NULL;
}

static struct js_process *add(struct js_ranks *r, int64_t gpid)
{
	struct js_process *p;

	if (sum_array__grow(&r->p, &r->cap, r->n, sizeof *r->p))
		return NULL;
	p = &r->p[r->n++];
	memset(p, 0, sizeof *p);
	p->gpid = gpid;
	p->launcher_rank = -1;
	return p;
}

/* The capture's processes, on the job's ids. */
static int take_model(const struct sum_ranks *m, const struct prof_merge_map *map, int capture,
		      struct js_ranks *r)
{
	for (int i = 0; i < m->n; i++) {
		const struct sum_process *sp = &m->p[i];
		struct js_process *p = add(r, job_gpid(map, sp->global_pid));

		if (!p)
			return PROF_E_NOMEM;
		p->capture = capture;
		p->local_gpid = sp->global_pid;
		p->in_model = true;
		p->launcher_rank = sp->rank;
		p->has_cuda = sp->has_cuda;
		if (sp->host && !(p->host = strdup(sp->host)))
			return PROF_E_NOMEM;
		p->gpus = sp->ngpus ? calloc((size_t)sp->ngpus, sizeof *p->gpus) : NULL;
		if (sp->ngpus && !p->gpus)
			return PROF_E_NOMEM;
		for (int g = 0; g < sp->ngpus; g++, p->ngpus++) {
			p->gpus[g].device_id = sp->gpus[g].device_id;
			if (sp->gpus[g].uuid && !(p->gpus[g].uuid = strdup(sp->gpus[g].uuid)))
				return PROF_E_NOMEM;
		}
	}
	return 0;
}

/* A window's times as the merge moves them; a time of 0 is none (a
 * capture without records) and stays so. */
static void move_window(const struct prof_merge_map *map, struct sum_window *w)
{
	int64_t *at[] = { &w->zero_ns, &w->capture_start_ns, &w->capture_end_ns, &w->start_ns, &w->end_ns,
			  &w->host_end_ns };

	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
		if (*at[k])
			*at[k] = job_time__apply(map, *at[k]);
}

/* Each process that can be a rank (its launcher numbered it, or it has
 * CUDA work), its time on its rows alone, its window on the job's time
 * base; diagnose's job rules also keep what they read of it (hidden,
 * slowed_ns). A capture of that process alone is read as it is. */
static int map_times(const struct job_plan *plan, struct prof_store *st, const struct sum_ranks *m,
		     const struct prof_merge_map *map, unsigned parts, struct js_ranks *r, bool *alone,
		     struct prof_error *err)
{
	unsigned flags = parts & JOB_PART_DIAGNOSE ? RANK_TIME_JOB : 0;
	int rc = 0;

	*alone = false;
	if (m->n == 1)
		rc = sum_ranks__holds_only(st, m->p[0].global_pid, alone, err);
	for (int i = 0; i < m->n && !rc; i++) {
		const struct sum_process *sp = &m->p[i];
		struct js_process *p;

		if (sp->rank < 0 && !sp->has_cuda)
			continue;
		p = js_ranks__find(r, job_gpid(map, sp->global_pid));
		rc = rank_time__load_process(st, plan->loop, sp->global_pid, flags | (*alone ? RANK_TIME_ALONE : 0),
					     &p->time, err);
		if (!rc) {
			struct rank_time *t = &p->time;

			p->has_time = true;
			/* what rank_sum prints of it and diagnose's job rules read is
			 * kept; its steps are not */
			free(t->steps);
			free(t->step_gpu_start_ns);
			free(t->step_gpu_end_ns);
			t->steps = NULL;
			t->step_gpu_start_ns = t->step_gpu_end_ns = NULL;
			move_window(map, &t->w);
			for (int k = 0; k < t->hidden.n; k++) {
				t->hidden.v[k].start_ns = job_time__apply(map, t->hidden.v[k].start_ns);
				t->hidden.v[k].end_ns = job_time__apply(map, t->hidden.v[k].end_ns);
			}
		}
	}
	return rc;
}

/* What diagnose's header reads of the capture: its first record (where
 * the job's time zero may be), which the loop finder of a capture of one
 * process read already, and its rows with an impossible span. */
static int map_capture(struct prof_store *st, const struct sum_ranks *m, const struct prof_merge_map *map,
		       bool alone, struct js_ranks *r, struct prof_error *err)
{
	const struct js_process *p = alone ? js_ranks__find(r, job_gpid(map, m->p[0].global_pid)) : NULL;
	int rc = 0;

	if (p && p->has_time) {
		/* on the job's time base already (map_times) */
		if (p->time.w.capture_start_ns || p->time.w.capture_end_ns) {
			r->first_ns = p->time.w.capture_start_ns;
			r->has_first = true;
		}
	} else {
		struct sum_capture_time t;

		rc = sum_capture__time(st, &t, err);
		if (rc == 0 && (t.first_ns || t.last_ns)) {
			r->first_ns = job_time__apply(map, t.first_ns);
			r->has_first = true;
		}
	}
	if (rc == 0)
		rc = sum_bad_spans__count(st, &r->bad_rows, err);
	return rc;
}

/* The capture's NCCL calls, each process's by kind and size, on the job's
 * process ids and time base: a collective's waits compare its arrivals on
 * every rank, which other captures hold. */
static int map_nccl(struct prof_store *st, const struct sum_ranks *m,
		    const struct prof_merge_map *map, struct js_ranks *r, struct prof_error *err)
{
	struct nccl_calls c = { 0 };
	int rc = nccl_calls__load(st, m, &c, err);

	for (int i = 0; !rc && i < c.n; i++) {
		struct nccl_call *k = &c.v[i];
		/* as the merge moves a row: its end with its start */
		int64_t by = job_time__apply(map, k->start_ns) - k->start_ns;

		k->start_ns += by;
		k->end_ns += by;
		k->global_pid = job_gpid(map, k->global_pid);
	}
	/* the calls come by process: a slice of them per process */
	for (int i = 0, j; !rc && i < c.n; i = j) {
		int64_t gpid = c.v[i].global_pid;
		struct js_process *p = js_ranks__find(r, gpid);
		struct nccl_calls slice = { 0 };

		for (j = i + 1; j < c.n && c.v[j].global_pid == gpid; j++)
			;
		if (!p) {
			/* kernels of no process (globalPid 0): one entry of their own */
			if (!add(r, gpid))
				rc = nomem(err);
			else
				sort(r);
			p = js_ranks__find(r, gpid);
		}
		slice.v = c.v + i;
		slice.n = j - i;
		if (!rc)
			rc = nccl_sum__add_calls(&p->nccl, &slice, err);
	}
	if (!rc) {
		struct nccl_size_evidence e;

		nccl_calls__size_evidence(st, &c, &e);
		nccl_size_evidence__add(&r->nccl_sizes, &e);
	}
	nccl_calls__exit(&c);
	return rc;
}

int js_ranks__moved_copy(const struct job_plan *p, int i, char **dir, char **path, struct prof_error *err)
{
	const char *base = getenv("TMPDIR");
	struct prof_writer *w = NULL;
	int rc;

	*dir = *path = NULL;
	if (p->maps[i].rate == 0)
		return 0;
	if (!base || !*base)
		base = "/tmp";
	if (asprintf(dir, "%s/perfkit-map-XXXXXX", base) < 0) {
		*dir = NULL;
		return nomem(err);
	}
	if (!mkdtemp(*dir))
		return prof_error__set(err, PROF_E_IO, "cannot make a temporary folder in %s (TMPDIR)",
				       base);
	if (asprintf(path, "%s/capture.sqlite", *dir) < 0) {
		*path = NULL;
		return nomem(err);
	}
	rc = prof_writer__create(*path, 0, &w, err);
	if (!rc)
		rc = prof_writer__merge_mapped(w, p->c[i].path, &p->maps[i], err);
	if (!rc)
		return prof_writer__finish(w, err);
	if (w)
		prof_writer__delete(w);
	return rc;
}

void js_ranks__remove_copy(char *dir, char *path)
{
	static const char *const sides[] = { "", "-journal", "-wal", "-shm" };
	char side[4096];

	for (size_t i = 0; path && i < sizeof sides / sizeof sides[0]; i++) {
		snprintf(side, sizeof side, "%s%s", path, sides[i]);
		unlink(side);
	}
	if (dir)
		rmdir(dir);
	free(path);
	free(dir);
}

int js_ranks__map_store(const struct job_plan *p, int i, struct prof_store *st, unsigned parts,
			struct js_ranks *r, struct prof_error *err)
{
	/* the copy's processes carry their ids in the job already */
	static const struct prof_merge_map as_is = { .host_index = -1 };
	const struct prof_merge_map *map = &p->maps[i];
	struct prof_store *moved = NULL;
	struct sum_ranks m = { 0 };
	char *dir = NULL, *copy = NULL;
	bool alone = false;
	double link;
	int rc = 0;

	memset(r, 0, sizeof *r);
	r->link_capture = -1;
	rc = js_ranks__moved_copy(p, i, &dir, &copy, err);
	if (!rc && copy) {
		map = &as_is;
		rc = prof_store__open_capture(copy, &moved, err);
		st = moved;
	}
	if (!rc)
		rc = sum_ranks__read(st, &m, err);
	if (!rc && take_model(&m, map, i, r))
		rc = nomem(err);
	sort(r);
	if (!rc && (parts & JOB_PART_RANKS))
		rc = map_times(p, st, &m, map, parts, r, &alone, err);
	if (!rc && (parts & JOB_PART_NCCL))
		rc = map_nccl(st, &m, map, r, err);
	if (!rc && (parts & JOB_PART_NCCL) && (link = nccl_link_bytes_per_ns(st)) > 0) {
		r->link_capture = i;
		r->link = link;
	}
	if (!rc && (parts & JOB_PART_DIAGNOSE))
		rc = map_capture(st, &m, map, alone, r, err);
	if (!rc && moved)
		rc = prof_store__check_read(moved, err);
	sum_ranks__exit(&m);
	if (moved)
		prof_store__close(moved);
	js_ranks__remove_copy(dir, copy);
	if (rc)
		js_ranks__exit(r);
	return rc;
}

int js_ranks__reduce(struct js_ranks *a, struct js_ranks *b)
{
	struct js_process *m = malloc((a->n + b->n + 1) * sizeof *m);
	size_t i = 0, j = 0, n = 0;

	if (!m)
		return PROF_E_NOMEM;
	/* both by gpid; ids of different captures differ (0, no process, aside) */
	while (i < a->n || j < b->n)
		m[n++] = j == b->n || (i < a->n && a->p[i].gpid <= b->p[j].gpid) ? a->p[i++] : b->p[j++];
	free(a->p);
	free(b->p);
	a->p = m;
	a->n = a->cap = n;
	nccl_size_evidence__add(&a->nccl_sizes, &b->nccl_sizes);
	if (b->has_first && (!a->has_first || b->first_ns < a->first_ns)) {
		a->first_ns = b->first_ns;
		a->has_first = true;
	}
	a->bad_rows += b->bad_rows;
	if (b->link_capture >= 0 && (a->link_capture < 0 || b->link_capture < a->link_capture)) {
		a->link_capture = b->link_capture;
		a->link = b->link;
	}
	memset(b, 0, sizeof *b);
	b->link_capture = -1;
	return 0;
}

/* ---- the reports ----------------------------------------------------------- */

/* The job's rank model: its processes numbered as the merged capture's
 * are, those PERFKIT_PROCESS_INFO does not place on the job's host, when
 * it has one; of several hosts, those have none known (the merged
 * capture's host names them all, which is no one process's). */
int js_ranks__model(const struct job_plan *plan, const struct js_ranks *r, struct sum_ranks *m,
		    struct prof_error *err)
{
	char *host = plan->nhosts > 1 ? NULL : job_meta__host(plan);
	int rc = 0;

	memset(m, 0, sizeof *m);
	m->several_hosts = plan->nhosts > 1;
	m->p = calloc(r->n + 1, sizeof *m->p);
	if (!m->p) {
		free(host);
		return nomem(err);
	}
	for (size_t i = 0; i < r->n && !rc; i++) {
		const struct js_process *jp = &r->p[i];
		struct sum_process *p;

		if (!jp->in_model)
			continue;
		p = &m->p[m->n++];
		p->global_pid = jp->gpid;
		p->pid = prof_pid_of(jp->gpid);
		p->rank = jp->launcher_rank;
		p->world_size = p->local_rank = -1;
		p->has_cuda = jp->has_cuda;
		p->selected = true;
		m->from_process_info |= jp->launcher_rank >= 0;
		if (jp->host && !(p->host = strdup(jp->host)))
			rc = nomem(err);
		p->gpus = jp->ngpus ? calloc((size_t)jp->ngpus, sizeof *p->gpus) : NULL;
		if (jp->ngpus && !p->gpus)
			rc = nomem(err);
		for (int g = 0; !rc && g < jp->ngpus; g++, p->ngpus++) {
			p->gpus[g].device_id = jp->gpus[g].device_id;
			if (jp->gpus[g].uuid && !(p->gpus[g].uuid = strdup(jp->gpus[g].uuid)))
				rc = nomem(err);
		}
	}
	if (!rc)
		rc = sum_ranks__number(m, host, err);
	free(host);
	if (rc)
		sum_ranks__exit(m);
	return rc;
}

int js_ranks__emit_rank_sum(const struct job_plan *plan, const struct js_ranks *r,
			    struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_ranks m;
	struct rank_times t = { 0 };
	int rc = js_ranks__model(plan, r, &m, err);

	if (rc)
		return rc;
	t.v = calloc((size_t)m.nranks + 1, sizeof *t.v);
	if (!t.v)
		rc = nomem(err);
	/* ranks in rank order, as the model sorts them */
	for (int i = 0; !rc && i < m.n; i++) {
		const struct js_process *jp;
		struct rank_time *rt;

		if (m.p[i].rank < 0)
			continue;
		jp = js_ranks__find(r, m.p[i].global_pid);
		rt = &t.v[t.n++];
		if (jp && jp->has_time)
			*rt = jp->time;
		rt->rank = m.p[i].rank;
		rt->global_pid = m.p[i].global_pid;
		sum_process__label(&m.p[i], rt->label, sizeof rt->label);
	}
	if (!rc)
		rc = rank_sum__emit(&t, sink, err);
	/* the times are the summary's: only the array goes */
	free(t.v);
	sum_ranks__exit(&m);
	return rc;
}

/* An arrival of no process, in the merged capture's order of them. */
struct no_process {
	int64_t start_ns;
	int at;                     /* into the arrivals: capture order among equal starts */
};

static int by_start(const void *a, const void *b)
{
	const struct no_process *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/* The arrivals of kernels of no process (globalPid 0) numbered as the
 * merged capture numbers them: there they are one process's calls, by
 * start, where each capture numbered its own. */
static int renumber_no_process(struct nccl_sum *all, struct prof_error *err)
{
	struct no_process *v = NULL;
	struct nccl_arrival *next = NULL; /* per sequence: its last arrival so far */
	int n = 0, nseq = 0;

	for (int i = 0; i < all->narrivals; i++)
		n += all->arrivals[i].global_pid == 0;
	if (n == 0)
		return 0;
	v = malloc(sizeof *v * (size_t)n);
	next = malloc(sizeof *next * (size_t)n);
	if (!v || !next) {
		free(v);
		free(next);
		return nomem(err);
	}
	n = 0;
	for (int i = 0; i < all->narrivals; i++)
		if (all->arrivals[i].global_pid == 0)
			v[n++] = (struct no_process){ all->arrivals[i].start_ns, i };
	qsort(v, (size_t)n, sizeof *v, by_start);
	/* a communicator's calls, else a kind's, one sequence (nccl.c's number_calls) */
	for (int i = 0; i < n; i++) {
		struct nccl_arrival *a = &all->arrivals[v[i].at];
		int j = nseq - 1;

		while (j >= 0 && !(next[j].comm == a->comm && (a->comm || next[j].kind == a->kind)))
			j--;
		a->seq = j >= 0 ? next[j].seq + 1 : 0;
		if (j < 0)
			j = nseq++;
		next[j] = *a;
	}
	free(v);
	free(next);
	return 0;
}

int js_ranks__arrivals(const struct js_ranks *r, const struct sum_ranks *m, struct nccl_arrival **out,
		       int *n, int *cap, struct prof_error *err)
{
	struct nccl_sum all = { 0 };
	int rc = 0;

	/* by process, as the merged capture's calls come */
	for (size_t i = 0; !rc && i < r->n; i++) {
		const struct js_process *jp = &r->p[i];
		const struct sum_process *sp = jp->in_model ? sum_ranks__process(m, jp->gpid) : NULL;
		int rank = sp ? sp->rank : -1;

		/* each arrival under its rank in the job, for the waits */
		if (jp->nccl.narrivals &&
		    array__grow((void **)&all.arrivals, &all.arrivals_cap,
				all.narrivals + jp->nccl.narrivals, sizeof *all.arrivals)) {
			rc = nomem(err);
			break;
		}
		for (int k = 0; k < jp->nccl.narrivals; k++) {
			all.arrivals[all.narrivals] = jp->nccl.arrivals[k];
			all.arrivals[all.narrivals++].rank = rank;
		}
	}
	if (!rc)
		rc = renumber_no_process(&all, err);
	*out = all.arrivals;
	*n = all.narrivals;
	*cap = all.arrivals_cap;
	return rc;
}

int js_ranks__emit_nccl_sum(const struct job_plan *plan, const struct js_ranks *r,
			    struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_ranks m;
	struct nccl_sum all = { 0 };
	int rc = js_ranks__model(plan, r, &m, err);

	if (rc)
		return rc;
	all.sizes = r->nccl_sizes;
	rc = js_ranks__arrivals(r, &m, &all.arrivals, &all.narrivals, &all.arrivals_cap, err);
	/* by process, as the merged capture's calls come: a group's first call
	 * is that of the first process that has one */
	for (size_t i = 0; !rc && i < r->n; i++) {
		const struct js_process *jp = &r->p[i];
		const struct sum_process *sp = jp->in_model ? sum_ranks__process(&m, jp->gpid) : NULL;
		int rank = sp ? sp->rank : -1;

		all.left_out += jp->nccl.left_out;
		all.unknown += jp->nccl.unknown;
		for (int k = 0; !rc && k < jp->nccl.n; k++) {
			struct nccl_sum_group g = jp->nccl.g[k], *into = NULL;

			for (int x = 0; x < all.n && !into; x++)
				if (all.g[x].kind == g.kind && all.g[x].bucket == g.bucket &&
				    all.g[x].rank == rank)
					into = &all.g[x];
			if (!into) {
				if (all.n == all.cap) {
					int cap = all.cap ? 2 * all.cap : 16;
					struct nccl_sum_group *grown = realloc(all.g, sizeof *grown * (size_t)cap);

					if (!grown) {
						rc = nomem(err);
						break;
					}
					all.g = grown;
					all.cap = cap;
				}
				into = &all.g[all.n++];
				*into = g;
				into->rank = rank;
				into->dur = NULL;
				into->ndur = into->cap = 0;
				into->calls = into->bytes = into->time_ns = 0;
				into->wait_ns = into->transfer_ns = into->waits_known = 0;
				into->comm_ranks = -1;
			}
			/* absorb a copy: the summary keeps its own */
			g.dur = g.ndur ? malloc(sizeof *g.dur * (size_t)g.ndur) : NULL;
			if (g.ndur && !g.dur) {
				rc = nomem(err);
				break;
			}
			if (g.ndur)
				memcpy(g.dur, jp->nccl.g[k].dur, sizeof *g.dur * (size_t)g.ndur);
			g.cap = g.ndur;
			if (nccl_sum_group__absorb(into, &g))
				rc = nomem(err);
		}
	}
	if (!rc)
		rc = nccl_sum__emit(&all, m.nranks, r->link_capture >= 0 ? r->link : 0, sink, err);
	nccl_sum__exit(&all);
	sum_ranks__exit(&m);
	return rc;
}
