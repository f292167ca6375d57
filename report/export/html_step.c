/* html_step.c - the HTML report's picture of one step: the step of median
 * span that the critical path walks (timeline/critical_path.h), drawn as
 * inline SVG with a lane per host thread (its NVTX ranges over its CUDA
 * calls) and per GPU stream (kernels, copies, memsets), a lane per GPU for
 * its idle stretches coloured by their cause (timeline/gpu_idle.h's
 * attribution of each stretch), and the critical path over it all.
 *
 * The rows are the walk's own (one query per table, for one step); the
 * NVTX ranges are one more query. A job is drawn on one rank: the
 * straggler the diagnosis names, else the first rank. */
#include "html_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/timeline/critical_path.h"
#include "analysis/timeline/gpu_idle.h"
#include "analysis/timeline/timeline_units.h"
#include "html_svg.h"
#include "prof/escape.h"
#include "prof/event.h"
#include "prof/tables.h"
#include "sink/symbol.h"
#include "model/ranks.h"
#include "model/thread_label.h"
#include "prof/error.h"

/* Layout, in SVG units (the picture scales to the page's width). */
#define STEP_WIDTH 1240.0
#define STEP_LABEL_W 170.0
#define STEP_PLOT_W (STEP_WIDTH - STEP_LABEL_W - 10)
#define STEP_ROW_H 20.0
#define STEP_NVTX_DEPTH 3

struct nvtx_range {
	int64_t start_ns, end_ns, tid;
	int depth;
	char *text;
};

enum lane_kind { LANE_THREAD, LANE_STREAM, LANE_IDLE };

struct lane {
	enum lane_kind kind;
	int64_t tid;                      /* LANE_THREAD */
	int64_t pid, device_id, stream_id; /* LANE_STREAM; device_id LANE_IDLE */
	int depth;                        /* LANE_THREAD: NVTX rows above the calls */
	double y, h;
};

/* A kernel's name by its StringIds id, as gpu_work__string reads it. */
struct kernel_name {
	int64_t id;
	char name[512];
};

struct picture {
	FILE *out;
	struct prof_store *store;
	const struct critical_path *cp;
	const struct cp_step_rows *rows;
	struct cp_data d;
	struct nvtx_range *nvtx;
	int nnvtx, cap_nvtx;
	struct lane *lanes;
	int nlanes, cap_lanes;
	int64_t step_tid;                 /* the thread whose range is the step (0: none) */
	struct sum_thread_labels *threads; /* NULL: "thread TID" */
	struct kernel_name *names;        /* of the step's kernels, by id */
	int nnames;
};

static double x_of(const struct picture *pc, int64_t t)
{
	int64_t span = pc->cp->end_ns - pc->cp->start_ns;

	if (t < pc->cp->start_ns)
		t = pc->cp->start_ns;
	if (t > pc->cp->end_ns)
		t = pc->cp->end_ns;
	return STEP_LABEL_W + STEP_PLOT_W * (double)(t - pc->cp->start_ns) / (double)(span > 0 ? span : 1);
}

/* ---- lanes ------------------------------------------------------------------ */

static int lane_add(struct picture *pc, struct lane l)
{
	for (int i = 0; i < pc->nlanes; i++) {
		const struct lane *o = &pc->lanes[i];

		if (o->kind == l.kind && o->tid == l.tid && o->pid == l.pid && o->device_id == l.device_id &&
		    o->stream_id == l.stream_id)
			return i;
	}
	if (array__grow((void **)&pc->lanes, &pc->cap_lanes, pc->nlanes + 1, sizeof *pc->lanes))
		return -1;
	pc->lanes[pc->nlanes] = l;
	return pc->nlanes++;
}

static int lane_order(const void *x, const void *y)
{
	const struct lane *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == LANE_THREAD)
		return (a->tid > b->tid) - (a->tid < b->tid);
	if (a->device_id != b->device_id)
		return a->device_id < b->device_id ? -1 : 1;
	if (a->kind == LANE_IDLE)
		return 0;
	return stream_key__cmp(a->pid, a->device_id, a->stream_id, b->pid, b->device_id, b->stream_id);
}

static const struct lane *thread_lane(const struct picture *pc, int64_t tid)
{
	for (int i = 0; i < pc->nlanes; i++)
		if (pc->lanes[i].kind == LANE_THREAD && pc->lanes[i].tid == tid)
			return &pc->lanes[i];
	return NULL;
}

