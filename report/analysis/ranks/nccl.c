/* nccl.c - NCCL kernels matched to their calls, and calls across ranks to
 * their collectives (nccl.h).
 *
 * Two passes over the store, memory proportional to the NCCL kernels: the
 * kernels with their launching call (one join by correlation id), sorted
 * by launching thread and time; then the NCCL ranges in (thread, start)
 * order, the order of NVTX's (globalTid, start) index, walked beside the
 * launches with a stack of the ranges open on the thread: a launch's call
 * is the innermost NCCL range open when it ran. Payloads are decoded as
 * their range goes by, communicators' sizes noted from their init calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "job_judge.h"
#include "nccl.h"
#include "prof/nvtx_payload.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "prof/error.h"
#include "prof/tables.h"
#include "prof/saturate.h"

#define MAX_OPEN 64      /* NCCL ranges open on one thread at once (they nest shallowly) */
#define MAX_GROUP 256    /* calls of one ncclGroupStart/End remembered */

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* ---- kernels and their launches --------------------------------------- */

struct launch {
	int64_t tid, at_ns;
	int call; /* index into the calls */
};

/* The NCCL kernels into out, and the thread of each one's launching call
 * into *tids (-1: the call is not in the capture). */
static int load_kernels(struct prof_store *s, const struct sum_ranks *ranks, struct nccl_calls *out,
			int64_t **tids, struct prof_error *err)
{
	int cap_tids = 0;
	/* one row per kernel: the earliest call that launched it (an export
	 * may hold a call twice, a runtime call the driver call inside it) */
	static const char sql[] =
		"SELECT k.globalPid, k.start, k.end, k.deviceId, k.streamId, s.value,"
		" coalesce(min(r.globalTid), min(d.globalTid)) AS tid,"
		" coalesce(min(r.start), min(d.start)) AS launch FROM " PROF_T_KERNEL " k JOIN "
		PROF_T_STRINGS " s ON s.id = " PROF_SQL_KERNEL_NAME_ID("k.")
		" LEFT JOIN " PROF_T_RUNTIME " r ON " SUM_LAUNCHED_BY("k", "r")
		" LEFT JOIN " PROF_T_DRIVER " d ON " SUM_LAUNCHED_BY("k", "d")
		" WHERE " NCCL_KERNEL_SQL("k") " GROUP BY k.rowid ORDER BY k.globalPid, k.start";
	struct prof_cursor *c;
	int rc;

	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		struct nccl_call *k;
		const struct sum_process *p;

		if (array__grow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v) ||
		    array__grow((void **)tids, &cap_tids, out->n + 1, sizeof **tids)) {
			rc = nomem(err);
			break;
		}
		(*tids)[out->n] = prof_cursor__is_null(c, 6) ? -1 : prof_cursor__int64(c, 6);
		k = &out->v[out->n++];
		memset(k, 0, sizeof *k);
		k->global_pid = prof_cursor__int64(c, 0);
		p = sum_ranks__process(ranks, k->global_pid);
		k->rank = p ? p->rank : -1;
		k->start_ns = prof_cursor__int64(c, 1);
		k->end_ns = prof_cursor__int64(c, 2);
		k->device_id = (int32_t)prof_cursor__int64(c, 3);
		k->stream_id = (int32_t)prof_cursor__int64(c, 4);
		nccl_kernel__parse(prof_cursor__text(c, 5), &k->name);
		k->kind = k->name.kind;
		k->launch_ns = prof_cursor__is_null(c, 7) ? -1 : prof_cursor__int64(c, 7);
		k->call_start_ns = k->call_end_ns = -1;
		k->bytes = -1;
		k->comm_ranks = k->comm_rank = k->peer = k->root = -1;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->at_ns > y->at_ns) - (x->at_ns < y->at_ns);
}

/* ---- the NCCL domain ------------------------------------------------------ */

struct domain_id {
	int64_t pid, domain;
};

struct domains {
	struct domain_id *v;
	int n, cap;
};

/* (process, domain id) of every NVTX domain named "NCCL": domain ids are
 * each process's own (nsys numbers them; perfkit's are string ids of the
 * file the process wrote). */
