/* idle_report.c - the rows of `perfkit report --report=gpu_idle_sum` (why
 * each GPU is idle in the diagnosis window: per cause, per step, the
 * longest stretches, the streams held by event waits) and
 * `--report=critical_path` (the parts of the median step's critical path).
 * Both need the diagnosis window, so they are computed here; summary.c
 * lists them with the other reports (summary.h).
 *
 * A job is analysed rank by rank, as diagnose does (diagnose_job.c): each
 * rank in its own window, its steps its own loop's, the store's views
 * narrowed to its rows (sum_ranks__scope). Every table then starts with a
 * Rank column and holds a block of rows per rank.
 *
 * Start times count from the capture's start, as the traces, the HTML
 * report's plots and --from/--to count them (sum_capture__time). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "critical_path.h"
#include "gpu_idle.h"
#include "analysis/core/report_rows.h"
#include "timeline_reports.h"
#include "timeline_units.h"
#include "prof/saturate.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/error.h"

/* Under kernel replay (--metrics) kernels were serialised and replayed:
 * the gaps and host times are the profiler's, as diagnose says when it
 * skips its timing rules. */
#define REPLAY_NOTE "captured under kernel replay (--metrics): the idle and host times are the " \
		    "profiler's; analyse a capture made without --metrics"

/* The most columns a table has, the Rank column of a job included:
 * gpu_idle_steps' 4 + one per cause, or critical_path's 11. */
#define MAX_COLS (5 + IDLE_NCAUSES)
_Static_assert(MAX_COLS >= 1 + 11, "critical_path's columns and a Rank column fit");

/* The processes a report shows: each rank of a job, or the capture. */
struct idle_units {
	const struct timeline_unit **v; /* in memo, which owns them */
	int n;
	int64_t origin_ns;             /* the capture's start: times are shown from it */
	int64_t rows_left_out;         /* rows with a bad span, which the analyses
					* leave out as diagnose does */
};

/* The rows left out, under the first table of each report, as the
 * summaries give theirs (rows_left_out). */
static int note_left_out(struct rpt_sink *sink, const struct idle_units *u)
{
	char text[160];

	snprintf(text, sizeof text, "%" PRId64 " row%s " SUM_BAD_SPAN_WORDS " %s left out",
		 u->rows_left_out, u->rows_left_out == 1 ? "" : "s", u->rows_left_out == 1 ? "was" : "were");
	return rpt_sink__note(sink, &(struct rpt_note){ "rows_left_out", u->rows_left_out, text });
}

/* t as the reports show it: from the capture's start. */
static struct rpt_cell time_cell(const struct idle_units *u, int64_t t)
{
	return int_cell(prof_span_saturated(u->origin_ns, t));
}

/* A table: its columns after a Rank column when the units are a job's. */
static int table_begin(struct rpt_sink *sink, const struct idle_units *u, const char *name, const char *title,
		       const struct rpt_column *cols, int ncols)
{
	struct rpt_column all[MAX_COLS] = { { "Rank", RPT_INT, 0 } };
	int job = u->n > 0 && u->v[0]->rank >= 0;

	memcpy(all + job, cols, sizeof *cols * (size_t)ncols);
	return sink->begin(sink, name, title, all, ncols + job);
}

/* A row of unit x: its rank first in a job. */
static int table_row(struct rpt_sink *sink, const struct timeline_unit *x, const struct rpt_cell *cells, int ncells)
{
	struct rpt_cell all[MAX_COLS];
	int job = x->rank >= 0;

	all[0] = int_cell(x->rank);
	memcpy(all + job, cells, sizeof *cells * (size_t)ncells);
	return sink->row(sink, all);
}

/* ---- gpu_idle_sum ------------------------------------------------------------- */

