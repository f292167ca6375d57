/* rank_report.c - the rows of `perfkit report --report=rank_sum` (each
 * rank's steps and where its time goes: rank_time.h) and
 * `--report=nccl_sum` (NCCL's collectives by kind and message size, per
 * rank, with nccl-tests' algorithm and bus bandwidth against the link's
 * measured bandwidth: nccl.h). They need the loop finder per rank and the
 * collective model, so they are computed here; summary.c lists them with
 * the other reports (summary.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "nccl.h"
#include "rank_report.h"
#include "rank_time.h"
#include "analysis/core/report_rows.h"
#include "ranks_reports.h"
#include "prof/saturate.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "prof/error.h"

static int note_left_out(struct rpt_sink *sink, int64_t n)
{
	char text[160];
	struct rpt_note note = { "rows_left_out", n, text };

	snprintf(text, sizeof text, "%lld GPU rows " SUM_BAD_SPAN_WORDS " were left out",
		 (long long)n);
	return rpt_sink__note(sink, &note);
}

/* ---- rank_sum ------------------------------------------------------------- */

int rank_sum__emit(const struct rank_times *t, struct rpt_sink *sink, struct prof_error *err)
{
	static const struct rpt_column cols[] = {
		{ "Rank", RPT_INT, 0 },                 { "Process", RPT_TEXT, 0 },
		{ "Steps", RPT_INT, 0 },                { "Step Med (ns)", RPT_INT, 0 },
		{ "Step P95 (ns)", RPT_INT, 0 },        { "Window (ns)", RPT_INT, 0 },
		{ "GPU Busy (ns)", RPT_INT, 0 },        { "Compute (ns)", RPT_INT, 0 },
		{ "Communication (ns)", RPT_INT, 0 },   { "Hidden Comm (ns)", RPT_INT, 0 },
		{ "Exposed Comm (ns)", RPT_INT, 0 },    { "Idle (ns)", RPT_INT, 0 },
		{ "Busy (%)", RPT_PERCENT, 1 },         { "Exposed (%)", RPT_PERCENT, 1 },
		{ "Idle (%)", RPT_PERCENT, 1 },         { "Window Source", RPT_TEXT, 0 },
	};
	int64_t left_out = 0;
	int rc = sink->begin(sink, "rank_sum", "Ranks: Steps and Time", cols, 16);

	for (int i = 0; rc >= 0 && i < t->n; i++) {
		const struct rank_time *r = &t->v[i];
		struct rpt_cell row[] = {
			int_cell(r->rank), text_cell(r->label), int_cell(r->nsteps),
			known_cell(r->step_med_ns), known_cell(r->step_p95_ns), int_cell(r->window_ns),
			int_cell(r->busy_ns), int_cell(r->compute_ns), int_cell(r->comm_ns),
			int_cell(r->hidden_ns), int_cell(r->exposed_ns), int_cell(r->idle_ns),
			real_cell(percent(r->busy_ns, r->window_ns)),
			real_cell(percent(r->exposed_ns, r->window_ns)),
			real_cell(percent(r->idle_ns, r->window_ns)), text_cell(r->w.source),
		};

		left_out += r->rows_left_out;
		rc = sink->row(sink, row);
	}
	if (rc >= 0)
		rc = note_left_out(sink, left_out);
	if (rc >= 0)
		rc = sink->end(sink);
	return rc < 0 ? sink_failed(rc, err) : 0;
}

int summary__rank_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct rank_times t;
	int rc = rank_times__load(s, NULL, 0, &t, err);

	if (rc)
		return rc;
	rc = rank_sum__emit(&t, sink, err);
	rank_times__exit(&t);
	return rc;
}

/* ---- nccl_sum --------------------------------------------------------------- */