static int load_domains(struct prof_store *s, struct domains *d, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	rc = prof_cursor__open(s, "SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("n.globalTid")
			       ", n.domainId FROM "
			       PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId"
			       " WHERE n.eventType = " PROF_SQL_NVTX_DOMAIN_CREATE
			       " AND coalesce(n.text, s.value) = 'NCCL'", &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (array__grow((void **)&d->v, &d->cap, d->n + 1, sizeof *d->v)) {
			rc = nomem(err);
			break;
		}
		d->v[d->n].pid = prof_cursor__int64(c, 0);
		d->v[d->n++].domain = prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Whether a range named nccl... of that process and domain is NCCL's:
 * its domain is named NCCL, or the process names no domain NCCL (a
 * capture without domain rows) and the name is all there is to go by. */
static bool is_nccl_range(const struct domains *d, int64_t pid, int64_t domain)
{
	bool process_known = false;

	for (int i = 0; i < d->n; i++) {
		if (d->v[i].pid != pid)
			continue;
		if (d->v[i].domain == domain)
			return true;
		process_known = true;
	}
	return !process_known;
}

/* ---- the walk ------------------------------------------------------------- */

/* What one NCCL API call said. */
struct call_info {
	enum nccl_kind kind;
	bool has_payload, is_group_start, is_group_end, is_recv;
	int64_t start_ns, end_ns;
	int64_t bytes;
	uint64_t comm;
	int peer, root;
	char op[16];
};

struct comm_info {
	int64_t pid;
	uint64_t comm;
	int nranks, rank;
};

struct walk {
	struct prof_store *s;
	struct nccl_calls *out;
	struct prof_payload_schemas *schemas;
	struct domains domains;
	struct launch *launches;
	int nlaunches, next;        /* launches in (thread, time) order; the next to place */
	int64_t tid;                /* the thread whose ranges are open */
	struct call_info open[MAX_OPEN];
	int nopen;
	struct call_info group[MAX_GROUP]; /* the calls of the open group */
	int ngroup, group_depth;
	struct comm_info *comms;
	int ncomms, cap_comms;
	struct prof_error *err;
};

static int64_t field_int(const struct prof_payload *p, const char *name, int64_t missing)
{
	int64_t v;

	return prof_payload_field__int(prof_payload__find(p, name), &v) ? v : missing;
}

/* A communicator id: a 64-bit hash, as often past INT64_MAX as not. */
static uint64_t field_id(const struct prof_payload *p, const char *name)
{
	const struct prof_payload_field *f = prof_payload__find(p, name);

	if (f && f->kind == PROF_PAYLOAD_UINT)
		return f->u;
	return (uint64_t)field_int(p, name, 0);
}

static int note_comm(struct walk *w, int64_t pid, uint64_t comm, int64_t nranks, int64_t rank)
{
	if (!comm || nranks < 1 || nranks > INT32_MAX)
		return 0;
	for (int i = 0; i < w->ncomms; i++)
		if (w->comms[i].pid == pid && w->comms[i].comm == comm)
			return 0;
	if (array__grow((void **)&w->comms, &w->cap_comms, w->ncomms + 1, sizeof *w->comms))
		return PROF_E_NOMEM;
	w->comms[w->ncomms++] = (struct comm_info){ pid, comm, (int)nranks,
						     rank >= 0 && rank < nranks ? (int)rank : -1 };
	return 0;
}

/* The range row of c as a call: its name's kind, its payload's fields. */
static int read_call(struct walk *w, struct prof_cursor *c, struct call_info *ci)
{
	const char *name = prof_cursor__text(c, 3);
	int64_t pid = prof_global_pid_of_tid(prof_cursor__int64(c, 0));
	struct prof_payload p;
	struct prof_error perr = { 0 };
	const void *blob;
	size_t len;
	int rc;

	memset(ci, 0, sizeof *ci);
	ci->start_ns = prof_cursor__int64(c, 1);
	ci->end_ns = prof_cursor__int64(c, 2);
	ci->kind = nccl_call__kind(name);
	ci->is_group_start = name && strcmp(name, "ncclGroupStart") == 0;
	ci->is_group_end = name && strcmp(name, "ncclGroupEnd") == 0;
	ci->is_recv = name && strcmp(name, "ncclRecv") == 0;
	ci->bytes = -1;
	ci->peer = ci->root = -1;
	blob = prof_cursor__columns(c) > 5 ? prof_cursor__blob(c, 5, &len) : NULL;
	if (!blob)
		return 0;
	rc = prof_payload__decode(w->schemas, pid, blob, len, &p, &perr);
	if (rc == PROF_E_NOMEM) {
		prof_payload__exit(&p);
		return nomem(w->err);
	}
	if (rc != 0) {
		w->out->payloads_unreadable++;
		prof_payload__exit(&p);
		return 0;
	}
	ci->has_payload = true;
	ci->bytes = field_int(&p, "Message size [bytes]", -1);
	ci->comm = field_id(&p, "NCCL communicator ID");
	ci->peer = (int)field_int(&p, "Peer rank", -1);
	ci->root = (int)field_int(&p, "Root", -1);
	{
		const struct prof_payload_field *op = prof_payload__find(&p, "Reduction operation");

		if (op && op->text)
			snprintf(ci->op, sizeof ci->op, "%s", op->text);
		else if (op && op->kind != PROF_PAYLOAD_UNDECODED)
			snprintf(ci->op, sizeof ci->op, "%llu", (unsigned long long)op->u);
	}
	/* ncclCommInitRank, ...Config, ...Scalable, ncclCommSplit */
	if (name && strncmp(name, "ncclComm", 8) == 0)
		rc = note_comm(w, pid, ci->comm, field_int(&p, "No. of ranks", -1),
			       field_int(&p, "Rank", -1));
	prof_payload__exit(&p);
	return rc ? nomem(w->err) : 0;
}

/* The group's calls as one, for a kernel of that kind (unknown: any): the
 * first call's, with the bytes of all of them (a send/recv kernel: the
 * bytes sent, as nccl-tests counts them, else those received). */
static void group_call(const struct walk *w, enum nccl_kind kind, struct call_info *ci, int *ncalls)
{
	bool any_send = false;

	*ncalls = 0;
	for (int i = 0; i < w->ngroup; i++)
		any_send |= w->group[i].kind == NCCL_SEND_RECV && !w->group[i].is_recv;
	for (int i = 0; i < w->ngroup; i++) {
		const struct call_info *g = &w->group[i];

		if (g->kind == NCCL_KIND_UNKNOWN || (kind && g->kind != kind))
			continue;
		if ((*ncalls)++ == 0) {
			*ci = *g;
			ci->bytes = -1;
		}
		if (g->kind == NCCL_SEND_RECV && g->is_recv == any_send)
			continue;
		if (g->bytes < 0 || (ci->bytes >= 0 && g->comm != ci->comm))
			continue;
		ci->bytes = ci->bytes < 0 ? g->bytes : prof_add_saturated(ci->bytes, g->bytes);
	}
}

/* Give launch l its call from the ranges open on its thread. */
static void place(struct walk *w, const struct launch *l)
{
	struct nccl_call *k = &w->out->v[l->call];
	const struct call_info *in = NULL;
	struct call_info grouped;
	int ncalls = 1;

	for (int i = w->nopen - 1; i >= 0 && l->tid == w->tid; i--)
		if (w->open[i].start_ns <= l->at_ns && l->at_ns < w->open[i].end_ns) {
			in = &w->open[i];
			break;
		}
	if (!in) {
		w->out->without_call++;
		return;
	}
	k->call_start_ns = in->start_ns;
	k->call_end_ns = in->end_ns;
	if (in->kind == NCCL_KIND_UNKNOWN) {
		/* ncclGroupEnd launches what the group's calls asked for */
		group_call(w, k->name.kind, &grouped, &ncalls);
		if (ncalls == 0)
			return;
		in = &grouped;
	}
	if (!k->kind)
		k->kind = in->kind;
	k->ncalls = ncalls;
	k->has_payload = in->has_payload;
	k->bytes = in->bytes;
	k->comm = in->comm;
	k->peer = in->peer;
	k->root = in->root;
	snprintf(k->op, sizeof k->op, "%s", in->op);
	w->out->with_payload += in->has_payload;
}

/* Close the ranges of the thread that ended by t; a group ends with its
 * ncclGroupEnd. */
static void close_until(struct walk *w, int64_t t)
{
	while (w->nopen > 0 && w->open[w->nopen - 1].end_ns <= t) {
		const struct call_info *top = &w->open[--w->nopen];

		if (top->is_group_end && w->group_depth > 0 && --w->group_depth == 0)
			w->ngroup = 0;
	}
}

/* Place the launches before (tid, t): every launch of an earlier thread,
 * and this thread's up to t. */
static void place_until(struct walk *w, int64_t tid, int64_t t)
{
	while (w->next < w->nlaunches) {
		const struct launch *l = &w->launches[w->next];

		if (l->tid > tid || (l->tid == tid && l->at_ns >= t))
			break;
		if (l->tid == w->tid)
			close_until(w, l->at_ns);
		place(w, l);
		w->next++;
	}
}

static int open_range(struct walk *w, struct prof_cursor *c)
{
	int64_t tid = prof_cursor__int64(c, 0), start = prof_cursor__int64(c, 1);
	struct call_info ci;
	int rc;

	if (!is_nccl_range(&w->domains, prof_global_pid_of_tid(tid), prof_cursor__int64(c, 4)))
		return 0;
	place_until(w, tid, start);
	if (tid != w->tid) {
		w->tid = tid;
		w->nopen = w->ngroup = w->group_depth = 0;
	}
	close_until(w, start);
	rc = read_call(w, c, &ci);
	if (rc)
		return rc;
	if (ci.is_group_start && w->group_depth++ == 0)
		w->ngroup = 0;
	if (ci.kind != NCCL_KIND_UNKNOWN && w->group_depth > 0 && w->ngroup < MAX_GROUP)
		w->group[w->ngroup++] = ci;
	if (w->nopen == MAX_OPEN) /* a damaged thread whose ranges never close */
		memmove(w->open, w->open + 1, sizeof w->open[0] * (MAX_OPEN - 1)), w->nopen--;
	w->open[w->nopen++] = ci;
	return 0;
}

static int walk_ranges(struct walk *w)
{
	static const char sql[] =
		"SELECT n.globalTid, n.start, n.end, coalesce(n.text, s.value), n.domainId,"
		" n.binaryData FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId"
		" WHERE n.eventType = " PROF_SQL_NVTX_PUSHPOP " AND NOT " SUM_BAD_SPAN("n.")
		" AND coalesce(n.text, s.value) GLOB 'nccl[A-Z]*' ORDER BY n.globalTid, n.start";
	struct prof_cursor *c;
	int rc;

	rc = prof_cursor__open(w->s, sql, &c, w->err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, w->err)) == 1 && (rc = open_range(w, c)) == 0)
		;
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	place_until(w, INT64_MAX, INT64_MAX);
	return 0;
}

