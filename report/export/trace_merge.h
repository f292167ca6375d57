/* trace_merge.h - the events of a capture in start order, for the timeline
 * exports (the Chrome JSON trace and the native Perfetto trace).
 *
 * Every kind of event has its own cursor ordered by start; the merge hands
 * out one row at a time, the earliest first (ties: enclosing kinds first, so
 * an NVTX range precedes the API call it contains and a projected range the
 * kernel it contains). Held in memory: the devices, the NVTX ranges
 * projected onto the GPU, one span per (range, stream), which one walk over
 * the launches computes before the merge, and a bounded cache of the names
 * rows carry by id. The writers read each row's columns through the TM_*
 * indexes below and decide what to print.
 *
 * The track lists (processes, threads, GPU streams) come from the same
 * tables through trace_merge__each_*, in a fixed order, once
 * trace_merge__open has returned: where the side pairs the GPU rows with
 * their calls, its passes gather what the lists need (trace_tracks.h).
 *
 * The GPU side (the calls' index by correlation id, the projection, and the
 * first row of each GPU query, which is when SQLite sorts it) is most of
 * the time before the first event: trace_merge__init begins it on a
 * thread of its own, through a second connection to the capture, while the
 * writer reads its track lists and the calls are sorted on the first. After
 * trace_merge__open a writer may have the rows read ahead on a thread of
 * their own where the side had one (trace_ahead.h): every statement of
 * the merge then runs there, and the writer formats copies of the rows;
 * otherwise every statement runs on the caller's thread, on whichever
 * connection holds the temporary tables it reads. */
#ifndef REPORT_TRACE_MERGE_H
#define REPORT_TRACE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/kernel_metrics/occupancy.h"
#include "export_window.h"
#include "trace_pairs.h"
#include "trace_source.h"
#include "prof/error.h"
#include "prof/store.h"

/* Columns of the rows of each source. */
enum {
	/* GPU work (kernel, memcpy, memset, graph launch) */
	TM_GPU_START = 0, TM_GPU_END, TM_GPU_DEVICE, TM_GPU_STREAM, TM_GPU_CORR, TM_GPU_PID,
	TM_GPU_LAUNCH_TID,   /* globalTid of the launching call, */
	TM_GPU_LAUNCH_START, /* its start when that call is in the export, else NULL: no flow;
			      * both NULL where the merge pairs the rows (struct tm_row's launch) */
	TM_GPU_ROWID,        /* with TM_GPU_START..: trace_merge__flow_id */
	TM_GPU_EXTRA,        /* first column of the kind's own, below */
	TM_KERNEL_NAME = TM_GPU_EXTRA /* its id: trace_merge__name */, TM_KERNEL_GRID_X, TM_KERNEL_GRID_Y, TM_KERNEL_GRID_Z,
	TM_KERNEL_BLOCK_X, TM_KERNEL_BLOCK_Y, TM_KERNEL_BLOCK_Z, TM_KERNEL_REGISTERS,
	TM_KERNEL_STATIC_SHARED, TM_KERNEL_DYNAMIC_SHARED,
	TM_COPY_BYTES = TM_GPU_EXTRA, TM_COPY_KIND, TM_COPY_SRC_KIND, TM_COPY_DST_KIND,
	TM_SET_BYTES = TM_GPU_EXTRA, TM_SET_MEM_KIND,
	TM_GRAPH_ID = TM_GPU_EXTRA,
};
enum { TM_API_START = 0, TM_API_END, TM_API_TID, TM_API_CORR, TM_API_NAME /* id */ };
enum { TM_NVTX_START = 0, TM_NVTX_END, TM_NVTX_TID, TM_NVTX_NAME, TM_NVTX_IS_MARK };
enum { TM_MEM_START = 0, TM_MEM_PID, TM_MEM_DEVICE, TM_MEM_BYTES, TM_MEM_IS_FREE, TM_MEM_IN_WINDOW };

struct tm_device {
	int32_t id;
	bool have_occ;
	struct occ_gpu occ;
	int64_t mem_in_use_bytes;
	bool mem_emitted; /* a counter sample was written */
};

/* The span of the GPU work that the API calls inside one NVTX range
 * launched on one stream. */
struct tm_span {
	int64_t start_ns, end_ns;
	int64_t row;      /* the range's NVTX_EVENTS rowid */
	int64_t process;  /* prof_process_of the range's thread */
	int64_t stream;
	int64_t device;
	size_t name_off;  /* into tm_projection.names; set when the range closes */
};

/* NVTX ranges projected onto the GPU streams. */
struct tm_projection {
	struct tm_span *live;    /* spans of the ranges open on the walked thread */
	size_t nlive, cap_live;
	struct tm_span *done;    /* finished spans, sorted for the merge */
	size_t ndone, cap_done;
	char *names;             /* the finished ranges' names, each '\0'-terminated */
	size_t names_len, names_cap;
	size_t next;             /* merge position in done */
};

/* A name read from StringIds (trace_merge__name). */
#define TM_NAME_BITS 13
#define TM_NAME_SLOTS ((size_t)1 << TM_NAME_BITS)
struct tm_name {
	int64_t id;
	char *text;              /* NULL: an empty slot */
};