static const struct lane *stream_lane(const struct picture *pc, const struct gpu_work *w)
{
	for (int i = 0; i < pc->nlanes; i++) {
		const struct lane *l = &pc->lanes[i];

		if (l->kind == LANE_STREAM && l->pid == w->pid && l->device_id == w->device_id &&
		    l->stream_id == w->stream_id)
			return l;
	}
	return NULL;
}

static bool in_step(const struct picture *pc, int64_t start, int64_t end)
{
	return end > pc->cp->start_ns && start < pc->cp->end_ns;
}

/* Every thread with calls or ranges in the step, every stream with work in
 * it and an idle lane per GPU; the step's own thread first among threads. */
static int make_lanes(struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;
	double y = 24;

	for (int i = 0; i < r->ncalls; i++)
		if (in_step(pc, r->calls[i].start_ns, r->calls[i].end_ns) &&
		    lane_add(pc, (struct lane){ .kind = LANE_THREAD, .tid = r->calls[i].tid }) < 0)
			return PROF_E_NOMEM;
	for (int i = 0; i < pc->nnvtx; i++)
		if (lane_add(pc, (struct lane){ .kind = LANE_THREAD, .tid = pc->nvtx[i].tid }) < 0)
			return PROF_E_NOMEM;
	for (int i = 0; i < r->nwork; i++) {
		const struct gpu_work *w = &r->work[i];

		if (!in_step(pc, w->start_ns, w->end_ns))
			continue;
		if (lane_add(pc, (struct lane){ .kind = LANE_STREAM, .pid = w->pid, .device_id = w->device_id,
						.stream_id = w->stream_id }) < 0 ||
		    lane_add(pc, (struct lane){ .kind = LANE_IDLE, .device_id = w->device_id }) < 0)
			return PROF_E_NOMEM;
	}
	if (pc->nlanes > 1)
		qsort(pc->lanes, (size_t)pc->nlanes, sizeof *pc->lanes, lane_order);
	for (int i = 0; i < pc->nlanes; i++)
		if (pc->lanes[i].kind == LANE_THREAD && pc->lanes[i].tid == pc->step_tid && i > 0) {
			struct lane first = pc->lanes[i];

			memmove(&pc->lanes[1], &pc->lanes[0], sizeof *pc->lanes * (size_t)i);
			pc->lanes[0] = first;
		}
	for (int i = 0; i < pc->nnvtx; i++) {
		struct lane *l = (struct lane *)thread_lane(pc, pc->nvtx[i].tid);

		if (l && pc->nvtx[i].depth + 1 > l->depth)
			l->depth = pc->nvtx[i].depth + 1 > STEP_NVTX_DEPTH ? STEP_NVTX_DEPTH : pc->nvtx[i].depth + 1;
	}
	for (int i = 0; i < pc->nlanes; i++) {
		struct lane *l = &pc->lanes[i];

		l->h = STEP_ROW_H * (l->kind == LANE_THREAD ? 1 + l->depth : 1) + 6;
		l->y = y;
		y += l->h;
	}
	return 0;
}

/* ---- NVTX ranges --------------------------------------------------------- */