static int window_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Device", RPT_INT, 0 },        { "Window Start (ns)", RPT_INT, 0 },
		{ "Window (ns)", RPT_INT, 0 },   { "Busy (ns)", RPT_INT, 0 },
		{ "Idle (ns)", RPT_INT, 0 },     { "Idle (%)", RPT_PERCENT, 1 },
		{ "Steps", RPT_INT, 0 },         { "Window Source", RPT_TEXT, 0 },
		{ "Note", RPT_TEXT, 0 },
	};
	int rc = table_begin(sink, u, "gpu_idle_window", "GPU Idle Time: Analysis Window", cols, 9);

	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct gpu_idle_result *r = u->v[k]->idle;
		int64_t len = r->window.span_ns;

		for (int i = 0; rc >= 0 && i < r->ndev; i++) {
			const struct gpu_idle_device *d = &r->dev[i];
			struct rpt_cell row[] = {
				int_cell(d->device_id), time_cell(u, r->window.start_ns), int_cell(len),
				int_cell(d->busy_ns), int_cell(d->idle_ns), real_cell(percent(d->idle_ns, len)),
				int_cell(r->nsteps), text_cell(r->window.source),
				text_cell(r->replayed ? REPLAY_NOTE : NULL),
			};
			rc = table_row(sink, u->v[k], row, 9);
		}
	}
	if (rc >= 0)
		rc = note_left_out(sink, u);
	return rc < 0 ? rc : sink->end(sink);
}

/* The call (by name) that took the most of a cause's time, or NULL. */
static const char *top_call(const struct gpu_idle_result *r, const struct gpu_idle_device *d, int c)
{
	int best = -1;

	for (int i = 0; i < d->ncalls[c]; i++)
		if (best < 0 || d->calls[c][i].time_ns > d->calls[c][best].time_ns)
			best = i;
	if (best < 0)
		return NULL;
	{
		const struct api_name *n = api_names__find(&r->names, d->calls[c][best].name_id);
		return n ? n->name : NULL;
	}
}

/* The median over steps of one cause's idle time on one device. */
static int64_t step_median(const struct gpu_idle_result *r, const struct gpu_idle_device *d, int c,
			   int64_t *scratch)
{
	for (int s = 0; s < r->nsteps; s++)
		scratch[s] = d->step_cause_ns[(size_t)s * IDLE_NCAUSES + (size_t)c];
	return idle__median(scratch, r->nsteps);
}

/* One unit's causes: per device, those with time, longest first. */
static int cause_rows_of(const struct timeline_unit *x, struct rpt_sink *sink)
{
	const struct gpu_idle_result *r = x->idle;
	int64_t len = r->window.span_ns;
	int64_t *scratch = malloc(sizeof *scratch * (size_t)(r->nsteps ? r->nsteps : 1));
	int rc = 0;

	if (!scratch)
		return PROF_E_NOMEM;
	for (int i = 0; rc >= 0 && i < r->ndev; i++) {
		const struct gpu_idle_device *d = &r->dev[i];
		bool done[IDLE_NCAUSES] = { false };

		/* causes with time, longest first */
		for (int k = 0; rc >= 0 && k < IDLE_NCAUSES; k++) {
			int c = -1;

			for (int j = 0; j < IDLE_NCAUSES; j++)
				if (!done[j] && d->cause_ns[j] > 0 && (c < 0 || d->cause_ns[j] > d->cause_ns[c]))
					c = j;
			if (c < 0)
				break;
			done[c] = true;
			{
				struct rpt_cell row[] = {
					int_cell(d->device_id), text_cell(idle_cause__id(c)), int_cell(d->cause_ns[c]),
					real_cell(percent(d->cause_ns[c], len)),
					real_cell(percent(d->cause_ns[c], d->idle_ns)), int_cell(d->stretches[c]),
					r->nsteps ? int_cell(step_median(r, d, c, scratch)) : null_cell(),
					text_cell(top_call(r, d, c)), text_cell(idle_cause__title(c)),
				};
				rc = table_row(sink, x, row, 9);
			}
		}
	}
	free(scratch);
	return rc;
}

static int cause_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Device", RPT_INT, 0 },        { "Cause", RPT_TEXT, 0 },
		{ "Time (ns)", RPT_INT, 0 },     { "Window (%)", RPT_PERCENT, 1 },
		{ "Idle (%)", RPT_PERCENT, 1 },  { "Stretches", RPT_INT, 0 },
		{ "Step Med (ns)", RPT_INT, 0 }, { "Top Call", RPT_TEXT, 0 },
		{ "Meaning", RPT_TEXT, 0 },
	};
	int rc = table_begin(sink, u, "gpu_idle_sum", "GPU Idle Time by Cause", cols, 9);

	for (int k = 0; rc >= 0 && k < u->n; k++)
		rc = cause_rows_of(u->v[k], sink);
	return rc < 0 ? rc : sink->end(sink);
}