/* ---- after the walk ---------------------------------------------------------- */

/* A process's count of calls of one communicator (or kind). */
struct seq_counter {
	int64_t pid;
	uint64_t comm;
	enum nccl_kind kind;
	int64_t next;
};

/* Each call's communicator size and rank, and its place among its
 * process's calls of the communicator (of the kind, without one), in
 * kernel start order. */
static int number_calls(struct walk *w)
{
	struct nccl_calls *out = w->out;
	struct seq_counter *ctr = NULL;
	int nctr = 0, cap = 0;

	for (int i = 0; i < out->n; i++) {
		struct nccl_call *k = &out->v[i];
		struct seq_counter *c = NULL;

		for (int j = 0; j < w->ncomms && k->comm; j++)
			if (w->comms[j].pid == k->global_pid && w->comms[j].comm == k->comm) {
				k->comm_ranks = w->comms[j].nranks;
				k->comm_rank = w->comms[j].rank;
			}
		for (int j = nctr - 1; j >= 0 && !c; j--)
			if (ctr[j].pid == k->global_pid && ctr[j].comm == k->comm &&
			    (k->comm || ctr[j].kind == k->kind))
				c = &ctr[j];
		if (!c) {
			if (array__grow((void **)&ctr, &cap, nctr + 1, sizeof *ctr)) {
				free(ctr);
				return nomem(w->err);
			}
			c = &ctr[nctr++];
			*c = (struct seq_counter){ k->global_pid, k->comm, k->kind, 0 };
		}
		k->seq = c->next++;
	}
	free(ctr);
	return 0;
}

