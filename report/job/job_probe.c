/* job_probe.c - what one capture says of its place in a job: its host, its
 * run metadata, its clock pairs and the processes that did something. Read
 * through the reader, so a file that is no capture gets the reader's one
 * line. */
#include "job_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks/nccl.h"
#include "prof/protocol.h"
#include "prof/saturate.h"
#include "prof/tables.h"
#include "model/ranks.h"
#include "model/sums.h"
#include "prof/error.h"

/* The one text value of sql (NULL when there is no row, or NULL). */
static char *query_text(struct prof_store *s, const char *sql, struct prof_error *err, int *rc)
{
	struct prof_cursor *c = NULL;
	char *v = NULL;

	*rc = prof_cursor__open(s, sql, &c, err);
	if (*rc < 0)
		return NULL;
	*rc = prof_cursor__next(c, err);
	if (*rc > 0 && !prof_cursor__is_null(c, 0)) {
		v = strdup(prof_cursor__text(c, 0));
		if (!v)
			*rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	prof_cursor__close(c);
	if (*rc > 0)
		*rc = 0;
	return v;
}

static bool parse_int64(const char *s, int64_t *out)
{
	char *end;

	if (!s || !*s)
		return false;
	*out = strtoll(s, &end, 10);
	return !*end;
}

/* The host the capture ran on: its processes' (a capture of one perfkit
 * run is of one host), the run's, or an nsys export's. Several hosts: a
 * merged job, whose processes already carry their hosts' bits. */
static int read_host(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	int rc = 0;

	{
		struct prof_cursor *cur = NULL;
		int hosts = 0;

		rc = prof_cursor__open(s, "SELECT DISTINCT host FROM " PROF_T_PROC_INFO
				       " WHERE host IS NOT NULL AND host <> '' ORDER BY host LIMIT 2",
				       &cur, err);
		while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0)
			if (hosts++ == 0 && !(c->host = strdup(prof_cursor__text(cur, 0))))
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		prof_cursor__close(cur);
		if (rc < 0)
			return rc;
		if (hosts > 1)
			return prof_error__set(err, PROF_E_USAGE,
					       "%s: already a job of several hosts; merge the "
					       "captures it was made of instead", c->path);
	}
	if (!c->host)
		c->host = prof_store__meta(s, "host");
	if (!c->host)
		c->host = query_text(s, "SELECT value FROM " PROF_T_SYSTEM_ENV
				     " WHERE name = 'Hostname' LIMIT 1", err, &rc);
	if (rc >= 0 && !c->host && !(c->host = strdup("")))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return rc;
}

static void read_meta(struct prof_store *s, struct job_capture *c)
{
	char *start = prof_store__meta(s, "start_ns"), *duration = prof_store__meta(s, "duration_ns");
	char *pid = prof_store__meta(s, PROF_META_PID);

	c->command = prof_store__meta(s, "command");
	c->gpu = prof_store__meta(s, "gpu");
	c->exit_status = prof_store__meta(s, "exit_status");
	c->trace = prof_store__meta(s, "trace");
	c->python_sampling_hz = prof_store__meta(s, PROF_META_PYTHON_SAMPLING_HZ);
	c->has_span = parse_int64(start, &c->start_ns) && parse_int64(duration, &c->duration_ns) &&
		      c->duration_ns > 0;
	if (!parse_int64(pid, &c->pid) || c->pid < 0)
		c->pid = 0;
	free(start);
	free(duration);
	free(pid);
}

/* An nsys export's span: its analysis from start to stop, in ns after the
 * session's start (ANALYSIS_DETAILS), on the realtime clock by the session
 * start's clock pair. */
