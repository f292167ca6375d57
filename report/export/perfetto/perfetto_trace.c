/* perfetto_trace.c - the native Perfetto trace export (see perfetto_trace.h).
 *
 * The events come from the shared merge (trace_merge.h) in start order, the
 * one the Chrome trace prints; here each becomes TrackEvent packets on one
 * sequence (pf_sequence.h) with its slices kept nested per track
 * (pf_tracks.h). Flows: an API call lists an id per piece of GPU work it
 * launched (the work's table and rowid, from the merge's launch rows) and
 * the work ends the flow with the same id, so no state joins the two. */
#include "export/perfetto_trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "export/trace_ahead.h"
#include "export/trace_merge.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/ranks.h"
#include "pf_sequence.h"
#include "pf_tracks.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define SEQUENCE_ID 1
/* GPU busy is sampled in this many bins over the exported window. */
#define BUSY_BINS 1000
#define MIN_BIN_NS 1000

/* The union of the GPU work on one device, laid into time bins. */
struct busy {
	int32_t device;
	size_t track;
	int64_t cur_start_ns, cur_end_ns;  /* the merged interval being built */
	bool have_cur;
	int64_t next_bin;                  /* first bin not written yet */
	int64_t bin_busy_ns;               /* busy time so far in next_bin */
};

struct pf_ctx {
	struct trace_merge m;
	struct sum_ranks ranks;       /* a job's ranks name its processes */
	bool per_rank;
	struct pf_sequence q;
	struct pf_tracks t;
	struct busy *busy;
	size_t nbusy;
	int64_t lo_ns, hi_ns, bin_ns;      /* the window the bins cover */
	int64_t nbins;                     /* bins of bin_ns in the window, the last cut short */
	/* the event being made */
	Perfetto__Protos__TrackEvent ev;
	Perfetto__Protos__DebugAnnotation *args, **argp;
	size_t nargs, cap_args;
	uint64_t category;
	uint64_t terminating_flow; /* a GPU row's one flow id */
	const struct tm_launch *launch; /* the row's being written: its call */
	/* a kernel's grid and block as interned text, kept while the next
	 * kernel's are the same (most of a loop's are) */
	struct dims_iid {
		int64_t v[3];
		uint64_t iid, generation; /* generation: pf_sequence's, when iid was taken */
	} grid, block;
	struct prof_error *err;
};

static int nomem(struct pf_ctx *c)
{
	if (c->q.rc == 0)
		c->q.rc = prof_error__set(c->err, PROF_E_NOMEM, "out of memory");
	return c->q.rc;
}

/* ---- the event being made ----------------------------------------------- */

/* category: a string literal (pf_sequence__intern_literal) */
static void ev_start(struct pf_ctx *c, Perfetto__Protos__TrackEvent__Type type, uint64_t track,
		     const char *category, const char *name)
{
	c->ev = (Perfetto__Protos__TrackEvent)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	c->nargs = 0;
	pf_sequence__begin(&c->q);
	c->ev.has_type = c->ev.has_track_uuid = 1;
	c->ev.type = type;
	c->ev.track_uuid = track;
	if (category) {
		c->category = pf_sequence__intern_literal(&c->q, PF_CATEGORY, category);
		c->ev.n_category_iids = 1;
		c->ev.category_iids = &c->category;
	}
	if (name) {
		c->ev.has_name_iid = 1;
		c->ev.name_iid = pf_sequence__intern(&c->q, PF_EVENT_NAME, name);
	}
}

/* literal: name is a string literal (pf_sequence__intern_literal), as
 * every argument's of an event is; the capture's own names are not */