int nccl_calls__load(struct prof_store *s, const struct sum_ranks *ranks, struct nccl_calls *out,
		     struct prof_error *err)
{
	struct walk w = { .s = s, .out = out, .tid = -1, .err = err };
	int64_t *tids = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	rc = load_kernels(s, ranks, out, &tids, err);
	if (rc || out->n == 0)
		goto out;
	w.launches = malloc(sizeof *w.launches * (size_t)out->n);
	if (!w.launches) {
		rc = nomem(err);
		goto out;
	}
	for (int i = 0; i < out->n; i++) {
		/* a launch not in the capture sorts first and finds no range */
		w.launches[w.nlaunches++] = (struct launch){ out->v[i].launch_ns < 0 ? -1 : tids[i],
							     out->v[i].launch_ns, i };
	}
	qsort(w.launches, (size_t)w.nlaunches, sizeof *w.launches, by_thread_time);
	rc = prof_payload_schemas__load(s, &w.schemas, err);
	if (rc == 0)
		rc = load_domains(s, &w.domains, err);
	if (rc == 0)
		rc = walk_ranges(&w);
	if (rc == 0)
		rc = number_calls(&w);
out:
	free(tids);
	free(w.launches);
	free(w.domains.v);
	free(w.comms);
	prof_payload_schemas__delete(w.schemas);
	if (rc)
		nccl_calls__exit(out);
	return rc;
}