/* "#": the stretch's place in its unit's list, longest first. */
static int top_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "#", RPT_INT, 0 },             { "Device", RPT_INT, 0 },
		{ "Start (ns)", RPT_INT, 0 },     { "Duration (ns)", RPT_INT, 0 },
		{ "Step", RPT_INT, 0 },          { "Cause", RPT_TEXT, 0 },
		{ "Ended By", RPT_SYMBOL, 0 },   { "Evidence", RPT_TEXT, 0 },
	};
	int rc = table_begin(sink, u, "gpu_idle_top", "Longest GPU Idle Stretches", cols, 8);

	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct gpu_idle_result *r = u->v[k]->idle;

		for (int i = 0; rc >= 0 && i < r->ntop; i++) {
			const struct gpu_idle_top *t = &r->top[i];
			struct rpt_cell row[] = {
				int_cell(i + 1), int_cell(t->device_id), time_cell(u, t->start_ns),
				int_cell(t->duration_ns), t->step ? int_cell(t->step) : null_cell(),
				text_cell(idle_cause__id(t->cause)), text_cell(t->next_work), text_cell(t->evidence),
			};
			rc = table_row(sink, u->v[k], row, 8);
		}
	}
	return rc < 0 ? rc : sink->end(sink);
}

static int step_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	struct rpt_column cols[4 + IDLE_NCAUSES] = {
		{ "Device", RPT_INT, 0 },
		{ "Step", RPT_INT, 0 },
		{ "Step Start (ns)", RPT_INT, 0 },
		{ "Idle (ns)", RPT_INT, 0 },
	};
	char names[IDLE_NCAUSES][40];
	struct rpt_cell row[4 + IDLE_NCAUSES];
	int rc;

	for (int c = 0; c < IDLE_NCAUSES; c++) {
		snprintf(names[c], sizeof names[c], "%s (ns)", idle_cause__id(c));
		cols[4 + c] = (struct rpt_column){ names[c], RPT_INT, 0 };
	}
	rc = table_begin(sink, u, "gpu_idle_steps", "GPU Idle Time per Step", cols, 4 + IDLE_NCAUSES);
	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct gpu_idle_result *r = u->v[k]->idle;

		for (int i = 0; rc >= 0 && i < r->ndev; i++) {
			const struct gpu_idle_device *d = &r->dev[i];

			for (int s = 0; rc >= 0 && s < r->nsteps; s++) {
				const int64_t *by = &d->step_cause_ns[(size_t)s * IDLE_NCAUSES];
				int64_t idle = 0;

				for (int c = 0; c < IDLE_NCAUSES; c++) {
					idle += by[c];
					row[4 + c] = int_cell(by[c]);
				}
				row[0] = int_cell(d->device_id);
				row[1] = int_cell(s + 1);
				row[2] = time_cell(u, r->steps[s].start_ns);
				row[3] = int_cell(idle);
				rc = table_row(sink, u->v[k], row, 4 + IDLE_NCAUSES);
			}
		}
	}
	return rc < 0 ? rc : sink->end(sink);
}

static int wait_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Device", RPT_INT, 0 },         { "Stream", RPT_INT, 0 },
		{ "Held", RPT_INT, 0 },           { "Wait (ns)", RPT_INT, 0 },
		{ "Behind Stream", RPT_INT, 0 },
	};
	int rc = table_begin(sink, u, "gpu_idle_stream_waits", "Streams Held by Event Waits (behind: inferred)",
			     cols, 5);

	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct gpu_idle_result *r = u->v[k]->idle;

		for (int i = 0; rc >= 0 && i < r->nwaits; i++) {
			const struct gpu_idle_stream_wait *w = &r->waits[i];
			struct rpt_cell row[] = {
				int_cell(w->device_id), int_cell(w->stream_id), int_cell(w->waits),
				int_cell(w->wait_ns),
				w->producer_stream >= 0 ? int_cell(w->producer_stream) : null_cell(),
			};
			rc = table_row(sink, u->v[k], row, 5);
		}
	}
	return rc < 0 ? rc : sink->end(sink);
}

/* ---- each process, or each rank of a job ------------------------------------ */