static Perfetto__Protos__DebugAnnotation *arg_add(struct pf_ctx *c, const char *name, bool literal)
{
	Perfetto__Protos__DebugAnnotation *a;

	if (c->nargs == c->cap_args) {
		size_t cap = c->cap_args ? c->cap_args * 2 : 16;
		Perfetto__Protos__DebugAnnotation *args = malloc(cap * sizeof *args);
		Perfetto__Protos__DebugAnnotation **argp = malloc(cap * sizeof *argp);

		if (!args || !argp) {
			free(args);
			free(argp);
			nomem(c);
			return NULL;
		}
		if (c->nargs)
			memcpy(args, c->args, c->nargs * sizeof *args);
		free(c->args);
		free(c->argp);
		c->args = args;
		c->argp = argp;
		c->cap_args = cap;
	}
	a = &c->args[c->nargs++];
	*a = (Perfetto__Protos__DebugAnnotation)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a->has_name_iid = 1;
	a->name_iid = literal ? pf_sequence__intern_literal(&c->q, PF_ARG_NAME, name)
			      : pf_sequence__intern(&c->q, PF_ARG_NAME, name);
	return a;
}

static void arg_int_named(struct pf_ctx *c, const char *name, bool literal, int64_t v)
{
	Perfetto__Protos__DebugAnnotation *a = arg_add(c, name, literal);

	if (a) {
		a->has_int_value = 1;
		a->int_value = v;
	}
}

/* name: a string literal */
static void arg_int(struct pf_ctx *c, const char *name, int64_t v)
{
	arg_int_named(c, name, true, v);
}

/* name: a string literal */
static void arg_double(struct pf_ctx *c, const char *name, double v)
{
	Perfetto__Protos__DebugAnnotation *a = arg_add(c, name, true);

	if (a) {
		a->has_double_value = 1;
		a->double_value = v;
	}
}

/* A kernel's three dimensions as "[x, y, z]", interned: the id d keeps
 * while they and the sequence's state stay the same. */
static uint64_t dims_iid(struct pf_ctx *c, struct dims_iid *d, int64_t x, int64_t y, int64_t z)
{
	char text[96];

	if (d->iid && d->generation == c->q.generation && d->v[0] == x && d->v[1] == y &&
	    d->v[2] == z)
		return d->iid;
	snprintf(text, sizeof text, "[%" PRId64 ", %" PRId64 ", %" PRId64 "]", x, y, z);
	*d = (struct dims_iid){ .v = { x, y, z }, .generation = c->q.generation,
				.iid = pf_sequence__intern(&c->q, PF_ARG_STRING, text) };
	return d->iid;
}

/* A value repeated across events, interned after the argument's name (the
 * order the ids are given in): a kernel's dimensions (d), or a literal
 * (text, with d NULL). name: a string literal. */
static void arg_repeated(struct pf_ctx *c, const char *name, struct dims_iid *d, const int64_t *v,
			 const char *text)
{
	Perfetto__Protos__DebugAnnotation *a = arg_add(c, name, true);

	if (a) {
		a->has_string_value_iid = 1;
		a->string_value_iid = d ? dims_iid(c, d, v[0], v[1], v[2])
					: pf_sequence__intern_literal(&c->q, PF_ARG_STRING, text);
	}
}

/* name: the capture's own (a column's, a key's) */
static void arg_text(struct pf_ctx *c, const char *name, const char *v)
{
	Perfetto__Protos__DebugAnnotation *a = arg_add(c, name, false);

	if (a)
		a->string_value = pf_sequence__text(&c->q, v);
}

static int ev_write(struct pf_ctx *c, int64_t ts_ns)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	for (size_t i = 0; i < c->nargs; i++)
		c->argp[i] = &c->args[i];
	c->ev.n_debug_annotations = c->nargs;
	c->ev.debug_annotations = c->argp;
	p.track_event = &c->ev;
	return pf_sequence__write(&c->q, &p, ts_ns);
}

static int descriptor_write(struct pf_ctx *c, Perfetto__Protos__TrackDescriptor *d)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	p.track_descriptor = d;
	return pf_sequence__write(&c->q, &p, -1);
}

/* A slice [start, end) on track: the BEGIN now, the END from pf_tracks. */
static int slice_start(struct pf_ctx *c, size_t track, int64_t start_ns, int64_t end_ns,
		       const char *category, const char *name)
{
	uint64_t uuid;
	int rc = pf_tracks__open(&c->t, track, start_ns, end_ns, &uuid);

	if (rc == 0)
		ev_start(c, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, uuid, category,
			 name);
	return rc;
}