/* The key of PERFKIT_PEAKS that `perfkit peaks` stores the measured
 * peer-to-peer bandwidth under (bytes per second, one direction). */
#define PEAK_P2P_KEY "p2p_bytes_per_s"

double nccl_link_bytes_per_ns(struct prof_store *s)
{
	struct prof_cursor *c;
	double v = 0;

	if (prof_cursor__open(s, "SELECT value FROM " PROF_T_PEAKS " WHERE key = ?1", &c, NULL))
		return 0;
	prof_cursor__bind_text(c, 1, PEAK_P2P_KEY);
	if (prof_cursor__next(c, NULL) == 1 && !prof_cursor__is_null(c, 0))
		v = prof_cursor__double(c, 0) / 1e9;
	prof_cursor__close(c);
	return v > 0 ? v : 0;
}

void nccl_calls__exit(struct nccl_calls *c)
{
	free(c->v);
	memset(c, 0, sizeof *c);
}

/* ---- collectives across ranks ------------------------------------------------- */

struct nccl_arrival nccl_call__arrival(const struct nccl_call *k)
{
	return (struct nccl_arrival){ .comm = k->comm, .seq = k->seq, .global_pid = k->global_pid,
				      .start_ns = k->start_ns, .end_ns = k->end_ns, .bytes = k->bytes,
				      .rank = k->rank, .kind = (int32_t)k->kind, .comm_ranks = k->comm_ranks };
}

int nccl_calls__of_arrivals(const struct nccl_arrival *v, int n, struct nccl_calls *out)
{
	memset(out, 0, sizeof *out);
	out->v = n ? calloc((size_t)n, sizeof *out->v) : NULL;
	if (n && !out->v)
		return PROF_E_NOMEM;
	out->n = out->cap = n;
	for (int i = 0; i < n; i++) {
		struct nccl_call *k = &out->v[i];

		*k = (struct nccl_call){ .global_pid = v[i].global_pid, .rank = v[i].rank,
					 .start_ns = v[i].start_ns, .end_ns = v[i].end_ns,
					 .launch_ns = -1, .call_start_ns = -1, .call_end_ns = -1,
					 .kind = (enum nccl_kind)v[i].kind, .bytes = v[i].bytes, .comm = v[i].comm,
					 .comm_ranks = v[i].comm_ranks, .comm_rank = -1, .peer = -1, .root = -1,
					 .ncalls = 1, .seq = v[i].seq };
		k->name.kind = k->kind;
	}
	return 0;
}

/* c's calls as arrivals (malloc'd; NULL without calls or memory). */
static struct nccl_arrival *arrivals_of(const struct nccl_calls *c)
{
	struct nccl_arrival *v = c->n ? malloc(sizeof *v * (size_t)c->n) : NULL;