static int by_group(const void *a, const void *b)
{
	const struct nccl_sum_group *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static struct nccl_sum_group *group_for(struct nccl_sum *s, const struct nccl_call *k)
{
	int bucket = nccl_size_bucket(k->bytes);
	struct nccl_sum_group *g;

	for (int i = 0; i < s->n; i++)
		if (s->g[i].kind == k->kind && s->g[i].bucket == bucket && s->g[i].rank == k->rank)
			return &s->g[i];
	if (array__grow((void **)&s->g, &s->cap, s->n + 1, sizeof *s->g))
		return NULL;
	g = &s->g[s->n++];
	memset(g, 0, sizeof *g);
	g->kind = k->kind;
	g->bucket = bucket;
	g->rank = k->rank;
	g->bytes_known = k->bytes >= 0;
	g->comm_ranks = -1;
	g->name = k->name;
	return g;
}

int nccl_sum__add_calls(struct nccl_sum *s, const struct nccl_calls *c, struct prof_error *err)
{
	if (c->n && array__grow((void **)&s->arrivals, &s->arrivals_cap, s->narrivals + c->n,
				sizeof *s->arrivals))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; i < c->n; i++) {
		const struct nccl_call *k = &c->v[i];
		struct nccl_sum_group *x;

		/* a bad span's call too: it leaves its collective's waits unknown */
		s->arrivals[s->narrivals++] = nccl_call__arrival(k);
		if (prof_span_is_bad(k->start_ns, k->end_ns)) {
			s->left_out++;
			continue;
		}
		x = group_for(s, k);
		if (!x || array__grow((void **)&x->dur, &x->cap, x->ndur + 1, sizeof *x->dur))
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		x->dur[x->ndur++] = k->end_ns - k->start_ns;
		x->calls++;
		x->time_ns = prof_add_saturated(x->time_ns, k->end_ns - k->start_ns);
		if (k->bytes >= 0)
			x->bytes = prof_add_saturated(x->bytes, k->bytes);
		else
			s->unknown++;
		if (k->comm_ranks > x->comm_ranks)
			x->comm_ranks = k->comm_ranks;
	}
	return 0;
}

int nccl_sum_group__absorb(struct nccl_sum_group *a, struct nccl_sum_group *b)
{
	if (b->ndur && array__grow((void **)&a->dur, &a->cap, a->ndur + b->ndur, sizeof *a->dur))
		return PROF_E_NOMEM;
	if (b->ndur)
		memcpy(a->dur + a->ndur, b->dur, sizeof *b->dur * (size_t)b->ndur);
	a->ndur += b->ndur;
	a->calls += b->calls;
	a->time_ns = prof_add_saturated(a->time_ns, b->time_ns);
	a->bytes = prof_add_saturated(a->bytes, b->bytes);
	a->wait_ns = prof_add_saturated(a->wait_ns, b->wait_ns);
	a->transfer_ns = prof_add_saturated(a->transfer_ns, b->transfer_ns);
	a->waits_known += b->waits_known;
	if (b->comm_ranks > a->comm_ranks)
		a->comm_ranks = b->comm_ranks;
	free(b->dur);
	memset(b, 0, sizeof *b);
	return 0;
}

void nccl_sum__exit(struct nccl_sum *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->g[i].dur);
	free(s->g);
	free(s->arrivals);
	memset(s, 0, sizeof *s);
}

/* Each call's wait for the last rank of its collective into its group (s's
 * groups sorted by by_group); *known: the calls whose wait is known. Kernel
 * times include the wait, and a rank that arrives early shows a bandwidth
 * that is its waiting's, not the link's. */