/* ---- tracks ------------------------------------------------------------- */

/* A process or thread track. One process per captured process; in a job
 * (several processes with CUDA work, or ranks the launcher numbered) a
 * rank's process is named "rank N · host · GPU" and labelled "rank N". */
static int host_track(struct pf_ctx *c, bool thread, int64_t id, const char *name)
{
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	int rc = pf_tracks__add(&c->t, thread ? PF_TRACK_THREAD : PF_TRACK_PROCESS, id, 0, 0,
				&d.uuid);

	if (rc <= 0)
		return rc;
	d.has_uuid = 1;
	if (thread) {
		td.has_pid = td.has_tid = 1;
		td.pid = (int32_t)prof_pid_of(id);
		td.tid = (int32_t)prof_tid_of(id);
		td.thread_name = pf_sequence__text(&c->q, name);
		d.thread = &td;
	} else {
		char label[320], rank[32];
		char *labels[1];

		pd.has_pid = 1;
		pd.pid = (int32_t)(id & 0xFFFFFF); /* id: prof_process_of(globalPid) */
		for (int i = 0; c->per_rank && i < c->ranks.n; i++) {
			const struct sum_process *p = &c->ranks.p[i];

			if (prof_process_of(p->global_pid) != id)
				continue;
			sum_process__label(p, label, sizeof label);
			name = label;
			if (p->rank >= 0) {
				sum_process__rank_name(p, rank, sizeof rank);
				labels[0] = pf_sequence__text(&c->q, rank);
				pd.n_process_labels = 1;
				pd.process_labels = labels;
			}
			break;
		}
		pd.process_name = pf_sequence__text(&c->q, name);
		d.process = &pd;
	}
	return descriptor_write(c, &d);
}

static int process_track(void *ctx, int64_t pid, const char *name)
{
	return host_track(ctx, false, pid, name);
}

static int thread_track(void *ctx, int64_t gt, const char *name)
{
	return host_track(ctx, true, gt, name);
}

/* A stream's track sits in the process that ran work on it. */
static int stream_track(void *ctx, int64_t pid, int64_t device, int64_t stream)
{
	struct pf_ctx *c = ctx;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	size_t process = pf_tracks__find(&c->t, PF_TRACK_PROCESS, pid, 0, 0);
	char name[96];
	int rc = pf_tracks__add(&c->t, PF_TRACK_STREAM, pid, device, stream, &d.uuid);

	if (rc <= 0)
		return rc;
	snprintf(name, sizeof name, "GPU %" PRId64 " stream %" PRId64, device, stream);
	d.has_uuid = 1;
	d.name = name;
	if (process) {
		d.has_parent_uuid = 1;
		d.parent_uuid = pf_tracks__uuid(&c->t, process);
	}
	return descriptor_write(c, &d);
}

static int counter_track(struct pf_ctx *c, enum pf_track_kind kind, int32_t device,
			 uint64_t parent, const char *name,
			 Perfetto__Protos__CounterDescriptor__Unit unit, const char *unit_name)
{
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	int rc = pf_tracks__add(&c->t, kind, device, 0, 0, &d.uuid);

	if (rc <= 0)
		return rc;
	d.has_uuid = d.has_parent_uuid = 1;
	d.parent_uuid = parent;
	d.name = (char *)name;
	cd.has_unit = unit != PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_UNSPECIFIED;
	cd.unit = unit;
	cd.unit_name = (char *)unit_name;
	d.counter = &cd;
	return descriptor_write(c, &d);
}