static void units__exit(struct idle_units *u)
{
	free(u->v);
	memset(u, 0, sizeof *u);
}

/* Each rank of a job (those --rank chose) in its own views, or the
 * capture as a whole, with what need asks of each made where memo lacks
 * it. The analyses run the window finder with the default settings, as
 * the HTML report's Findings do. */
static int units__analyse(struct prof_store *s, struct timeline_units *memo, int need, struct idle_units *u,
			  struct prof_error *err)
{
	struct sum_ranks ranks;
	struct prof_error ignored = { 0 };
	struct timeline_unit *x;
	bool job = false;
	struct sum_capture_time time;
	bool missing = false;
	int *of = NULL, rc, urc;

	memset(u, 0, sizeof *u);
	if (!memo->have_base) {
		rc = sum_capture__zero(s, &time, err);
		memo->origin_ns = time.zero_ns;
		if (rc == 0)
			rc = sum_bad_spans__count(s, &memo->rows_left_out, err);
		if (rc)
			return rc;
		memo->have_base = true;
	}
	u->origin_ns = memo->origin_ns;
	u->rows_left_out = memo->rows_left_out;
	/* a perfkit capture of one process is known without the rank model */
	if (sum_ranks__may_be_job(s)) {
		rc = sum_ranks__load(s, &ranks, err);
		if (rc)
			return rc;
		job = sum_ranks__is_job(&ranks);
		if (!job)
			sum_ranks__exit(&ranks);
	}
	if (!job) {
		u->v = calloc(1, sizeof *u->v);
		if (!u->v)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		rc = timeline_units__need(s, memo, -1, need, &x, err);
		if (rc) {
			units__exit(u);
			return rc;
		}
		u->v[u->n++] = x;
		return 0;
	}
	u->v = calloc((size_t)(ranks.n ? ranks.n : 1), sizeof *u->v);
	of = calloc((size_t)(ranks.n ? ranks.n : 1), sizeof *of);
	rc = u->v && of ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < ranks.n; i++) {
		const struct sum_process *p = &ranks.p[i];

		if (p->rank < 0 || !p->selected)
			continue;
		of[u->n++] = p->rank;
		x = timeline_units__get(memo, p->rank);
		if (!x)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		else
			missing |= !timeline_unit__has(x, need);
	}
	/* a rank's own views only where memo lacks its analyses */
	for (int i = 0; rc == 0 && missing && i < ranks.n; i++) {
		const struct sum_process *p = &ranks.p[i];

		if (p->rank < 0 || !p->selected)
			continue;
		rc = sum_ranks__scope(s, p->global_pid, err);
		if (rc == 0)
			rc = timeline_units__need(s, memo, p->rank, need, &x, err);
	}
	/* back to what --rank chose, whatever happened */
	urc = missing ? sum_ranks__unscope(s, rc ? &ignored : err) : 0;
	sum_ranks__exit(&ranks);
	if (rc == 0)
		rc = urc;
	/* memo's array may have moved as units were added: found by rank now */
	for (int i = 0; rc == 0 && i < u->n; i++)
		u->v[i] = timeline_units__get(memo, of[i]);
	free(of);
	if (rc)
		units__exit(u);
	return rc;
}

int timeline_units__analyse(struct prof_store *s, struct timeline_units *memo, int need, struct prof_error *err)
{
	struct idle_units u;
	int rc = units__analyse(s, memo, need, &u, err);

	if (rc == 0)
		units__exit(&u);
	return rc;
}

/* ---- the reports -------------------------------------------------------------- */

int timeline__gpu_idle_sum(struct prof_store *s, struct timeline_units *memo, struct rpt_sink *sink,
			   struct prof_error *err)
{
	struct idle_units u;
	int rc = units__analyse(s, memo, TIMELINE_IDLE, &u, err);

	if (rc)
		return rc;
	rc = window_rows(&u, sink);
	if (rc >= 0)
		rc = cause_rows(&u, sink);
	if (rc >= 0)
		rc = top_rows(&u, sink);
	if (rc >= 0)
		rc = step_rows(&u, sink);
	if (rc >= 0)
		rc = wait_rows(&u, sink);
	units__exit(&u);
	return rc < 0 ? sink_failed(rc, err) : 0;
}