static int read_nsys_span(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	int rc;

	if (!c->has_clock_start)
		return 0;
	rc = prof_cursor__open(s, "SELECT min(startTime), max(stopTime) FROM " PROF_T_ANALYSIS_DETAILS
			       " WHERE startTime IS NOT NULL AND stopTime IS NOT NULL", &cur, err);
	if (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0 && !prof_cursor__is_null(cur, 0) &&
	    prof_cursor__int64(cur, 1) >= prof_cursor__int64(cur, 0)) {
		c->ran_from_ns = prof_add_saturated(c->clock_start.realtime_ns, prof_cursor__int64(cur, 0));
		c->ran_to_ns = prof_add_saturated(c->clock_start.realtime_ns, prof_cursor__int64(cur, 1));
		c->has_ran = true;
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* When the capture ran, on its host's realtime clock. */
static int read_ran(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	if (c->has_span) {
		c->ran_from_ns = c->start_ns;
		c->ran_to_ns = prof_add_saturated(c->start_ns, c->duration_ns);
		c->has_ran = true;
	} else if (c->has_clock_start && c->has_clock_end && !c->nsys) {
		c->ran_from_ns = c->clock_start.realtime_ns;
		c->ran_to_ns = c->clock_end.realtime_ns;
		c->has_ran = c->ran_to_ns >= c->ran_from_ns;
	} else if (c->nsys) {
		return read_nsys_span(s, c, err);
	}
	return 0;
}

/* The ranks a launcher gave its processes. */
static int read_ranks(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	size_t cap = 0;
	int rc;

	rc = prof_cursor__open(s, "SELECT DISTINCT rank, worldSize, coalesce(launcher, '') FROM "
			       PROF_T_PROC_INFO " WHERE rank IS NOT NULL ORDER BY rank", &cur, err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		struct job_rank *r;

		if (sum_array__grow(&c->ranks, &cap, (size_t)c->nranks, sizeof *c->ranks)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		r = &c->ranks[c->nranks];
		r->rank = (int)prof_cursor__int64(cur, 0);
		r->world_size = prof_cursor__is_null(cur, 1) ? -1 : (int)prof_cursor__int64(cur, 1);
		r->launcher = strdup(prof_cursor__text(cur, 2));
		if (!r->launcher) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		c->nranks++;
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* The earliest 'start' pair and the latest 'end' pair of its processes
 * (one host's processes share its clocks). An nsys export counts its
 * times from the session's start, which it records on the realtime clock:
 * that is its one pair. */
static int read_clocks(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	static const char *const sql[2] = {
		"SELECT realtimeNs, timestampNs FROM " PROF_T_CLOCKS " WHERE at = 'start'"
		" AND realtimeNs IS NOT NULL AND timestampNs IS NOT NULL ORDER BY timestampNs LIMIT 1",
		"SELECT realtimeNs, timestampNs FROM " PROF_T_CLOCKS " WHERE at = 'end'"
		" AND realtimeNs IS NOT NULL AND timestampNs IS NOT NULL"
		" ORDER BY timestampNs DESC LIMIT 1",
	};
	struct job_clock_pair *pair[2] = { &c->clock_start, &c->clock_end };
	bool *has[2] = { &c->has_clock_start, &c->has_clock_end };
	struct prof_cursor *cur = NULL;
	int rc = 0;

	for (int i = 0; i < 2 && rc >= 0; i++) {
		rc = prof_cursor__open(s, sql[i], &cur, err);
		if (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
			pair[i]->realtime_ns = prof_cursor__int64(cur, 0);
			pair[i]->timestamp_ns = prof_cursor__int64(cur, 1);
			*has[i] = true;
		}
		prof_cursor__close(cur);
		cur = NULL;
	}
	if (rc >= 0 && !c->has_clock_start && c->nsys) {
		rc = prof_cursor__open(s, "SELECT utcEpochNs FROM " PROF_T_SESSION_START
				       " WHERE utcEpochNs IS NOT NULL LIMIT 1", &cur, err);
		if (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
			c->clock_start = (struct job_clock_pair){ prof_cursor__int64(cur, 0), 0 };
			c->has_clock_start = true;
		}
		prof_cursor__close(cur);
	}
	return rc < 0 ? rc : 0;
}

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The processes that left rows, by globalPid without the host bits. A
 * perfkit capture lists exactly those in PROCESSES; an nsys export lists
 * every process of the machine there, so its activity tables say. */
static int read_pids(struct prof_store *s, struct job_capture *c, struct prof_error *err)
{
	const char *sql = c->nsys ?
		"SELECT DISTINCT globalPid AS p FROM " PROF_T_KERNEL
		" UNION SELECT DISTINCT globalPid AS p FROM " PROF_T_MEMCPY
		" UNION SELECT DISTINCT globalPid AS p FROM " PROF_T_MEMSET
		" UNION SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("globalTid") " AS p FROM "
		PROF_T_RUNTIME
		" UNION SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("globalTid") " AS p FROM "
		PROF_T_DRIVER :
		"SELECT globalPid AS p FROM " PROF_T_PROCESSES
		" UNION SELECT globalPid FROM " PROF_T_PROC_INFO;
	struct prof_cursor *cur = NULL;
	size_t cap = 0;
	int rc;

	rc = prof_cursor__open(s, sql, &cur, err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, err)) > 0) {
		int64_t p = prof_cursor__int64(cur, 0) & (((int64_t)1 << PROF_GLOBAL_HOST_SHIFT) - 1);

		if (prof_cursor__is_null(cur, 0) || p == 0)
			continue;
		if (sum_array__grow(&c->pids, &cap, (size_t)c->npids, sizeof *c->pids)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		c->pids[c->npids++] = p;
	}
	prof_cursor__close(cur);
	if (c->npids > 1)
		qsort(c->pids, (size_t)c->npids, sizeof *c->pids, cmp_int64);
	return rc < 0 ? rc : 0;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* What a kernel's name says of it, as one key: kind, reduction, datatype,
 * algorithm and protocol. */
static uint64_t name_hash(const struct nccl_call *k)
{
	uint64_t h = fnv1a(1469598103934665603ULL, nccl_kind__name(k->name.kind));

	h = fnv1a(h, "|");
	h = fnv1a(h, k->name.op);
	h = fnv1a(h, "|");
	h = fnv1a(h, k->name.dtype);
	h = fnv1a(h, "|");
	h = fnv1a(h, k->name.algo);
	h = fnv1a(h, "|");
	return fnv1a(h, k->name.proto);
}

/* A process's count of the kernels of one name seen so far. */
struct name_count {
	int64_t pid;
	uint64_t hash;
	int64_t next;
};

/* The key of call k: its communicator and place (struct nccl_call's seq)
 * where its payload named one, else its kernel's name and place among its
 * process's kernels of that name (the calls come by process, then start). */
static int collective_key(const struct nccl_call *k, struct name_count **counts, size_t *n,
			  size_t *cap, struct job_collective_key *key)
{
	uint64_t h;
	size_t i;

	if (k->comm) {
		*key = (struct job_collective_key){ k->comm, k->seq, JOB_KEY_COMM };
		return 0;
	}
	h = name_hash(k);
	for (i = *n; i > 0 && !((*counts)[i - 1].pid == k->global_pid && (*counts)[i - 1].hash == h); i--)
		;
	if (i == 0) {
		if (sum_array__grow(counts, cap, *n, sizeof **counts))
			return PROF_E_NOMEM;
		(*counts)[(*n)++] = (struct name_count){ k->global_pid, h, 0 };
		i = *n;
	}
	*key = (struct job_collective_key){ h, (*counts)[i - 1].next++, JOB_KEY_NAME };
	return 0;
}

int job_capture__read_collectives(struct job_capture *c, struct prof_error *err)
{
	struct prof_store *s = NULL;
	struct sum_ranks ranks = { 0 };
	struct nccl_calls calls = { 0 };
	struct name_count *counts = NULL;
	size_t cap = 0, ncounts = 0, countcap = 0;
	int rc;

	rc = prof_store__open_capture(c->path, &s, err);
	if (rc < 0)
		return rc;
	rc = sum_ranks__load(s, &ranks, err);
	if (!rc)
		rc = nccl_calls__load(s, &ranks, &calls, err);
	if (!rc)
		rc = prof_store__check_read(s, err);
	for (int i = 0; !rc && i < calls.n; i++) {
		const struct nccl_call *k = &calls.v[i];
		struct job_collective_end *e;

		if (sum_array__grow(&c->nccl, &cap, (size_t)c->nnccl, sizeof *c->nccl)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		e = &c->nccl[c->nnccl];
		e->pid = k->global_pid & (((int64_t)1 << PROF_GLOBAL_HOST_SHIFT) - 1);
		e->end_ns = k->end_ns;
		e->dur_ns = k->end_ns - k->start_ns;
		if (collective_key(k, &counts, &ncounts, &countcap, &e->key)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		/* a kernel whose end precedes its start has no end to match */
		if (k->end_ns >= k->start_ns)
			c->nnccl++;
	}
	free(counts);
	nccl_calls__exit(&calls);
	sum_ranks__exit(&ranks);
	prof_store__close(s);
	return rc < 0 ? rc : 0;
}

int job_capture__probe(const char *path, bool with_pids, struct job_capture *c, struct prof_error *err)
{
	struct prof_store *s = NULL;
	int rc;

	memset(c, 0, sizeof *c);
	c->path = strdup(path);
	if (!c->path)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	/* before it is read: a change during the probe shows later */
	if (prof_file_state__read(path, &c->state, NULL))
		memset(&c->state, 0, sizeof c->state);
	rc = prof_store__open_capture(path, &s, err);
	if (rc < 0)
		return rc;
	/* the job's later reads of it reopen it without this */
	rc = prof_store__check_whole(s, err);
	c->nsys = prof_store__kind(s) == PROF_STORE_NSYS;
	if (rc >= 0)
		rc = read_host(s, c, err);
	if (rc >= 0) {
		read_meta(s, c);
		rc = read_clocks(s, c, err);
	}
	if (rc >= 0)
		rc = read_ran(s, c, err);
	if (rc >= 0)
		rc = read_ranks(s, c, err);
	if (rc >= 0 && with_pids)
		rc = read_pids(s, c, err);
	if (rc >= 0)
		rc = prof_store__check_read(s, err);
	prof_store__close(s);
	return rc < 0 ? rc : 0;
}

void job_capture__exit(struct job_capture *c)
{
	free(c->path);
	free(c->host);
	free(c->command);
	free(c->gpu);
	free(c->exit_status);
	free(c->trace);
	free(c->python_sampling_hz);
	free(c->pids);
	free(c->nccl);
	for (int i = 0; i < c->nranks; i++)
		free(c->ranks[i].launcher);
	free(c->ranks);
	memset(c, 0, sizeof *c);
}

bool job_capture__shares_pid(const struct job_capture *a, const struct job_capture *b)
{
	for (int i = 0, j = 0; i < a->npids && j < b->npids;) {
		if (a->pids[i] == b->pids[j])
			return true;
		if (a->pids[i] < b->pids[j])
			i++;
		else
			j++;
	}
	return false;
}