static int add_waits(struct nccl_sum *s, int64_t *known, struct prof_error *err)
{
	struct nccl_collectives cols = { 0 };
	int64_t *wait = malloc(sizeof *wait * (size_t)(s->narrivals ? s->narrivals : 1));
	int *last = NULL;
	int rc = wait ? nccl_arrivals__match(s->arrivals, s->narrivals, &cols, err)
		      : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	*known = 0;
	if (!rc && (!(last = malloc(sizeof *last * (size_t)(cols.n ? cols.n : 1))) ||
		    nccl_arrivals__waits(s->arrivals, s->narrivals, &cols, wait, last)))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; !rc && i < s->narrivals; i++) {
		const struct nccl_arrival *a = &s->arrivals[i];
		struct nccl_sum_group key = { .kind = (enum nccl_kind)a->kind,
					      .bucket = nccl_size_bucket(a->bytes), .rank = a->rank };
		struct nccl_sum_group *x;

		/* a known wait is of a call with a good span, which has its group */
		if (wait[i] < 0 ||
		    !(x = bsearch(&key, s->g, (size_t)s->n, sizeof *s->g, by_group)))
			continue;
		(*known)++;
		x->waits_known++;
		x->wait_ns = prof_add_saturated(x->wait_ns, wait[i]);
		x->transfer_ns = prof_add_saturated(x->transfer_ns, nccl_arrival__transfer_ns(a, wait[i]));
	}
	free(wait);
	free(last);
	nccl_collectives__exit(&cols);
	return rc;
}

static int group_rows(struct rpt_sink *sink, struct nccl_sum_group *g, int ng, int world, double link)
{
	int rc = 0;

	for (int i = 0; rc >= 0 && i < ng; i++) {
		struct nccl_sum_group *x = &g[i];
		int n = x->comm_ranks > 0 ? x->comm_ranks : world;
		double algbw = x->bytes_known && x->time_ns > 0 ? (double)x->bytes / (double)x->time_ns : -1;
		double factor = nccl_busbw_factor(x->kind, n);
		double busbw = algbw >= 0 && factor > 0 ? algbw * factor : -1;
		/* without the waiting, over the calls whose wait is known, all of them */
		bool xfer = x->bytes_known && factor > 0 && x->waits_known == x->calls && x->transfer_ns > 0;
		double xfer_busbw = xfer ? (double)x->bytes / (double)x->transfer_ns * factor : -1;
		char algo[32];
		struct rpt_cell row[16];
		int64_t med = rank_time__percentile(x->dur, x->ndur, 50);
		int64_t p95 = rank_time__percentile(x->dur, x->ndur, 95);

		snprintf(algo, sizeof algo, "%s%s%s", x->name.algo,
			 x->name.algo[0] && x->name.proto[0] ? " " : "", x->name.proto);
		row[0] = text_cell(nccl_kind__name(x->kind));
		row[1] = text_cell(nccl_size_bucket__label(x->bucket));
		row[2] = x->rank >= 0 ? int_cell(x->rank) : null_cell();
		row[3] = int_cell(x->calls);
		row[4] = x->bytes_known ? int_cell(x->bytes) : null_cell();
		row[5] = known_cell(med);
		row[6] = known_cell(p95);
		row[7] = algbw >= 0 ? real_cell(algbw) : null_cell();
		row[8] = busbw >= 0 ? real_cell(busbw) : null_cell();
		row[9] = x->waits_known == x->calls ? int_cell(x->wait_ns) : null_cell();
		row[10] = xfer_busbw >= 0 ? real_cell(xfer_busbw) : null_cell();
		row[11] = link > 0 ? real_cell(link) : null_cell();
		row[12] = link > 0 && busbw >= 0 ? real_cell(100.0 * busbw / link) : null_cell();
		row[13] = n > 0 ? int_cell(n) : null_cell();
		row[14] = text_cell(algo[0] ? algo : NULL);
		row[15] = text_cell(x->name.dtype[0] ? x->name.dtype : NULL);
		rc = sink->row(sink, row);
	}
	return rc;
}

