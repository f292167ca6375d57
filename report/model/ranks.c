/* ranks.c - the processes of a capture and which of them are ranks: each
 * with its rank, host and GPUs (ranks.h, struct sum_ranks).
 *
 * Where the capture records it (PERFKIT_PROCESS_INFO, written by the
 * collector from the launcher's environment), a rank is the number its
 * launcher gave the process. Elsewhere (nsys exports, captures of earlier
 * perfkits, a program started without a launcher) every process with CUDA
 * work (kernels, copies or memsets) is a rank, numbered in pid order, and a
 * process without (a launcher, a data-loader worker) is not.
 *
 * The model reads the tables that rank_filter.c narrows with every row
 * (prof_store__all_rows), so that it stays the whole capture's while the
 * reports see the chosen ranks'. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranks.h"
#include "prof/tables.h"
#include "prof/error.h"

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static struct sum_process *find_pid(struct sum_ranks *r, int64_t global_pid)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].global_pid == global_pid)
			return &r->p[i];
	return NULL;
}

/* The process of that globalPid, added (not a rank, nothing known) when
 * the model has none yet. NULL when out of memory. */
static struct sum_process *process_at(struct sum_ranks *r, int64_t global_pid, int *cap)
{
	struct sum_process *p = find_pid(r, global_pid);

	if (p)
		return p;
	if (r->n == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		struct sum_process *nv = realloc(r->p, sizeof *nv * (size_t)ncap);

		if (!nv)
			return NULL;
		r->p = nv;
		*cap = ncap;
	}
	p = &r->p[r->n++];
	memset(p, 0, sizeof *p);
	p->global_pid = global_pid;
	p->pid = prof_pid_of(global_pid);
	p->rank = p->world_size = p->local_rank = -1;
	p->selected = true;
	return p;
}