	for (int i = 0; v && i < c->n; i++)
		v[i] = nccl_call__arrival(&c->v[i]);
	return v;
}

/* A call's place in the order that puts a collective's calls together:
 * communicator (or kind), place, rank. */
struct collective_key {
	uint64_t comm;
	int kind;
	int64_t seq;
	int rank;
	int64_t pid;
	int call;
};

static int by_collective(const void *a, const void *b)
{
	const struct collective_key *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool same_collective(const struct collective_key *a, const struct collective_key *b)
{
	return a->comm == b->comm && a->kind == b->kind && a->seq == b->seq;
}

int nccl_collectives__match(const struct nccl_calls *c, struct nccl_collectives *out,
			    struct prof_error *err)
{
	struct nccl_arrival *v = arrivals_of(c);
	int rc;

	if (c->n && !v) {
		memset(out, 0, sizeof *out);
		return nomem(err);
	}
	rc = nccl_arrivals__match(v, c->n, out, err);
	free(v);
	return rc;
}

int nccl_arrivals__match(const struct nccl_arrival *v, int n, struct nccl_collectives *out,
			 struct prof_error *err)
{
	struct collective_key *keys = n ? malloc(sizeof *keys * (size_t)n) : NULL;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (n && !keys)
		return nomem(err);
	for (int i = 0; i < n; i++) {
		const struct nccl_arrival *k = &v[i];

		/* with a communicator its calls of every kind are one sequence */
		keys[i] = (struct collective_key){ k->comm, k->comm ? 0 : (int)k->kind, k->seq,
						   k->rank, k->global_pid, i };
	}
	if (n > 1)
		qsort(keys, (size_t)n, sizeof *keys, by_collective);
	for (int i = 0; i < n && rc == 0;) {
		const struct nccl_arrival *first = &v[keys[i].call];
		struct nccl_collective *col;
		int j = i + 1;

		while (j < n && same_collective(&keys[i], &keys[j]))
			j++;
		if (array__grow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v) ||
		    !(out->v[out->n].calls = malloc(sizeof(int) * (size_t)(j - i)))) {
			rc = nomem(err);
			break;
		}
		col = &out->v[out->n++];
		col->kind = (enum nccl_kind)first->kind;
		col->comm = first->comm;
		col->seq = first->seq;
		col->bytes = first->bytes;
		col->ncalls = 0;
		col->first_arrival_ns = INT64_MAX;
		col->last_arrival_ns = INT64_MIN;
		col->last_rank = -1;
		for (int k = i; k < j; k++) {
			const struct nccl_arrival *call = &v[keys[k].call];

			col->calls[col->ncalls++] = keys[k].call;
			if (call->start_ns < col->first_arrival_ns)
				col->first_arrival_ns = call->start_ns;
			if (call->start_ns > col->last_arrival_ns) {
				col->last_arrival_ns = call->start_ns;
				col->last_rank = call->rank;
			}
		}
		i = j;
	}
	free(keys);
	if (rc)
		nccl_collectives__exit(out);
	return rc;
}

void nccl_collectives__exit(struct nccl_collectives *cs)
{
	for (int i = 0; i < cs->n; i++)
		free(cs->v[i].calls);
	free(cs->v);
	memset(cs, 0, sizeof *cs);
}

int nccl_collectives__waits(const struct nccl_calls *c, const struct nccl_collectives *cs, int64_t *wait_ns,
			    int *last_call)
{
	struct nccl_arrival *v = arrivals_of(c);
	int rc;

	if (c->n && !v)
		return PROF_E_NOMEM;
	rc = nccl_arrivals__waits(v, c->n, cs, wait_ns, last_call);
	free(v);
	return rc;
}