int nccl_sum__emit(struct nccl_sum *s, int world, double link, struct rpt_sink *sink,
		   struct prof_error *err)
{
	static const struct rpt_column columns[] = {
		{ "Kind", RPT_TEXT, 0 },            { "Message Size", RPT_TEXT, 0 },
		{ "Rank", RPT_INT, 0 },             { "Calls", RPT_INT, 0 },
		{ "Bytes", RPT_INT, 0 },            { "Med (ns)", RPT_INT, 0 },
		{ "P95 (ns)", RPT_INT, 0 },         { "Alg BW (GB/s)", RPT_REAL, 2 },
		{ "Bus BW (GB/s)", RPT_REAL, 2 },   { "Wait (ns)", RPT_INT, 0 },
		{ "Xfer Bus BW (GB/s)", RPT_REAL, 2 }, { "Link BW (GB/s)", RPT_REAL, 1 },
		{ "Bus/Link (%)", RPT_PERCENT, 1 }, { "Ranks", RPT_INT, 0 },
		{ "Kernel Variant", RPT_TEXT, 0 },  { "Type", RPT_TEXT, 0 },
	};
	int64_t waits_known;
	int rc;

	if (s->n > 1)
		qsort(s->g, (size_t)s->n, sizeof *s->g, by_group);
	rc = add_waits(s, &waits_known, err);
	if (rc)
		return rc;
	rc = sink->begin(sink, "nccl_sum", "NCCL Collectives by Kind and Message Size", columns, 16);
	if (rc >= 0)
		rc = group_rows(sink, s->g, s->n, world, link);
	if (rc >= 0) {
		char text[700], why[400];
		struct rpt_note note = { "sizes_unknown", s->unknown, text };

		nccl_size_evidence__why(&s->sizes, why, sizeof why);
		snprintf(text, sizeof text,
			 "%lld NCCL kernels without a message size: %s; kind, datatype and the kernel's "
			 "variant come from their kernel names", (long long)s->unknown, why);
		rc = rpt_sink__note(sink, &note);
	}
	if (rc >= 0) {
		struct rpt_note note = { "waits_unknown", s->narrivals - s->left_out - waits_known,
					 "Wait and Xfer Bus BW are empty for groups with calls whose collective "
					 "has no other rank here (--rank chose one rank of it, or the capture "
					 "holds one)" };

		rc = rpt_sink__note(sink, &note);
	}
	if (rc >= 0) {
		struct rpt_note note = { "link_unmeasured", s->n > 0 && link <= 0 ? s->n : 0,
					 "Link BW and Bus/Link are empty: " NCCL_NO_LINK };

		rc = rpt_sink__note(sink, &note);
	}
	if (rc >= 0) {
		char text[240];
		struct rpt_note note = { "calls_unmatched", s->sizes.without_call, text };

		snprintf(text, sizeof text,
			 "%lld NCCL kernels were launched outside any NCCL call the capture holds "
			 "(no NVTX range of domain NCCL open at their launch): no payload for them",
			 (long long)s->sizes.without_call);
		rc = rpt_sink__note(sink, &note);
	}
	if (rc >= 0)
		rc = note_left_out(sink, s->left_out);
	if (rc >= 0)
		rc = sink->end(sink);
	return rc < 0 ? sink_failed(rc, err) : 0;
}

int summary__nccl_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_ranks ranks;
	struct nccl_calls c = { 0 };
	struct nccl_sum sum = { 0 };
	int rc;

	rc = sum_ranks__load(s, &ranks, err);
	if (rc)
		return rc;
	rc = nccl_calls__load(s, &ranks, &c, err);
	if (!rc)
		rc = nccl_sum__add_calls(&sum, &c, err);
	if (!rc) {
		nccl_calls__size_evidence(s, &c, &sum.sizes);
		rc = nccl_sum__emit(&sum, ranks.nranks, nccl_link_bytes_per_ns(s), sink, err);
	}
	nccl_sum__exit(&sum);
	nccl_calls__exit(&c);
	sum_ranks__exit(&ranks);
	return rc < 0 ? rc : 0;
}

static const struct rpt_report reports[] = {
	{ "rank_sum", "Ranks: Steps and Time", summary__rank_sum },
	{ "nccl_sum", "NCCL Collectives by Kind and Message Size", summary__nccl_sum },
};

const struct rpt_report *ranks__reports(size_t *n)
{
	*n = sizeof reports / sizeof reports[0];
	return reports;
}