static int set_text(char **dst, const char *src)
{
	if (*dst || !src || !*src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : PROF_E_NOMEM;
}

static int add_gpu(struct sum_process *p, int32_t device_id, const char *uuid)
{
	struct sum_gpu *g;

	for (int i = 0; i < p->ngpus; i++)
		if (p->gpus[i].device_id == device_id)
			return set_text(&p->gpus[i].uuid, uuid);
	g = realloc(p->gpus, sizeof *g * (size_t)(p->ngpus + 1));
	if (!g)
		return PROF_E_NOMEM;
	p->gpus = g;
	g = &p->gpus[p->ngpus++];
	memset(g, 0, sizeof *g);
	g->device_id = device_id;
	return set_text(&g->uuid, uuid);
}

/* fmt with every row of table's canonical form (prof_store__all_rows) for
 * its %s, malloc'd; NULL when out of memory. */
static char *all_rows_sql(struct prof_store *s, const char *fmt, const char *table)
{
	const char *rows = prof_store__all_rows(s, table); /* a table of prof/tables.h: there */
	size_t cap = strlen(fmt) + (rows ? strlen(rows) : 0) + 1;
	char *sql = rows ? malloc(cap) : NULL;

	if (sql)
		snprintf(sql, cap, fmt, rows);
	return sql;
}

/* Run sql, its rows handed to fn. */
static int each_row(struct prof_store *s, const char *sql,
		    int (*fn)(struct sum_ranks *r, struct prof_cursor *c, int *cap), struct sum_ranks *r,
		    int *cap, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1)
		if (fn(r, c, cap)) {
			rc = nomem(err);
			break;
		}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* PERFKIT_PROCESS_INFO: globalPid, host, rank, worldSize, localRank, launcher. */
static int info_row(struct sum_ranks *r, struct prof_cursor *c, int *cap)
{
	struct sum_process *p = process_at(r, prof_cursor__int64(c, 0), cap);

	if (!p)
		return PROF_E_NOMEM;
	if (!prof_cursor__is_null(c, 2) && p->rank < 0) {
		int64_t rank = prof_cursor__int64(c, 2);

		/* a rank that cannot be one (negative, past int) is no rank */
		if (rank >= 0 && rank <= INT32_MAX) {
			p->rank = (int)rank;
			r->from_process_info = true;
		}
	}
	if (!prof_cursor__is_null(c, 3) && prof_cursor__int64(c, 3) > 0 &&
	    prof_cursor__int64(c, 3) <= INT32_MAX)
		p->world_size = (int)prof_cursor__int64(c, 3);
	if (!prof_cursor__is_null(c, 4) && prof_cursor__int64(c, 4) >= 0 &&
	    prof_cursor__int64(c, 4) <= INT32_MAX)
		p->local_rank = (int)prof_cursor__int64(c, 4);
	if (set_text(&p->host, prof_cursor__text(c, 1)) ||
	    set_text(&p->launcher, prof_cursor__text(c, 5)))
		return PROF_E_NOMEM;
	return 0;
}

/* The process of a row's globalPid (column 0), added when new; *p NULL
 * for a row without one: some exports leave a GPU row's process out, and
 * it belongs to no rank. */
static int row_process(struct sum_ranks *r, struct prof_cursor *c, int *cap, struct sum_process **p)
{
	*p = NULL;
	if (prof_cursor__is_null(c, 0) || prof_cursor__int64(c, 0) == 0)
		return 0;
	*p = process_at(r, prof_cursor__int64(c, 0), cap);
	return *p ? 0 : PROF_E_NOMEM;
}

/* GPU work: globalPid, deviceId. */
static int work_row(struct sum_ranks *r, struct prof_cursor *c, int *cap)
{
	struct sum_process *p;
	int rc = row_process(r, c, cap, &p);

	if (rc || !p)
		return rc;
	p->has_cuda = true;
	return prof_cursor__is_null(c, 1) ? 0 : add_gpu(p, (int32_t)prof_cursor__int64(c, 1), NULL);
}

static bool uses_gpu(const struct sum_process *p, int32_t device_id)
{
	for (int i = 0; i < p->ngpus; i++)
		if (p->gpus[i].device_id == device_id)
			return true;
	return false;
}

/* PERFKIT_PROCESS_GPUS: globalPid, deviceId, uuid: every GPU the process
 * saw. A process with GPU work is given the UUIDs of the GPUs it worked on
 * only (a rank of a job sees every GPU of its node and uses one); one
 * without any keeps all it saw. */
static int gpu_row(struct sum_ranks *r, struct prof_cursor *c, int *cap)
{
	struct sum_process *p = process_at(r, prof_cursor__int64(c, 0), cap);
	int32_t device;

	if (!p)
		return PROF_E_NOMEM;
	if (prof_cursor__is_null(c, 1))
		return 0;
	device = (int32_t)prof_cursor__int64(c, 1);
	if (p->has_cuda && !uses_gpu(p, device))
		return 0;
	return add_gpu(p, device, prof_cursor__text(c, 2));
}

/* A process known only by its name or its calls: globalPid, name. */
static int named_row(struct sum_ranks *r, struct prof_cursor *c, int *cap)
{
	struct sum_process *p;
	int rc = row_process(r, c, cap, &p);

	if (rc || !p)
		return rc;
	return set_text(&p->name, prof_cursor__text(c, 1));
}

/* Names of processes the model already has: globalPid, name. */
static int name_row(struct sum_ranks *r, struct prof_cursor *c, int *cap)
{
	struct sum_process *p = find_pid(r, prof_cursor__int64(c, 0));

	(void)cap;
	return p ? set_text(&p->name, prof_cursor__text(c, 1)) : 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct sum_process *x = a, *y = b;

	return (x->global_pid > y->global_pid) - (x->global_pid < y->global_pid);
}

/* Ranks first, in rank order (then pid), then the other processes by pid. */
static int by_rank(const void *a, const void *b)
{
	const struct sum_process *x = a, *y = b;

	if ((x->rank >= 0) != (y->rank >= 0))
		return x->rank >= 0 ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return by_pid(a, b);
}

static int by_device(const void *a, const void *b)
{
	const struct sum_gpu *x = a, *y = b;

	return (x->device_id > y->device_id) - (x->device_id < y->device_id);
}

/* A GPU's name from TARGET_INFO_GPU: by its uuid where both have one (the
 * device ids of a merged job are each process's own), else by id. */
static int name_gpus(struct prof_store *s, struct sum_ranks *r, struct prof_error *err)
{
	const char *sql = "SELECT name FROM " PROF_T_GPU " WHERE (?2 IS NOT NULL AND uuid = ?2)"
			  " OR (?2 IS NULL AND id = ?1) ORDER BY uuid = ?2 DESC LIMIT 1";
	struct prof_cursor *c;
	int rc;

	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	for (int i = 0; i < r->n && rc == 0; i++)
		for (int g = 0; g < r->p[i].ngpus && rc == 0; g++) {
			struct sum_gpu *gpu = &r->p[i].gpus[g];

			prof_cursor__close(c);
			rc = prof_cursor__open(s, sql, &c, err);
			if (rc)
				return rc;
			prof_cursor__bind_int64(c, 1, gpu->device_id);
			prof_cursor__bind_text(c, 2, gpu->uuid);
			rc = prof_cursor__next(c, err);
			if (rc == 1)
				rc = set_text(&gpu->name, prof_cursor__text(c, 0)) ? nomem(err) : 0;
		}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The host of a single-host capture: perfkit's run metadata, nsys's
 * system environment. None for a job merged from several hosts: its
 * metadata names them all ("nid001608, nid008553"), which is no one
 * process's host; its processes that do not record their own (those of
 * nsys exports) have none known. */
static int capture_host(struct prof_store *s, struct sum_ranks *r, char **host, struct prof_error *err)
{
	struct prof_cursor *c;
	char *hosts;
	int rc;

	*host = NULL;
	/* PERFKIT_META's job_hosts, as perfkit merge writes it */
	hosts = prof_store__meta(s, "job_hosts");
	r->several_hosts = hosts && strtol(hosts, NULL, 10) > 1;
	free(hosts);
	if (r->several_hosts)
		return 0;
	*host = prof_store__meta(s, "host");
	if (*host)
		return 0;
	rc = prof_cursor__open(s, "SELECT value FROM " PROF_T_SYSTEM_ENV
			       " WHERE name = 'Hostname' LIMIT 1", &c, err);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc == 1 && prof_cursor__text(c, 0) && !(*host = strdup(prof_cursor__text(c, 0))))
		rc = nomem(err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int read_processes(struct prof_store *s, struct sum_ranks *r, int *cap,
			  struct prof_error *err)
{
	static const char *const gpu_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	char *sql;
	int rc = 0;

	rc = each_row(s, "SELECT globalPid, host, rank, worldSize, localRank, launcher"
		      " FROM " PROF_T_PROC_INFO " ORDER BY rowid", info_row, r, cap, err);
	for (size_t i = 0; rc == 0 && i < 3; i++) {
		sql = all_rows_sql(s, "SELECT globalPid, deviceId FROM (%s) GROUP BY globalPid, deviceId",
				   gpu_tables[i]);
		rc = sql ? each_row(s, sql, work_row, r, cap, err) : nomem(err);
		free(sql);
	}
	if (rc == 0)
		rc = each_row(s, "SELECT globalPid, deviceId, uuid FROM " PROF_T_PROC_GPUS
			      " ORDER BY rowid", gpu_row, r, cap, err);
	if (rc)
		return rc;
	/* perfkit lists the processes it traced; an export every process of
	 * the machine: keep those that called CUDA, and name the ones kept */
	for (size_t i = 0; rc == 0 && prof_store__kind(s) != PROF_STORE_PERFKIT && i < 2; i++) {
		sql = all_rows_sql(s, "SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("globalTid")
				   ", NULL FROM (%s)", api_tables[i]);
		rc = sql ? each_row(s, sql, named_row, r, cap, err) : nomem(err);
		free(sql);
	}
	if (rc == 0) {
		sql = all_rows_sql(s, "SELECT globalPid, name FROM (%s)", PROF_T_PROCESSES);
		rc = sql ? each_row(s, sql,
				    prof_store__kind(s) == PROF_STORE_PERFKIT ? named_row : name_row, r,
				    cap, err)
			 : nomem(err);
		free(sql);
	}
	return rc;
}

/* A launcher's number on a process without CUDA work that another process
 * with CUDA work also carries is not a rank: srun numbers the torchrun
 * agent it starts (SLURM_PROCID 0), and torchrun numbers its workers from
 * 0 too. The worker is the rank; the agent is a process of the job. */
static void unrank_duplicates(struct sum_ranks *r)
{
	for (int i = 0; i < r->n; i++) {
		struct sum_process *p = &r->p[i];

		if (p->rank < 0 || p->has_cuda)
			continue;
		for (int j = 0; j < r->n; j++)
			if (r->p[j].has_cuda && r->p[j].rank == p->rank) {
				p->rank = p->world_size = p->local_rank = -1;
				break;
			}
	}
}

int sum_ranks__read(struct prof_store *s, struct sum_ranks *r, struct prof_error *err)
{
	int cap = 0, rc;

	memset(r, 0, sizeof *r);
	rc = read_processes(s, r, &cap, err);
	if (rc)
		sum_ranks__exit(r);
	return rc;
}

int sum_ranks__number(struct sum_ranks *r, const char *host, struct prof_error *err)
{
	int next = 0;

	/* without numbers from the launcher, a rank is a process with CUDA work */
	if (r->n > 1) /* qsort wants a base even for no elements */
		qsort(r->p, (size_t)r->n, sizeof *r->p, by_pid);
	for (int i = 0; i < r->n; i++) {
		struct sum_process *p = &r->p[i];

		if (!r->from_process_info)
			p->rank = p->has_cuda ? next++ : -1;
		if (!p->host && host && set_text(&p->host, host))
			return nomem(err);
		if (p->ngpus > 1)
			qsort(p->gpus, (size_t)p->ngpus, sizeof *p->gpus, by_device);
	}
	if (r->from_process_info)
		unrank_duplicates(r);
	if (r->n > 1)
		qsort(r->p, (size_t)r->n, sizeof *r->p, by_rank);
	r->nranks = 0;
	for (int i = 0; i < r->n; i++)
		r->nranks += r->p[i].rank >= 0;
	if (!r->from_process_info)
		for (int i = 0; i < r->n; i++)
			if (r->p[i].rank >= 0)
				r->p[i].world_size = r->nranks;
	return 0;
}

/* *dst a copy of src (NULL stays NULL): 0, or -1 out of memory. */
static int copy_text(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -1 : 0;
}

/* A copy of from's model in to, all its own: 0, or -1 out of memory (to
 * then holds what was copied, for sum_ranks__exit). */
static int copy_ranks(const struct sum_ranks *from, struct sum_ranks *to)
{
	*to = *from;
	to->p = calloc((size_t)(from->n ? from->n : 1), sizeof *to->p);
	to->n = 0;
	if (!to->p)
		return -1;
	for (int i = 0; i < from->n; i++) {
		const struct sum_process *a = &from->p[i];
		struct sum_process *b = &to->p[to->n++];

		*b = *a;
		b->host = b->name = b->launcher = NULL;
		b->gpus = NULL;
		b->ngpus = 0;
		if (copy_text(&b->host, a->host) || copy_text(&b->name, a->name) ||
		    copy_text(&b->launcher, a->launcher))
			return -1;
		if (a->ngpus && !(b->gpus = calloc((size_t)a->ngpus, sizeof *b->gpus)))
			return -1;
		for (int g = 0; g < a->ngpus; g++) {
			b->gpus[b->ngpus++].device_id = a->gpus[g].device_id;
			if (copy_text(&b->gpus[g].uuid, a->gpus[g].uuid) || copy_text(&b->gpus[g].name, a->gpus[g].name))
				return -1;
		}
	}
	return 0;
}

static void free_kept(void *kept)
{
	sum_ranks__exit(kept);
	free(kept);
}

/* The model before --rank's choice is marked: every row of the file
 * (prof_store__all_rows) whatever the views show, so that a finished
 * capture's connections read it once (prof_store__shared_take): a job's
 * HTML page loaded it nine times, each a pass over every GPU row. */
static const char model_key;

static int read_model(struct prof_store *s, struct sum_ranks *r, struct prof_error *err)
{
	char *host = NULL;
	int rc = sum_ranks__read(s, r, err);

	if (rc)
		return rc;
	rc = capture_host(s, r, &host, err);
	if (rc == 0)
		rc = sum_ranks__number(r, host, err);
	if (rc == 0)
		rc = name_gpus(s, r, err);
	free(host);
	if (rc)
		sum_ranks__exit(r);
	return rc;
}

int sum_ranks__load(struct prof_store *s, struct sum_ranks *r, struct prof_error *err)
{
	void *kept = NULL;
	int got = prof_store__is_finished(s) ? prof_store__shared_take(s, &model_key, "", 0, &kept) : -1;
	int rc;

	if (got == 1) {
		rc = copy_ranks(kept, r) ? nomem(err) : 0;
	} else {
		rc = read_model(s, r, err);
		if (got == 0) {
			struct sum_ranks *copy = rc == 0 ? malloc(sizeof *copy) : NULL;

			if (copy && copy_ranks(r, copy) == 0) {
				prof_store__shared_give(s, &model_key, "", 0, copy, free_kept);
			} else {
				if (copy)
					free_kept(copy);
				prof_store__shared_drop(s, &model_key, "", 0);
			}
		}
		if (rc)
			return rc;
	}
	if (rc == 0)
		rc = sum_ranks__mark_selected(s, r, err);
	if (rc)
		sum_ranks__exit(r);
	return rc;
}

void sum_ranks__exit(struct sum_ranks *r)
{
	for (int i = 0; i < r->n; i++) {
		struct sum_process *p = &r->p[i];

		for (int g = 0; g < p->ngpus; g++) {
			free(p->gpus[g].uuid);
			free(p->gpus[g].name);
		}
		free(p->gpus);
		free(p->host);
		free(p->name);
		free(p->launcher);
	}
	free(r->p);
	memset(r, 0, sizeof *r);
}

bool sum_ranks__is_job(const struct sum_ranks *r)
{
	int with_cuda = 0;

	for (int i = 0; i < r->n; i++)
		with_cuda += r->p[i].has_cuda;
	return r->nranks > 0 && (with_cuda > 1 || r->from_process_info);
}

bool sum_ranks__may_be_job(struct prof_store *s)
{
	struct prof_cursor *c;
	bool maybe = true;
	char *sql;
	int rc;

	/* an export lists every process of its node: only its GPU work tells */
	if (prof_store__kind(s) != PROF_STORE_PERFKIT)
		return true;
	sql = all_rows_sql(s, "SELECT (SELECT count(*) FROM (%s)) > 1", PROF_T_PROCESSES);
	rc = sql ? prof_cursor__open(s, sql, &c, NULL) : PROF_E_NOMEM;
	free(sql);
	if (rc)
		return true;
	if (prof_cursor__next(c, NULL) == 1)
		maybe = prof_cursor__int64(c, 0) != 0;
	prof_cursor__close(c);
	if (!maybe &&
	    !prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_PROC_INFO " WHERE rank IS NOT NULL",
			       &c, NULL)) {
		if (prof_cursor__next(c, NULL) == 1)
			maybe = prof_cursor__int64(c, 0) > 0;
		prof_cursor__close(c);
	}
	return maybe;
}

const struct sum_process *sum_ranks__process(const struct sum_ranks *r, int64_t global_pid)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].global_pid == global_pid)
			return &r->p[i];
	return NULL;
}