int nccl_arrivals__waits(const struct nccl_arrival *v, int n, const struct nccl_collectives *cs,
			 int64_t *wait_ns, int *last_call)
{
	int64_t *start = NULL, *dur = NULL, *wait = NULL;
	int cap = 0, rc = 0;

	for (int i = 0; i < n; i++)
		wait_ns[i] = -1;
	for (int k = 0; k < cs->n && rc == 0; k++) {
		const struct nccl_collective *col = &cs->v[k];
		bool usable = col->ncalls > 1;
		int last;

		last_call[k] = -1;
		for (int i = 0; i < col->ncalls; i++)
			usable &= v[col->calls[i]].end_ns >= v[col->calls[i]].start_ns;
		if (!usable)
			continue;
		if (col->ncalls > cap) {
			cap = col->ncalls;
			free(start);
			free(dur);
			free(wait);
			start = malloc(sizeof *start * (size_t)cap);
			dur = malloc(sizeof *dur * (size_t)cap);
			wait = malloc(sizeof *wait * (size_t)cap);
			if (!start || !dur || !wait) {
				rc = PROF_E_NOMEM;
				break;
			}
		}
		for (int i = 0; i < col->ncalls; i++) {
			const struct nccl_arrival *x = &v[col->calls[i]];

			start[i] = x->start_ns;
			dur[i] = x->end_ns - x->start_ns;
		}
		last = job_judge__waits(start, dur, col->ncalls, wait);
		last_call[k] = col->calls[last];
		for (int i = 0; i < col->ncalls; i++)
			wait_ns[col->calls[i]] = wait[i];
	}
	free(start);
	free(dur);
	free(wait);
	return rc;
}

static int64_t transfer_ns(int64_t start_ns, int64_t end_ns, int64_t wait_ns)
{
	int64_t d = end_ns - start_ns, w = wait_ns > 0 ? wait_ns : 0;

	return d > w ? d - w : 0;
}

int64_t nccl_call__transfer_ns(const struct nccl_call *c, int64_t wait_ns)
{
	return transfer_ns(c->start_ns, c->end_ns, wait_ns);
}

int64_t nccl_arrival__transfer_ns(const struct nccl_arrival *a, int64_t wait_ns)
{
	return transfer_ns(a->start_ns, a->end_ns, wait_ns);
}

/* ---- why sizes are unknown ------------------------------------------------------ */

void nccl_calls__size_evidence(struct prof_store *s, const struct nccl_calls *c,
			       struct nccl_size_evidence *e)
{
	struct prof_cursor *cur;

	memset(e, 0, sizeof *e);
	for (int i = 0; i < c->n; i++)
		e->no_payload += c->v[i].bytes < 0 && c->v[i].call_start_ns >= 0;
	e->unreadable = c->payloads_unreadable;
	e->without_call = c->without_call;
	/* asked whatever this capture's kernels say: a job's captures add up,
	 * and another capture's kernels outside any call may need it */
	if (prof_cursor__open(s, "SELECT EXISTS (SELECT 1 FROM " PROF_T_NVTX ")", &cur, NULL) == 0) {
		if (prof_cursor__next(cur, NULL) == 1)
			e->nvtx = prof_cursor__int64(cur, 0) != 0;
		prof_cursor__close(cur);
	}
}

void nccl_size_evidence__add(struct nccl_size_evidence *a, const struct nccl_size_evidence *b)
{
	a->no_payload += b->no_payload;
	a->unreadable += b->unreadable;
	a->without_call += b->without_call;
	a->nvtx |= b->nvtx;
}

void nccl_size_evidence__why(const struct nccl_size_evidence *e, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = 0;
	if (e->no_payload > e->unreadable)
		len += (size_t)snprintf(buf + len, cap - len, "their NCCL calls carry no NVTX payload (NCCL "
					"before 2.23)");
	if (e->unreadable > 0 && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld payloads did not decode", len ? "; " : "",
					(long long)e->unreadable);
	if (e->without_call == 0 || len >= cap) {
		if (!buf[0])
			snprintf(buf, cap, "their NCCL calls' payloads give none");
		return;
	}
	snprintf(buf + len, cap - len, "%s%s", len ? "; " : "",
		 e->nvtx ? "no NVTX range of domain NCCL was open at their launch (NCCL's NVTX annotations "
			   "off: NCCL_NVTX_DISABLE=1, or an NCCL without them)"
			 : "the capture holds no NVTX events: NVTX was not traced (`perfkit run --trace` "
			   "without nvtx)");
}

void nccl_calls__why_no_size(struct prof_store *s, const struct nccl_calls *c, char *buf, size_t cap)
{
	struct nccl_size_evidence e;

	nccl_calls__size_evidence(s, c, &e);
	nccl_size_evidence__why(&e, buf, cap);
}