static int load_nvtx(struct picture *pc, struct prof_error *err)
{
	static const char sql[] =
		"SELECT n.start, n.end, coalesce(n.globalTid, 0), coalesce(s.value, n.text) FROM " PROF_T_NVTX
		" AS n LEFT JOIN " PROF_T_STRINGS " AS s ON s.id = n.textId WHERE n.eventType IN ("
		PROF_SQL_NVTX_RANGES ") AND n.end IS NOT NULL AND n.end > ?1 AND n.start < ?2 "
		"ORDER BY 3, n.start, n.end DESC";
	struct prof_cursor *c = NULL;
	char *q;
	int rc;

	if (!prof_store__has_table(pc->store, PROF_T_NVTX))
		return 0;
	q = strdup(sql);
	rc = range_cursor__open(pc->store, q, pc->cp->start_ns, pc->cp->end_ns, NULL, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		struct nvtx_range *n;
		const char *text = prof_cursor__text(c, 3);

		if (array__grow((void **)&pc->nvtx, &pc->cap_nvtx, pc->nnvtx + 1, sizeof *pc->nvtx)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		n = &pc->nvtx[pc->nnvtx];
		*n = (struct nvtx_range){ prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
					  prof_cursor__int64(c, 2), 0, strdup(text ? text : "") };
		if (!n->text) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		/* nesting on its thread: the ranges still open at its start */
		for (int j = pc->nnvtx - 1; j >= 0 && pc->nvtx[j].tid == n->tid; j--)
			if (pc->nvtx[j].end_ns > n->start_ns && pc->nvtx[j].depth + 1 > n->depth)
				n->depth = pc->nvtx[j].depth + 1;
		pc->nnvtx++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* ---- colours -------------------------------------------------------------- */

static const char *const call_colour[] = {
	[API_LAUNCH] = "#9ecae9", [API_SYNC] = "#b279a2", [API_ALLOC] = "#eeca3b",
	[API_COPY] = "#54a24b",   [API_OTHER] = "#bab0ac",
};

static const char *const cause_colour[IDLE_NCAUSES] = {
	[IDLE_HOST_WORK] = "#f58518",  [IDLE_HOST_SYNC] = "#b279a2", [IDLE_HOST_ALLOC] = "#eeca3b",
	[IDLE_HOST_COPY] = "#9d755d",  [IDLE_HOST_API] = "#d8b5a5",  [IDLE_LAUNCH] = "#e45756",
	[IDLE_STREAM_WAIT] = "#72b7b2", [IDLE_QUEUED] = "#d8d2cf",   [IDLE_UNKNOWN] = "#79706e",
};

static const char *work_colour(const struct gpu_work *w)
{
	return w->kind == GPU_WORK_KERNEL || w->kind == GPU_WORK_GRAPH ? "#4c78a8"
	       : w->kind == GPU_WORK_COPY				 ? "#54a24b"
									 : "#88d27a";
}

/* ---- drawing ------------------------------------------------------------- */

static void rect(FILE *out, double x0, double x1, double y, double h, const char *fill, const char *cls)
{
	double w = x1 - x0;
	char b[4][HTML_SVG_FIXED_MAX];

	fprintf(out, "<rect%s%s%s x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\">",
		cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "", html_svg__fixed(b[0], x0, 2),
		html_svg__fixed(b[1], y, 1), html_svg__fixed(b[2], w < 0.4 ? 0.4 : w, 2),
		html_svg__fixed(b[3], h, 1), fill);
}

/* "<title>NAME: 1.234 ms</title></rect>" */
static void close_rect(FILE *out, const char *what, const char *name, int64_t ns)
{
	char b[32];

	fputs("<title>", out);
	if (what)
		fputs(what, out);
	prof_fputs_html(out, name);
	fprintf(out, ": %s</title></rect>\n", diag__ns(b, sizeof b, ns));
}

static void draw_lane_labels(const struct picture *pc)
{
	FILE *out = pc->out;

	for (int i = 0; i < pc->nlanes; i++) {
		const struct lane *l = &pc->lanes[i];
		char label[96];

		if (l->kind == LANE_THREAD && pc->threads)
			snprintf(label, sizeof label, "%s", sum_thread_labels__get(pc->threads, l->tid));
		else if (l->kind == LANE_THREAD)
			snprintf(label, sizeof label, "thread %" PRIu32, prof_tid_of(l->tid));
		else if (l->kind == LANE_STREAM)
			snprintf(label, sizeof label, "GPU %" PRId64 " stream %" PRId64, l->device_id, l->stream_id);
		else
			snprintf(label, sizeof label, "GPU %" PRId64 " idle", l->device_id);
		fprintf(out, "<rect class=\"lane %s%s\" x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
			l->kind == LANE_THREAD ? "thread" : l->kind == LANE_STREAM ? "stream" : "idle",
			i % 2 ? " odd" : "", l->y, STEP_WIDTH, l->h);
		/* a thread's name is the program's */
		fputs("<g class=\"lane-label\">", out);
		html_svg__label(out, 6, l->y + l->h / 2 + 4, STEP_LABEL_W - 8, label);
		fputs("</g>\n", out);
	}
}

static void draw_nvtx(const struct picture *pc)
{
	for (int i = 0; i < pc->nnvtx; i++) {
		const struct nvtx_range *n = &pc->nvtx[i];
		const struct lane *l = thread_lane(pc, n->tid);
		double x0 = x_of(pc, n->start_ns), x1 = x_of(pc, n->end_ns), y;

		if (!l || n->depth >= STEP_NVTX_DEPTH)
			continue;
		y = l->y + 3 + STEP_ROW_H * n->depth;
		rect(pc->out, x0, x1, y, STEP_ROW_H - 2, "#d4c4e8", "nvtx");
		close_rect(pc->out, "NVTX ", n->text, n->end_ns - n->start_ns);
		html_svg__label(pc->out, x0 + 2, y + 13, x1 - x0 - 4, n->text);
	}
}

static void draw_calls(const struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;

	for (int i = 0; i < r->ncalls; i++) {
		const struct cp_call *k = &r->calls[i];
		const struct lane *l = thread_lane(pc, k->tid);
		const struct api_name *name = api_names__find(&r->names, k->name_id);
		double x0, x1, y;

		if (!l || !in_step(pc, k->start_ns, k->end_ns))
			continue;
		x0 = x_of(pc, k->start_ns);
		x1 = x_of(pc, k->end_ns);
		y = l->y + 3 + STEP_ROW_H * l->depth;
		rect(pc->out, x0, x1, y, STEP_ROW_H - 2, call_colour[k->kind], NULL);
		close_rect(pc->out, NULL, name ? name->name : "CUDA call", k->end_ns - k->start_ns);
		if (name)
			html_svg__label(pc->out, x0 + 2, y + 13, x1 - x0 - 4, name->name);
	}
}

static int by_id(const void *x, const void *y)
{
	const struct kernel_name *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

/* The names of the kernels drawn, read once a name rather than once a box. */
static int load_kernel_names(struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;
	int n = 0;

	for (int i = 0; i < r->nwork; i++)
		n += r->work[i].kind == GPU_WORK_KERNEL;
	if (n == 0)
		return 0;
	pc->names = malloc(sizeof *pc->names * (size_t)n);
	if (!pc->names)
		return PROF_E_NOMEM;
	for (int i = 0; i < r->nwork; i++)
		if (r->work[i].kind == GPU_WORK_KERNEL && in_step(pc, r->work[i].start_ns, r->work[i].end_ns))
			pc->names[pc->nnames++].id = r->work[i].name_id;
	if (pc->nnames > 1)
		qsort(pc->names, (size_t)pc->nnames, sizeof *pc->names, by_id);
	n = 0;
	for (int i = 0; i < pc->nnames; i++)
		if (n == 0 || pc->names[i].id != pc->names[n - 1].id)
			pc->names[n++].id = pc->names[i].id;
	pc->nnames = n;
	for (int i = 0; i < n; i++)
		gpu_work__string(pc->store, pc->names[i].id, pc->names[i].name, sizeof pc->names[i].name);
	return 0;
}

/* What a box of work is called: gpu_work__label's words, a kernel's name
 * from those loaded. */
static const char *work_label(const struct picture *pc, const struct gpu_work *w, char *buf, size_t cap)
{
	const struct kernel_name key = { .id = w->name_id }, *k;

	if (w->kind != GPU_WORK_KERNEL)
		return gpu_work__label(pc->store, w, buf, cap);
	k = pc->nnames ? bsearch(&key, pc->names, (size_t)pc->nnames, sizeof *pc->names, by_id) : NULL;
	snprintf(buf, cap, "%s", k ? k->name : "?");
	return buf;
}

static void draw_work(const struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;

	for (int i = 0; i < r->nwork; i++) {
		const struct gpu_work *w = &r->work[i];
		const struct lane *l = stream_lane(pc, w);
		char full[640], small[256];
		double x0, x1;

		if (!l || !in_step(pc, w->start_ns, w->end_ns))
			continue;
		x0 = x_of(pc, w->start_ns);
		x1 = x_of(pc, w->end_ns);
		work_label(pc, w, full, sizeof full);
		rect(pc->out, x0, x1, l->y + 3, l->h - 6, work_colour(w), NULL);
		close_rect(pc->out, NULL, full, w->end_ns - w->start_ns);
		rpt_symbol__shorten(full, RPT_SYMBOL_SHORT, small, sizeof small);
		fputs("<g class=\"on-dark\">", pc->out);
		html_svg__label(pc->out, x0 + 2, l->y + l->h / 2 + 4, x1 - x0 - 4, small);
		fputs("</g>\n", pc->out);
	}
}

/* What the idle stretch [from, to) of a GPU waited for, by the work w that
 * ends it (NULL: none in the step), as gpu_idle.c attributes a stretch. */
static enum idle_cause stretch_cause(const struct picture *pc, int64_t from, int64_t to, int wi,
				     int64_t by_cause[IDLE_NCAUSES])
{
	const struct cp_step_rows *r = pc->rows;
	const struct gpu_work *w = wi >= 0 ? &r->work[wi] : NULL;
	struct idle_stretch s = { .start_ns = from, .end_ns = to };
	struct idle_host_call calls[64];
	int n = 0, prev;

	memset(by_cause, 0, sizeof(int64_t) * IDLE_NCAUSES);
	if (!w) {
		by_cause[IDLE_UNKNOWN] = to - from;
		return IDLE_UNKNOWN;
	}
	if (w->has_launch) {
		const struct api_name *name = api_names__find(&r->names, w->launch_name_id);

		prev = pc->d.prev_on_stream ? pc->d.prev_on_stream[wi] : -1;
		s.has_launch = true;
		s.launch_start_ns = w->launch_start_ns;
		s.launch_end_ns = w->launch_end_ns;
		s.launch_kind = name ? name->kind : API_LAUNCH;
		s.stream_waited = cp_data__waited_between(&pc->d, w,
							  prev >= 0 && r->work[prev].has_launch
								  ? r->work[prev].launch_start_ns : INT64_MIN,
							  w->launch_start_ns);
		/* the submitting thread's calls in the stretch, latest first: back
		 * from the last that starts in it until no earlier call reaches it
		 * (cover: the call of the thread, started no later, that ends last) */
		for (int i = cp_data__last_call_before(&pc->d, w->launch_tid, to);
		     i >= 0 && r->calls[i].tid == w->launch_tid && r->calls[pc->d.cover[i]].end_ns > from &&
		     n < (int)(sizeof calls / sizeof calls[0]);
		     i--)
			if (r->calls[i].end_ns > from)
				calls[n++] = (struct idle_host_call){ r->calls[i].start_ns, r->calls[i].end_ns,
								      r->calls[i].kind };
		for (int i = 0, j = n - 1; i < j; i++, j--) {
			struct idle_host_call x = calls[i];

			calls[i] = calls[j];
			calls[j] = x;
		}
	}
	idle__attribute(&s, calls, n, NULL, by_cause, NULL);
	return idle__dominant(by_cause);
}

static void draw_idle(const struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;

	for (int li = 0; li < pc->nlanes; li++) {
		const struct lane *l = &pc->lanes[li];
		int64_t busy_to = pc->cp->start_ns;

		if (l->kind != LANE_IDLE)
			continue;
		/* work by start: a stretch ends where the next work begins */
		for (int i = 0; i <= r->nwork; i++) {
			const struct gpu_work *w = i < r->nwork ? &r->work[i] : NULL;
			int64_t from = busy_to, to = w ? w->start_ns : pc->cp->end_ns, by_cause[IDLE_NCAUSES];
			enum idle_cause cause;
			char what[160];

			if (w && w->device_id != l->device_id)
				continue;
			if (to > pc->cp->end_ns)
				to = pc->cp->end_ns;
			if (to > from) {
				cause = stretch_cause(pc, from, to, w && w->start_ns <= pc->cp->end_ns ? i : -1,
						      by_cause);
				snprintf(what, sizeof what, "idle, %s", idle_cause__title(cause));
				rect(pc->out, x_of(pc, from), x_of(pc, to), l->y + 3, l->h - 6, cause_colour[cause],
				     "idle");
				close_rect(pc->out, NULL, what, to - from);
			}
			if (w && w->end_ns > busy_to)
				busy_to = w->end_ns;
		}
	}
}

/* The lane a segment of the path lies on, and its middle. */
static bool segment_y(const struct picture *pc, const struct cp_segment *s, double *y)
{
	const struct lane *l = s->work >= 0 && s->work < pc->rows->nwork ? stream_lane(pc, &pc->rows->work[s->work])
			       : thread_lane(pc, s->tid);

	if (!l)
		return false;
	*y = l->kind == LANE_THREAD ? l->y + 3 + STEP_ROW_H * l->depth + (STEP_ROW_H - 2) / 2 : l->y + l->h / 2;
	return true;
}

static void draw_path(const struct picture *pc)
{
	const struct cp_step_rows *r = pc->rows;
	double last_x = -1, last_y = -1;

	fputs("<g class=\"path\">\n", pc->out);
	for (int i = 0; i < r->nseg; i++) {
		const struct cp_segment *s = &r->seg[i];
		double y, x0 = x_of(pc, s->start_ns), x1 = x_of(pc, s->end_ns);
		char b[32];

		if (!segment_y(pc, s, &y))
			continue;
		if (last_x >= 0 && last_y != y)
			fprintf(pc->out, "<line class=\"hop\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>\n",
				last_x, last_y, x0, y);
		fprintf(pc->out, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"><title>critical path: ",
			x0, y, x1 > x0 + 1 ? x1 : x0 + 1, y);
		prof_fputs_html(pc->out, cp_kind__name(s->kind, s->kind == CP_GPU && s->ref >= 0 ? &r->work[s->ref] : NULL));
		fprintf(pc->out, ", %s</title></line>\n", diag__ns(b, sizeof b, s->end_ns - s->start_ns));
		last_x = x1;
		last_y = y;
	}
	fputs("</g>\n", pc->out);
}

static void swatch(FILE *out, const char *colour, const char *what)
{
	fprintf(out, "<li><span class=\"swatch\" style=\"background:%s\"></span>%s</li>", colour, what);
}

static void draw_legend(FILE *out)
{
	fputs("<ul class=\"keys\">", out);
	swatch(out, "#d4c4e8", "NVTX range");
	swatch(out, call_colour[API_LAUNCH], "CUDA call: launch");
	swatch(out, call_colour[API_SYNC], "synchronisation");
	swatch(out, call_colour[API_ALLOC], "allocation, free");
	swatch(out, call_colour[API_COPY], "copy call");
	swatch(out, call_colour[API_OTHER], "other call");
	swatch(out, "#4c78a8", "kernel");
	swatch(out, "#54a24b", "copy");
	swatch(out, "#88d27a", "memset");
	fputs("<li><span class=\"swatch path\"></span>critical path</li></ul>\n<ul class=\"keys\">"
	      "<li>GPU idle, by cause:</li>", out);
	for (int c = 0; c < IDLE_NCAUSES; c++)
		swatch(out, cause_colour[c], idle_cause__title((enum idle_cause)c));
	fputs("</ul>\n", out);
}

static void draw(struct picture *pc, int rank)
{
	FILE *out = pc->out;
	const struct lane *last = &pc->lanes[pc->nlanes - 1];
	double height = last->y + last->h + 28;
	int64_t span = pc->cp->end_ns - pc->cp->start_ns;
	char b[32];

	fprintf(out, "<p>Step %d of %d, the median step (%s, from its start to the end of its last work)",
		pc->cp->step, pc->cp->nsteps, diag__ns(b, sizeof b, span));
	if (rank >= 0)
		fprintf(out, " of rank %d", rank);
	fputs(": each thread's NVTX ranges and CUDA calls, each stream's GPU work, each GPU's idle time by "
	      "cause, and the critical path (the chain of work and waits that sets the step's length) "
	      "drawn over them. Hover over a box for its name and time.</p>\n", out);
	fprintf(out, "<figure class=\"step\">\n<svg class=\"step\" viewBox=\"0 0 %.0f %.0f\" data-step=\"%d\" "
		"data-span-ns=\"%" PRId64 "\" role=\"img\" aria-label=\"one step\">\n",
		STEP_WIDTH, height, pc->cp->step, span);
	draw_lane_labels(pc);
	html_svg__time_axis(out, STEP_LABEL_W, STEP_PLOT_W, 20, last->y + last->h + 4, span);
	draw_nvtx(pc);
	draw_calls(pc);
	draw_work(pc);
	draw_idle(pc);
	draw_path(pc);
	fputs("</svg>\n<figcaption>Time from the step's start.</figcaption>\n</figure>\n", out);
	draw_legend(out);
}

/* ---- the section ----------------------------------------------------------- */

/* The rank to draw: the straggler the diagnosis names, else the first. */
static int pick_rank(struct html_page *p, const struct sum_ranks *ranks)
{
	const char *why;
	const struct diag_report *r = html_page__diagnosis(p, &why);

	for (int i = 0; r && i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, "straggler") && r->findings[i].nranks > 0)
			for (int k = 0; k < ranks->n; k++)
				if (ranks->p[k].rank == r->findings[i].ranks[0].rank && ranks->p[k].selected)
					return k;
	for (int k = 0; k < ranks->n; k++)
		if (ranks->p[k].rank >= 0 && ranks->p[k].selected)
			return k;
	return -1;
}

/* The step of the process the store's views show (rank: its rank, -1:
 * no job), from the critical path the page's diagnosis walked; threads:
 * their labels (NULL: "thread TID"), the caller's. */
static int draw_step(struct html_page *p, int rank, struct sum_thread_labels *threads, struct prof_error *err)
{
	struct picture pc = { .out = html_page__out(p), .store = html_page__store(p), .threads = threads };
	struct timeline_unit *x;
	const struct critical_path *cp;
	int rc;

	/* the idle attribution too: the page shows it, and where the diagnosis
	 * left neither both are made in one context */
	rc = timeline_units__need(pc.store, html_page__timeline(p), rank, TIMELINE_IDLE | TIMELINE_PATH, &x, err);
	if (rc)
		return rc;
	cp = x->cp;
	if (cp->step == 0 || cp->end_ns <= cp->start_ns || x->rows.nwork + x->rows.ncalls == 0) {
		char msg[400];

		snprintf(msg, sizeof msg, "No step to draw: %s.", cp->why_none[0] ? cp->why_none : "the step is empty");
		html_page__note(p, msg);
		return 0;
	}
	/* the thread whose NVTX range marks the steps */
	pc.step_tid = x->rows.step_tid;
	pc.cp = cp;
	pc.rows = &x->rows;
	pc.d = (struct cp_data){ .work = x->rows.work, .nwork = x->rows.nwork, .calls = x->rows.calls,
				 .ncalls = x->rows.ncalls, .waits = x->rows.waits, .nwaits = x->rows.nwaits };
	if (cp_data__index(&pc.d) || load_kernel_names(&pc) || (rc = load_nvtx(&pc, err)) != 0 ||
	    (rc = make_lanes(&pc)) != 0) {
		rc = rc ? rc : prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	if (pc.nlanes > 0)
		draw(&pc, rank);
out:
	cp_data__exit(&pc.d);
	for (int i = 0; i < pc.nnvtx; i++)
		free(pc.nvtx[i].text);
	free(pc.nvtx);
	free(pc.lanes);
	free(pc.names);
	return rc;
}

int html_step__render(struct html_page *p, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	struct prof_error why = { 0 }, ignored = { 0 };
	struct sum_thread_labels *threads = NULL;
	struct sum_ranks ranks;
	bool job = false, alone = false;
	int k, rc;

	(void)err;
	/* Threads unnamed where their names cannot be read: the picture is
	 * worth more. Read before a rank's scope: a label is its thread's
	 * alone (its name, its process's, its own calls), the same in the
	 * scope of its process, and the store not yet scoped shares the labels
	 * the page's flame graph read (sum_thread_labels__load), where the
	 * scope read them again, a pass over every call. */
	if (sum_thread_labels__load(s, &threads, &ignored) < 0)
		threads = NULL;
	if (sum_ranks__may_be_job(s)) {
		if (sum_ranks__load(s, &ranks, &why) < 0)
			goto failed;
		job = sum_ranks__is_job(&ranks);
		if (!job)
			sum_ranks__exit(&ranks);
	}
	if (!job) {
		if (draw_step(p, -1, threads, &why) < 0)
			goto failed;
		sum_thread_labels__delete(threads);
		return 0;
	}
	k = pick_rank(p, &ranks);
	/* a capture of the rank's rows alone is read as it is: its scope's
	 * views show the same rows, and setting them up reads every table */
	rc = k < 0 ? 0 : sum_ranks__holds_only(s, ranks.p[k].global_pid, &alone, &why);
	if (rc == 0 && k >= 0 && !alone)
		rc = sum_ranks__scope(s, ranks.p[k].global_pid, &why);
	if (rc == 0 && k >= 0)
		rc = draw_step(p, ranks.p[k].rank, threads, &why);
	if (!alone)
		sum_ranks__unscope(s, rc < 0 ? &ignored : &why);
	sum_ranks__exit(&ranks);
	if (rc < 0 || why.code < 0)
		goto failed;
	sum_thread_labels__delete(threads);
	return 0;
failed:
	{
		char msg[PROF_ERROR_MSG_MAX + 64];

		snprintf(msg, sizeof msg, "The step could not be drawn: %s", why.msg);
		html_page__note(p, msg);
	}
	sum_thread_labels__delete(threads);
	return 0;
}