const struct sum_process *sum_ranks__rank(const struct sum_ranks *r, int rank)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].rank == rank)
			return &r->p[i];
	return NULL;
}

/* "GPU 1 (GPU-8c1f2a3b)": the first group of the uuid tells GPUs apart
 * where every process calls its own GPU 0. */
static void gpu_label(const struct sum_gpu *g, char *buf, size_t cap)
{
	const char *u = g->uuid;
	size_t n = 0;

	if (u && strncmp(u, "GPU-", 4) == 0)
		u += 4;
	while (u && u[n] && u[n] != '-' && n < 8)
		n++;
	if (n)
		snprintf(buf, cap, "GPU %" PRId32 " (GPU-%.*s)", g->device_id, (int)n, u);
	else
		snprintf(buf, cap, "GPU %" PRId32, g->device_id);
}

void sum_process__label(const struct sum_process *p, char *buf, size_t cap)
{
	size_t len;

	if (p->rank >= 0)
		len = (size_t)snprintf(buf, cap, "rank %d", p->rank);
	else
		len = (size_t)snprintf(buf, cap, "%s (pid %" PRIu32 ")", p->name ? p->name : "process",
				       p->pid);
	if (len < cap && p->host)
		len += (size_t)snprintf(buf + len, cap - len, " \u00b7 %s", p->host);
	for (int g = 0; g < p->ngpus && len < cap; g++) {
		char gl[64];

		gpu_label(&p->gpus[g], gl, sizeof gl);
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", g ? ", " : " \u00b7 ", gl);
	}
}

void sum_process__rank_name(const struct sum_process *p, char *buf, size_t cap)
{
	if (p->rank >= 0)
		snprintf(buf, cap, "rank %d", p->rank);
	else
		snprintf(buf, cap, "pid %" PRIu32, p->pid);
}