int summary__gpu_idle_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct timeline_units memo = { 0 };
	int rc = timeline__gpu_idle_sum(s, &memo, sink, err);

	timeline_units__exit(&memo);
	return rc;
}

static int critical_path_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Step", RPT_INT, 0 },            { "Steps", RPT_INT, 0 },
		{ "Start (ns)", RPT_INT, 0 },      { "Span (ns)", RPT_INT, 0 },
		{ "Segments", RPT_INT, 0 },        { "Launches", RPT_INT, 0 },
		{ "Syncs", RPT_INT, 0 },           { "Copy Waits", RPT_INT, 0 },
		{ "Stream Order", RPT_INT, 0 },    { "Cross-Stream (inferred)", RPT_INT, 0 },
		{ "Note", RPT_TEXT, 0 },
	};
	int rc = table_begin(sink, u, "critical_path", "Critical Path of the Median Step", cols, 11);

	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct critical_path *cp = u->v[k]->cp;
		struct rpt_cell row[] = {
			cp->step ? int_cell(cp->step) : null_cell(), int_cell(cp->nsteps),
			cp->step ? time_cell(u, cp->start_ns) : null_cell(),
			cp->step ? int_cell(prof_span_saturated(cp->start_ns, cp->end_ns)) : null_cell(),
			int_cell(cp->nseg),
			int_cell(cp->edges[CP_EDGE_LAUNCH]), int_cell(cp->edges[CP_EDGE_SYNC]),
			int_cell(cp->edges[CP_EDGE_COPY]), int_cell(cp->edges[CP_EDGE_STREAM]),
			int_cell(cp->edges[CP_EDGE_EVENT]),
			text_cell(!cp->step ? cp->why_none : u->v[k]->replayed ? REPLAY_NOTE : NULL),
		};

		/* a process without GPU work has no path to tell of */
		if (u->v[k]->has_gpu_work)
			rc = table_row(sink, u->v[k], row, 11);
	}
	if (rc >= 0)
		rc = note_left_out(sink, u);
	return rc < 0 ? rc : sink->end(sink);
}

static int part_rows(const struct idle_units *u, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Span (%)", RPT_PERCENT, 1 }, { "Time (ns)", RPT_INT, 0 },
		{ "Segments", RPT_INT, 0 },     { "Kind", RPT_TEXT, 0 },
		{ "Part", RPT_SYMBOL, 0 },      { "Inferred", RPT_TEXT, 0 },
	};
	int rc = table_begin(sink, u, "critical_path_parts", "Critical Path: Parts", cols, 6);

	for (int k = 0; rc >= 0 && k < u->n; k++) {
		const struct critical_path *cp = u->v[k]->cp;

		for (int i = 0; rc >= 0 && i < cp->nparts; i++) {
			const struct cp_part *p = &cp->parts[i];
			struct rpt_cell row[] = {
				real_cell(percent(p->time_ns, cp->end_ns - cp->start_ns)), int_cell(p->time_ns),
				int_cell(p->count), text_cell(p->kind), text_cell(p->label),
				text_cell(p->inferred ? "yes" : "no"),
			};
			rc = table_row(sink, u->v[k], row, 6);
		}
	}
	return rc < 0 ? rc : sink->end(sink);
}

int timeline__critical_path(struct prof_store *s, struct timeline_units *memo, struct rpt_sink *sink,
			    struct prof_error *err)
{
	struct idle_units u;
	int rc = units__analyse(s, memo, TIMELINE_PATH, &u, err);

	if (rc)
		return rc;
	rc = critical_path_rows(&u, sink);
	if (rc >= 0)
		rc = part_rows(&u, sink);
	units__exit(&u);
	return rc < 0 ? sink_failed(rc, err) : 0;
}

int summary__critical_path(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct timeline_units memo = { 0 };
	int rc = timeline__critical_path(s, &memo, sink, err);

	timeline_units__exit(&memo);
	return rc;
}

static const struct rpt_report reports[] = {
	{ "gpu_idle_sum", "GPU Idle Time by Cause", summary__gpu_idle_sum },
	{ "critical_path", "Critical Path of the Median Step", summary__critical_path },
};

const struct rpt_report *timeline__reports(size_t *n)
{
	*n = sizeof reports / sizeof reports[0];
	return reports;
}