/* One process's walk over the GPU work the export holds, by correlation
 * id (trace_merge__launched): its calls ask for ids mostly in increasing
 * order, so the walk steps forward and seeks only where an id goes back. */
struct tm_launch_walk {
	int64_t process;
	struct prof_cursor *cur;
	bool has_row;            /* cur is on a row: its (corr, kind, rowid) */
	int64_t corr, kind, rowid;
	int64_t sought_corr;     /* no row of an id in [sought_corr, corr) is left */
	bool sought;             /* false: the next ask seeks (a new walk, or past the last id) */
};

struct tm_apart;
struct tm_feed;
struct tm_row;

/* Rows read by a thread of their own (trace_ahead.h): trace_merge__next,
 * __name and __launched answer from it once it is set, and
 * trace_merge__exit stops it first. */
struct tm_reader {
	int (*next)(struct tm_reader *r, struct tm_row *row);
	const char *(*name)(const struct tm_reader *r, const struct prof_cursor *cur);
	void (*launched)(const struct tm_reader *r, uint64_t **flow_ids, size_t *n);
	void (*stop)(struct tm_reader *r);
};

struct trace_merge {
	struct prof_store *store;
	struct tm_apart *side;       /* the GPU side's thread, while it is apart */
	struct tm_feed *feed;           /* the side's sources stepped apart, or NULL */
	struct prof_store *own_apart;   /* its own sources' connection, for own_feed */
	struct tm_feed *own_feed;       /* those stepped apart, or NULL */
	struct tm_apart *own_step;      /* what own_feed's thread steps them with */
	struct tm_reader *ahead;        /* the rows read ahead (trace_ahead.h), or NULL */
	struct export_window w;
	bool have[TM__COUNT];
	/* Set by trace_merge__init: each GPU row comes once, launched by the
	 * earliest call with its correlation id, and trace_merge__launched
	 * says which GPU work an API row launched. */
	bool launch_rows;
	bool shared_corr[2];     /* runtime, driver calls share correlation ids */
	bool have_launched;      /* the export holds GPU work: LAUNCHED was made */
	/* GPU rows paired with their calls as the merge hands them out
	 * (trace_pairs.h), or NULL where the GPU queries join the calls'
	 * temporary index; with them, that index is made only when a row
	 * must ask it (calls_indexed), and the NVTX projection reads the calls
	 * inside ranges (trace_ranged.h, where ranged says it has some) */
	struct tm_pairs *pairs;
	bool ranged;
	bool calls_indexed;
	struct prof_cursor *call_of[TP_API_TABLES]; /* a (corr, process)'s call there */
	struct tm_launch_walk *walks; /* one a process asked, by process */
	size_t nwalks, cap_walks;
	struct prof_cursor *runtime_has;    /* does a runtime call hold (corr, process) */
	struct prof_cursor *first_start[2]; /* the earliest start of a (corr, process) */
	uint64_t *launched;      /* trace_merge__launched's answer */
	size_t nlaunched, cap_launched;
	struct tm_name *names;   /* TM_NAME_SLOTS, allocated at the first name */
	bool names_failed;       /* out of memory reading one: the next row says so */
	struct tm_device *devs;
	size_t ndevs;
	bool track_ids;          /* the track lists' temporary tables are made */
	/* what the track lists and the time base need, from the pairs'
	 * passes (trace_tracks.h), or NULL: SQL reads them */
	struct tm_tracks *tracks;
	/* the GPU side's: a connection of its own on which the GPU queries
	 * are sorted while the pairs' passes run (gpu_side), their cursors
	 * taken where the pairs are made, else NULL; closed at exit */
	struct prof_store *sorted_on;
	bool paired_sql;         /* the GPU queries as for pairs, before they are made */
	/* the window's time base (w.base_ns, base_utc_ns, end_ns) is read by
	 * trace_merge__open, with the extent the pairs' passes found: a whole
	 * export whose side runs apart */
	bool time_later;
	/* with time_later: the NVTX rows' extent and threads (in the track
	 * lists' table), which the side's passes do not read, read by
	 * trace_merge__open while the side runs */
	bool nvtx_early;
	int64_t nvtx_lo, nvtx_hi;
	struct tm_projection proj;
	struct tm_source src[TM__COUNT];
	int nsrc;
	struct tm_source *current; /* the row trace_merge__next handed out */
	/* the capture's rows of an impossible span, which every export leaves
	 * out (sum_bad_spans__count): counted by trace_merge__open while the
	 * GPU side runs (the tables the pairs' passes read, by those passes),
	 * said by the writer at its end (export__say_left_out) */
	int64_t rows_left_out;
	struct prof_error *err;
};

/* One row of the merge: kind, and its cursor (or span for TM_GPU_NVTX);
 * for GPU work, the call that launched it. */
struct tm_row {
	enum tm_kind kind;
	struct prof_cursor *cur;
	const struct tm_span *span;
	const char *span_name;
	struct tm_launch launch;
};