/* Each GPU: a group track with its memory and busy counters. */
static int gpu_tracks(void *ctx, struct tm_device *dev, bool new_device, int64_t stream)
{
	struct pf_ctx *c = ctx;
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	struct busy *b;
	char label[160];
	int rc;

	(void)stream;
	if (!new_device)
		return 0;
	rc = pf_tracks__add(&c->t, PF_TRACK_GPU, dev->id, 0, 0, &d.uuid);
	if (rc <= 0)
		return rc;
	tm_device__label(dev, label, sizeof label);
	d.has_uuid = 1;
	d.name = pf_sequence__text(&c->q, label);
	rc = descriptor_write(c, &d);
	if (rc == 0)
		rc = counter_track(c, PF_TRACK_GPU_MEMORY, dev->id, d.uuid, "device memory in use",
				   PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES, NULL);
	if (rc == 0)
		rc = counter_track(c, PF_TRACK_GPU_BUSY, dev->id, d.uuid, "busy",
				   PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_UNSPECIFIED, "%");
	if (rc < 0)
		return rc;
	b = realloc(c->busy, (c->nbusy + 1) * sizeof *b);
	if (!b)
		return nomem(c);
	c->busy = b;
	c->busy[c->nbusy++] = (struct busy){
		.device = dev->id, .track = pf_tracks__find(&c->t, PF_TRACK_GPU_BUSY, dev->id, 0, 0),
	};
	return 0;
}

/* ---- metadata ----------------------------------------------------------- */