/* Resolve the filter, find which tables the capture has, and begin the
 * GPU side on a thread of its own where the capture can be opened again
 * (a finished file, read whole); otherwise, or when the thread cannot be
 * made, trace_merge__open does it in place. Nothing the caller sees
 * changes either way. launch_rows: see the member. The window's time base
 * and the track lists are for after trace_merge__open, which may read
 * them from the side's passes. */
int trace_merge__init(struct trace_merge *m, struct prof_store *s, const struct export_filter *f,
		      bool launch_rows, struct prof_error *err);
/* With launch_rows: the flow ids (trace_merge__flow_id) of the GPU work
 * that the API row at cur, of kind api, launched and the export holds, in
 * the order of kind (TM_KERNEL first) then rowid; valid until the next
 * call. Right in any order, quickest in the merge's, where a process's ids
 * rise with the start. 0 or < 0 on error. */
int trace_merge__launched(struct trace_merge *m, enum tm_kind api, struct prof_cursor *cur,
			  uint64_t **flow_ids, size_t *n);
/* Project the NVTX ranges and open every source's cursor (the GPU side's
 * once its thread is done). */
int trace_merge__open(struct trace_merge *m);
/* The next row in start order: 1 with *row set, 0 at the end, or a
 * negative PROF_E_* code. */
int trace_merge__next(struct trace_merge *m, struct tm_row *row);
void trace_merge__exit(struct trace_merge *m);
/* Whether the GPU side ran on a connection of its own (a file read
 * whole), which a thread reading the rows ahead needs. */
bool trace_merge__apart(const struct trace_merge *m);
/* The merge read in place, whatever reads it ahead: trace_merge__next,
 * __name and __launched as they are without a reader. */
int tm_in_place__next(struct trace_merge *m, struct tm_row *row);
const char *tm_in_place__name(struct trace_merge *m, struct prof_cursor *cur, int col);
int tm_in_place__launched(struct trace_merge *m, enum tm_kind api, struct prof_cursor *cur,
			  uint64_t **flow_ids, size_t *n);

/* Every process with calls, ranges or GPU work, in pid order, with its name
 * from PROCESSES ("process PID" without one). */
int trace_merge__each_process(struct trace_merge *m,
			      int (*fn)(void *ctx, int64_t pid, const char *name), void *ctx);
/* Every thread with calls or ranges, in globalTid order, with its label
 * (model/thread_label.h: "main", "autograd (GPU 0)", "thread TID"). */
int trace_merge__each_thread(struct trace_merge *m,
			     int (*fn)(void *ctx, int64_t global_tid, const char *name), void *ctx);
/* Every (device, stream) with GPU work in (device, stream) order, and each
 * device with allocations but no work once with stream < 0. new_device is
 * set on a device's first call; the device is registered by then. */
int trace_merge__each_stream(struct trace_merge *m,
			     int (*fn)(void *ctx, struct tm_device *d, bool new_device,
				       int64_t stream),
			     void *ctx);
/* The processes that ran GPU work on each stream, for writers that place
 * streams under their process: (pid, device, stream) in that order. */
int trace_merge__each_process_stream(struct trace_merge *m,
				     int (*fn)(void *ctx, int64_t pid, int64_t device,
					       int64_t stream),
				     void *ctx);

/* The name a kernel row (TM_KERNEL_NAME) or an API row (TM_API_NAME) of
 * cur holds as its StringIds id: "" for none (and when out of memory,
 * which the merge's next row reports). Valid until the next call. */
const char *trace_merge__name(struct trace_merge *m, struct prof_cursor *cur, int col);

struct tm_device *trace_merge__device(struct trace_merge *m, int32_t id);
/* "GPU 0: NVIDIA H100" (or "GPU 0" when the capture has no name for it). */
void tm_device__label(const struct tm_device *d, char *buf, size_t cap);

/* A device-memory row applied to its device's level. */
struct tm_memory_step {
	struct tm_device *d;  /* NULL: a device the export does not know, nothing to write */
	bool at_from;         /* write from_bytes at the window's start first (--from) */
	int64_t from_bytes;
	bool sample;          /* write d->mem_in_use_bytes at the row's time */
};
void trace_merge__memory(struct trace_merge *m, struct prof_cursor *cur,
			 struct tm_memory_step *step);

/* The id of a flow to GPU work of a kind: the same from the launching API
 * call's TM_API_*_ROWS and from the work's own TM_GPU_ROWID. */
uint64_t trace_merge__flow_id(enum tm_kind gpu_kind, int64_t rowid);

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" into buf (of 256 bytes at
 * least); returns buf, or name itself when it has no version suffix or is
 * too long. */
const char *tm_api_name(const char *name, char *buf, size_t cap);
/* "Memcpy HtoD (Pinned -> Device)", "Memset (Device)" */
void tm_copy_name(char *buf, size_t cap, int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
void tm_set_name(char *buf, size_t cap, int64_t mem_kind);
/* The theoretical occupancy (0..1) of a kernel row on its device; false
 * when the device's limits are unknown or the launch is invalid. */
bool trace_merge__occupancy(struct trace_merge *m, struct prof_cursor *cur, double *occupancy);

#endif