/* TARGET_INFO_GPU, one argument per column: "GPU 0 smCount". */
static int gpu_info_args(struct pf_ctx *c)
{
	struct prof_cursor *cur = NULL;
	int rc;

	/* every column the file has, in its order: main's table, not the
	 * canonical form (which adds the rowid and the columns it lacks) */
	if (!prof_store__has_table(c->m.store, PROF_T_GPU))
		return 0;
	rc = prof_cursor__open(c->m.store, "SELECT * FROM main." PROF_T_GPU " ORDER BY id", &cur, c->err);
	while (rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0) {
		int64_t id = 0;

		for (int col = 0; col < prof_cursor__columns(cur); col++)
			if (strcmp(prof_cursor__column_name(cur, col), "id") == 0)
				id = prof_cursor__int64(cur, col);
		for (int col = 0; col < prof_cursor__columns(cur); col++) {
			const char *text = prof_cursor__text(cur, col);
			char key[160], *end = NULL;

			if (!text)
				continue;
			snprintf(key, sizeof key, "GPU %" PRId64 " %s", id,
				 prof_cursor__column_name(cur, col));
			strtoll(text, &end, 10);
			if (*text && end && !*end)
				arg_int_named(c, key, false, prof_cursor__int64(cur, col));
			else
				arg_text(c, key, text);
		}
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 0;
}

/* An instant "capture" at the start of a track of its own, holding the run's
 * metadata (command, host, GPU...) and the GPUs' properties as arguments. */
static int write_capture(struct pf_ctx *c)
{
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	struct prof_cursor *cur = NULL;
	int rc = pf_tracks__add(&c->t, PF_TRACK_CAPTURE, 0, 0, 0, &d.uuid);

	if (rc < 0)
		return rc;
	d.has_uuid = 1;
	d.name = "perfkit capture";
	rc = descriptor_write(c, &d);
	if (rc < 0)
		return rc;
	ev_start(c, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, d.uuid, "capture", "capture");
	arg_text(c, "file", prof_store__path(c->m.store));
	rc = prof_cursor__open(c->m.store, "SELECT key, value FROM " PROF_T_META " "
			       "WHERE value IS NOT NULL ORDER BY key", &cur, c->err);
	while (cur && rc >= 0 && (rc = prof_cursor__next(cur, c->err)) > 0)
		arg_text(c, prof_cursor__text(cur, 0), prof_cursor__text(cur, 1));
	prof_cursor__close(cur);
	if (rc >= 0)
		rc = gpu_info_args(c);
	if (rc >= 0)
		rc = ev_write(c, c->m.w.base_ns);
	return rc < 0 ? rc : 0;
}

/* ---- GPU busy per time bin ---------------------------------------------- */

/* The bins are laid out in offsets from lo_ns, which every time in the
 * window has one of between 0 and hi_ns - lo_ns (held at INT64_MAX): a
 * window that ends at INT64_MAX, a kernel's end in a damaged file, then
 * takes 1000 bins like any other, where lo + (bin + 1) * width would
 * overflow and wrap below start, and the loop laying work into the bins
 * would never end. */
static int busy_sample(struct pf_ctx *c, struct busy *b)
{
	int64_t off = b->next_bin * c->bin_ns; /* next_bin < nbins: below the span */
	int64_t start = c->lo_ns + off, left = prof_span_saturated(c->lo_ns, c->hi_ns) - off;
	int64_t len = left < c->bin_ns ? left : c->bin_ns;

	ev_start(c, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER,
		 pf_tracks__uuid(&c->t, b->track), NULL, NULL);
	c->ev.has_double_counter_value = 1;
	c->ev.double_counter_value = len > 0 ? 100.0 * (double)b->bin_busy_ns / (double)len : 0;
	b->next_bin++;
	b->bin_busy_ns = 0;
	return ev_write(c, start);
}

/* Lay the busy interval [start, end) into the bins, writing the bins it
 * leaves behind. */
static int busy_lay(struct pf_ctx *c, struct busy *b, int64_t start, int64_t end)
{
	int64_t from = prof_span_saturated(c->lo_ns, start), to = prof_span_saturated(c->lo_ns, end);
	int rc = 0;

	while (rc == 0 && from < to) {
		int64_t bin = from / c->bin_ns;
		int64_t bin_end = prof_add_saturated(bin * c->bin_ns, c->bin_ns);
		int64_t upto = to < bin_end ? to : bin_end;

		while (rc == 0 && b->next_bin < bin)
			rc = busy_sample(c, b);
		b->bin_busy_ns += upto - from;
		from = upto;
	}
	return rc;
}

/* GPU work arrives in start order: it extends the current union interval
 * or closes it and starts the next. */
static int busy_add(struct pf_ctx *c, int32_t device, int64_t start, int64_t end)
{
	struct busy *b = NULL;
	int rc = 0;

	for (size_t i = 0; i < c->nbusy && !b; i++)
		if (c->busy[i].device == device)
			b = &c->busy[i];
	start = start > c->lo_ns ? start : c->lo_ns;
	end = end < c->hi_ns ? end : c->hi_ns;
	if (!b || end <= start)
		return 0;
	if (b->have_cur && start <= b->cur_end_ns) {
		if (end > b->cur_end_ns)
			b->cur_end_ns = end;
		return 0;
	}
	if (b->have_cur)
		rc = busy_lay(c, b, b->cur_start_ns, b->cur_end_ns);
	b->cur_start_ns = start;
	b->cur_end_ns = end;
	b->have_cur = true;
	return rc;
}

static int busy_finish(struct pf_ctx *c)
{
	int rc = 0;

	for (size_t i = 0; i < c->nbusy && rc == 0; i++) {
		struct busy *b = &c->busy[i];

		if (b->have_cur)
			rc = busy_lay(c, b, b->cur_start_ns, b->cur_end_ns);
		while (rc == 0 && b->next_bin < c->nbins)
			rc = busy_sample(c, b);
	}
	return rc;
}

/* ---- events ------------------------------------------------------------- */

static int emit_api(struct pf_ctx *c, struct prof_cursor *cur, enum tm_kind kind)
{
	size_t track = pf_tracks__find(&c->t, PF_TRACK_THREAD, prof_cursor__int64(cur, TM_API_TID),
				       0, 0);
	uint64_t *launched;
	size_t nlaunched;
	char buf[256];
	int rc;

	if (!track)
		return 0;
	rc = slice_start(c, track, prof_cursor__int64(cur, TM_API_START),
			 prof_cursor__int64(cur, TM_API_END),
			 kind == TM_RUNTIME ? "cuda_runtime" : "cuda_driver",
			 tm_api_name(trace_merge__name(&c->m, cur, TM_API_NAME), buf, sizeof buf));
	if (rc < 0)
		return rc;
	/* the flows tie a call to its work; the work keeps the correlation id.
	 * The ids stay the merge's until its next trace_merge__launched, after
	 * this event is written. */
	rc = trace_merge__launched(&c->m, kind, cur, &launched, &nlaunched);
	if (rc < 0)
		return rc;
	c->ev.n_flow_ids = nlaunched;
	c->ev.flow_ids = launched;
	return ev_write(c, prof_cursor__int64(cur, TM_API_START));
}

static int emit_nvtx(struct pf_ctx *c, struct prof_cursor *cur)
{
	size_t track = pf_tracks__find(&c->t, PF_TRACK_THREAD, prof_cursor__int64(cur, TM_NVTX_TID),
				       0, 0);
	int64_t start = prof_cursor__int64(cur, TM_NVTX_START);
	const char *name = prof_cursor__text(cur, TM_NVTX_NAME);
	int rc = 0;

	if (!track)
		return 0;
	if (prof_cursor__int64(cur, TM_NVTX_IS_MARK))
		ev_start(c, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT,
			 pf_tracks__uuid(&c->t, track), "user_annotation", name ? name : "");
	else
		rc = slice_start(c, track, start, prof_cursor__int64(cur, TM_NVTX_END),
				 "user_annotation", name ? name : "");
	return rc < 0 ? rc : ev_write(c, start);
}

/* The stream track of a GPU row, after its busy time is counted. */
static size_t gpu_track(struct pf_ctx *c, struct prof_cursor *cur, int *rc)
{
	int64_t device = prof_cursor__int64(cur, TM_GPU_DEVICE);

	*rc = busy_add(c, (int32_t)device, prof_cursor__int64(cur, TM_GPU_START),
		       prof_cursor__int64(cur, TM_GPU_END));
	return pf_tracks__find(&c->t, PF_TRACK_STREAM, prof_process_of(prof_cursor__int64(cur, TM_GPU_PID)),
			       device, prof_cursor__int64(cur, TM_GPU_STREAM));
}

/* The BEGIN of a GPU row: name, category, correlation, the flow's end. */
static int gpu_start(struct pf_ctx *c, struct prof_cursor *cur, enum tm_kind kind,
		     const char *category, const char *name)
{
	int rc;
	size_t track = gpu_track(c, cur, &rc);

	if (rc < 0 || !track)
		return rc < 0 ? rc : 1;
	rc = slice_start(c, track, prof_cursor__int64(cur, TM_GPU_START),
			 prof_cursor__int64(cur, TM_GPU_END), category, name);
	if (rc < 0)
		return rc;
	arg_int(c, "correlation", prof_cursor__int64(cur, TM_GPU_CORR));
	if (c->launch->has_start) {
		c->terminating_flow = trace_merge__flow_id(kind, prof_cursor__int64(cur, TM_GPU_ROWID));
		c->ev.n_terminating_flow_ids = 1;
		c->ev.terminating_flow_ids = &c->terminating_flow;
	}
	return rc;
}

static int emit_kernel(struct pf_ctx *c, struct prof_cursor *cur)
{
	double occupancy;
	int64_t grid[3], block[3];
	int rc = gpu_start(c, cur, TM_KERNEL, "kernel", trace_merge__name(&c->m, cur, TM_KERNEL_NAME));

	if (rc != 0)
		return rc < 0 ? rc : 0;
	for (int i = 0; i < 3; i++) {
		grid[i] = prof_cursor__int64(cur, TM_KERNEL_GRID_X + i);
		block[i] = prof_cursor__int64(cur, TM_KERNEL_BLOCK_X + i);
	}
	arg_repeated(c, "grid", &c->grid, grid, NULL);
	arg_repeated(c, "block", &c->block, block, NULL);
	arg_int(c, "registers per thread", prof_cursor__int64(cur, TM_KERNEL_REGISTERS));
	arg_int(c, "shared memory", prof_cursor__int64(cur, TM_KERNEL_STATIC_SHARED) +
		prof_cursor__int64(cur, TM_KERNEL_DYNAMIC_SHARED));
	if (trace_merge__occupancy(&c->m, cur, &occupancy))
		arg_int(c, "theoretical occupancy %", (int64_t)(occupancy * 100.0 + 0.5));
	return ev_write(c, prof_cursor__int64(cur, TM_GPU_START));
}

static int emit_transfer(struct pf_ctx *c, struct prof_cursor *cur, enum tm_kind kind)
{
	int64_t start = prof_cursor__int64(cur, TM_GPU_START), end = prof_cursor__int64(cur, TM_GPU_END);
	int64_t bytes = prof_cursor__int64(cur, TM_COPY_BYTES);
	char name[96];
	int rc;

	if (kind == TM_MEMCPY)
		tm_copy_name(name, sizeof name, prof_cursor__int64(cur, TM_COPY_KIND),
			     prof_cursor__int64(cur, TM_COPY_SRC_KIND),
			     prof_cursor__int64(cur, TM_COPY_DST_KIND));
	else
		tm_set_name(name, sizeof name, prof_cursor__int64(cur, TM_SET_MEM_KIND));
	rc = gpu_start(c, cur, kind, kind == TM_MEMCPY ? "gpu_memcpy" : "gpu_memset", name);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	arg_int(c, "bytes", bytes);
	if (end > start)
		arg_double(c, "memory bandwidth (GB/s)", (double)bytes / (double)(end - start));
	return ev_write(c, start);
}

/* A launch of a CUDA graph recorded whole: one slice for all its nodes. */
static int emit_graph(struct pf_ctx *c, struct prof_cursor *cur)
{
	bool known = !prof_cursor__is_null(cur, TM_GRAPH_ID);
	int64_t graph_id = prof_cursor__int64(cur, TM_GRAPH_ID);
	char name[96];
	int rc;

	sum_graph_launch_name(name, sizeof name, known, graph_id);
	rc = gpu_start(c, cur, TM_GRAPH, "cuda_graph", name);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (known)
		arg_int(c, "graphId", graph_id);
	arg_repeated(c, "nodes", NULL, NULL, "not recorded (--cuda-graph-trace=graph)");
	return ev_write(c, prof_cursor__int64(cur, TM_GPU_START));
}

static int emit_gpu_nvtx(struct pf_ctx *c, const struct tm_span *s, const char *name)
{
	size_t track = pf_tracks__find(&c->t, PF_TRACK_STREAM, s->process, s->device, s->stream);
	int rc;

	if (!track)
		return 0;
	rc = slice_start(c, track, s->start_ns, s->end_ns, "gpu_user_annotation", name);
	return rc < 0 ? rc : ev_write(c, s->start_ns);
}

static int counter_write(struct pf_ctx *c, size_t track, int64_t ts_ns, int64_t value)
{
	ev_start(c, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER, pf_tracks__uuid(&c->t, track),
		 NULL, NULL);
	c->ev.has_counter_value = 1;
	c->ev.counter_value = value;
	return ev_write(c, ts_ns);
}

static int emit_memory(struct pf_ctx *c, struct prof_cursor *cur)
{
	struct tm_memory_step st;
	size_t track;
	int rc = 0;

	trace_merge__memory(&c->m, cur, &st);
	if (!st.d)
		return 0;
	track = pf_tracks__find(&c->t, PF_TRACK_GPU_MEMORY, st.d->id, 0, 0);
	if (!track)
		return 0;
	if (st.at_from)
		rc = counter_write(c, track, c->m.w.from_abs_ns, st.from_bytes);
	if (rc == 0 && st.sample)
		rc = counter_write(c, track, prof_cursor__int64(cur, TM_MEM_START),
				   st.d->mem_in_use_bytes);
	return rc;
}

static int emit(struct pf_ctx *c, const struct tm_row *r)
{
	int64_t start = r->span ? r->span->start_ns : prof_cursor__int64(r->cur, 0);
	int rc = pf_tracks__close_until(&c->t, start);

	if (rc < 0)
		return rc;
	c->launch = &r->launch;
	switch (r->kind) {
	case TM_NVTX: return emit_nvtx(c, r->cur);
	case TM_GPU_NVTX: return emit_gpu_nvtx(c, r->span, r->span_name);
	case TM_RUNTIME:
	case TM_DRIVER: return emit_api(c, r->cur, r->kind);
	case TM_KERNEL: return emit_kernel(c, r->cur);
	case TM_MEMCPY:
	case TM_MEMSET: return emit_transfer(c, r->cur, r->kind);
	case TM_GRAPH: return emit_graph(c, r->cur);
	case TM_MEMORY: return emit_memory(c, r->cur);
	case TM__COUNT: break;
	}
	return 0;
}

/* The window the busy bins cover: the export's, within the capture. */
static void busy_window(struct pf_ctx *c)
{
	const struct export_window *w = &c->m.w;
	int64_t span;

	c->lo_ns = w->from_abs_ns != INT64_MIN ? w->from_abs_ns : w->base_ns;
	c->hi_ns = w->to_abs_ns != INT64_MAX && w->to_abs_ns < w->end_ns ? w->to_abs_ns : w->end_ns;
	if (c->hi_ns < c->lo_ns)
		c->hi_ns = c->lo_ns;
	/* each a quotient rounded up, without adding to the span first */
	span = prof_span_saturated(c->lo_ns, c->hi_ns);
	c->bin_ns = span / BUSY_BINS + (span % BUSY_BINS != 0);
	if (c->bin_ns < MIN_BIN_NS)
		c->bin_ns = MIN_BIN_NS;
	c->nbins = span / c->bin_ns + (span % c->bin_ns != 0);
}

int perfetto_trace__supported(struct prof_error *err)
{
	(void)err;
	return 0;
}

int perfetto_trace__write(struct prof_store *s, const struct perfetto_options *opts, FILE *out,
			  struct prof_error *err)
{
	struct pf_ctx c = { .err = err };
	struct tm_row r;
	int rc;

	rc = trace_merge__init(&c.m, s, opts ? &opts->filter : NULL, true, err);
	if (rc < 0)
		goto out;
	rc = sum_ranks__may_be_job(s) ? sum_ranks__load(s, &c.ranks, err) : 0;
	if (rc < 0)
		goto out;
	c.per_rank = sum_ranks__is_job(&c.ranks);
	/* the time base and the track lists may come from the GPU side's
	 * passes, done when the merge's sources are open */
	rc = trace_merge__open(&c.m);
	if (rc < 0)
		goto out;
	busy_window(&c);
	rc = pf_sequence__init(&c.q, out, SEQUENCE_ID, (uint64_t)(c.m.w.base_ns > 0 ? c.m.w.base_ns : 0),
			       err);
	if (rc == 0)
		rc = pf_tracks__init(&c.t, &c.q);
	if (rc == 0)
		rc = write_capture(&c);
	if (rc == 0)
		rc = trace_merge__each_process(&c.m, process_track, &c);
	if (rc == 0)
		rc = trace_merge__each_thread(&c.m, thread_track, &c);
	if (rc == 0)
		rc = trace_merge__each_stream(&c.m, gpu_tracks, &c);
	if (rc == 0)
		rc = trace_merge__each_process_stream(&c.m, stream_track, &c);
	/* a row's packets cost more than its copy: the rows are read ahead */
	if (rc == 0)
		trace_ahead__start(&c.m);
	while (rc >= 0 && (rc = trace_merge__next(&c.m, &r)) > 0)
		rc = emit(&c, &r);
	if (rc == 0)
		rc = pf_tracks__close_all(&c.t);
	if (rc == 0)
		rc = busy_finish(&c);
	if (rc == 0)
		rc = pf_sequence__flush(&c.q);
	if (rc == 0 && ferror(out))
		rc = prof_error__set(err, PROF_E_IO, "cannot write the trace");
	if (rc == 0)
		export__say_left_out(s, c.m.rows_left_out, "the trace", NULL);
out:
	if (rc == 0)
		rc = c.q.rc;
	pf_tracks__exit(&c.t);
	pf_sequence__exit(&c.q);
	trace_merge__exit(&c.m);
	sum_ranks__exit(&c.ranks);
	free(c.busy);
	free(c.args);
	free(c.argp);
	return rc;
}
