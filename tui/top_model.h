/* top_model.h - what perfkit top shows, as plain data.
 *
 * perfkit top is two steps, as in nvtop: the refresh step reads what is new
 * in the store(s) (top_source.c, top_feed.c) and adds it here through the
 * top_model__add_* functions; the draw step (top_draw.c) only reads these
 * structs. Everything is accumulated incrementally, so memory is bounded by
 * the number of distinct names and threads, never by the number of events:
 * totals per kernel name and per NVTX range name, rate history in fixed
 * rings, and a bounded NVTX stack per thread.
 *
 * Names are sanitised for the terminal when they enter the model. Times are
 * nanoseconds on the capture's clock. */
#ifndef TUI_TOP_MODEL_H
#define TUI_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "name_table.h"
#include "top_gpu_metrics.h"
#include "top_job.h"
#include "nvml.h"
#include "sparkline.h"

#define TOP_BUCKET_NS 1000000000LL /* rate history: one bucket per second */
#define TOP_NVTX_DEPTH 16          /* deeper nesting keeps its outermost ranges */
#define TOP_MAX_THREADS 512        /* NVTX threads tracked; more fold into none */
#define TOP_MAX_NAMES 100000       /* distinct names kept; more count as TOP_OTHER_NAME */
#define TOP_MAX_GPUS 16            /* GPUs with a row of their own; more are not shown */
#define TOP_OTHER_NAME "[other names]"
#define TOP_UNKNOWN_NAME "[unnamed]"

struct top_kernel_stat {
	int64_t count;
	int64_t total_ns, min_ns, max_ns;
};

struct top_range_stat {
	int64_t count;
	int64_t total_ns;
};

/* One GPU of the capture (by the device number its rows carry): what ran
 * on it, and NVML's live metrics for it. */
struct top_gpu {
	int32_t device;
	char name[96];               /* sanitised; "" when the capture does not say */
	char uuid[64];
	int64_t kernel_count, kernel_ns, copy_count, copy_bytes;
	struct spark_ring busy_hist; /* kernel (graph launch), copy and memset time per second
				      * (ns; overlaps add up) */
	struct nvml_sample live;     /* validity bits: invalid shows as N/A */
};

/* One open NVTX range on a thread's stack. */
struct top_frame {
	int32_t range;           /* index into the model's range names */
	int64_t start_ns, end_ns;
};

struct top_thread {
	int64_t global_tid;
	char name[64];           /* sanitised thread name, "" when unknown */
	int depth;
	struct top_frame frame[TOP_NVTX_DEPTH]; /* outermost first */
	int64_t last_ns;         /* latest range end seen on this thread */
};

/* How the NVTX stacks follow time. NVTX rows reach a store when their range
 * ends, so while following a live capture a thread's stack is its most
 * recently completed nesting; a replay adds ranges at their start and takes
 * them off at their end, which gives the stack open at the replay clock. */
enum top_nvtx_mode {
	TOP_NVTX_COMPLETED = 0,
	TOP_NVTX_AT_CLOCK = 1,
};

/* Sort columns of the kernel table, in the order `s` cycles through them. */
enum top_sort {
	TOP_SORT_TOTAL = 0,
	TOP_SORT_COUNT,
	TOP_SORT_AVG,
	TOP_SORT_SHARE,
	TOP_SORT_NAME,
	TOP_SORT__COUNT
};

/* The rows of a table to show: indices into the stats, filtered and sorted. */
struct top_view {
	int32_t *rows;
	size_t n, cap;
};

/* The capture windows (PERFKIT_CAPTURE_WINDOWS) at the clock, where the
 * capture has them: whether one is open, and how many have closed. */
struct top_windows {
	bool any;                 /* the capture has capture windows */
	int open;                 /* the open window's number, 1 for the first; 0: none */
	int closed;               /* windows closed by the clock */
	int64_t open_start_ns;    /* the open one's start, on the capture's clock */
	int64_t from_ns;          /* where the header's elapsed time counts from */
	char opened_by[64];       /* what opened it ("nvtx:step #6"), sanitised */
	bool finished;            /* the capture (or its replay) has ended */
};

/* The windows' state in words: "window 2 open since +3.1 s (opened by
 * nvtx:step #6)", "paused: no window open (2 closed)", or at the end "2
 * capture windows, none open"; "" when the capture has none. */
void top_windows__text(const struct top_windows *w, char *buf, size_t cap);

struct top_model {
	/* totals since the capture began */
	int64_t kernel_count, kernel_total_ns;
	int64_t copy_count, copy_bytes;
	int64_t device_memory_bytes;   /* device allocations minus frees */
	int64_t dropped_records;       /* PERFKIT_COUNTERS.dropped_records */
	int64_t rows_left_out;         /* kernels, graph launches, copies, memsets and ranges
					* with an impossible span
					* (prof_span_is_bad), in no total, as the reports
					* leave them out */
	int64_t first_ns, last_ns;     /* earliest start, latest end; 0: none yet */
	int64_t rows_read;             /* rows taken from the stores */

	/* per-second history by capture time */
	struct spark_ring kernels_hist, copies_hist, copy_bytes_hist;
	/* the sampled GPU metrics, when the capture has them */
	struct top_gpu_metrics gpu_metrics;

	/* per-name totals; the index is the name's in the table */
	struct name_table kernel_names;
	struct top_kernel_stat *kernels;
	size_t kernels_cap;
	struct name_table range_names;
	struct top_range_stat *ranges;
	size_t ranges_cap;

	struct top_gpu gpus[TOP_MAX_GPUS]; /* in the order first seen */
	int ngpus;

	struct top_thread *threads;    /* sorted by global_tid */
	size_t n_threads;
	enum top_nvtx_mode nvtx_mode;

	/* a finished job's straggler (top_job.h) */
	struct top_late_rank late;

	struct top_windows windows;

	/* the capture time the screen shows (the replay clock, or now) */
	int64_t clock_ns;

	/* header */
	char program[256];             /* sanitised */
	uint32_t pid;
	int processes;                 /* processes seen writing the capture */
	char gpu_name[128];            /* sanitised; "" when unknown */
	char gpu_uuid[64];
	int64_t elapsed_ns;
	struct nvml_sample gpu;        /* validity bits: invalid shows as N/A */
	bool gpu_live;                 /* NVML applies (a live capture on this host) */
	char state[128];               /* "live", "replay 10x", "finished", ... */
	char error[256];               /* the last read error, sanitised; "" none */
	bool out_of_memory;
};

int top_model__init(struct top_model *m);
void top_model__exit(struct top_model *m);

/* The index of a kernel or NVTX range name (raw text from the capture; NULL
 * is TOP_UNKNOWN_NAME), added on first sight. Never fails: past
 * TOP_MAX_NAMES, or out of memory, names fold into TOP_OTHER_NAME. */
int32_t top_model__kernel_name(struct top_model *m, const char *raw);
int32_t top_model__range_name(struct top_model *m, const char *raw);

void top_model__add_kernel(struct top_model *m, int32_t name, int64_t start_ns, int64_t end_ns);
void top_model__add_copy(struct top_model *m, int64_t start_ns, int64_t end_ns, int64_t bytes);
/* A memset: GPU work in no kernel or copy total (its GPU's busy time,
 * top_gpu__add_busy), left out and counted with an impossible span. A
 * graph launch recorded whole (--cuda-graph-trace=graph) is a kernel row
 * of its own, named as the kernel summaries name it. */
void top_model__add_memset(struct top_model *m, int64_t start_ns, int64_t end_ns);
/* The name a GPU's row shows: the GPU's ("unknown" when the capture does
 * not say), after the first group of its UUID ("GPU-4778f611") when
 * another GPU of the model has its device number. */
void top_gpu__label(const struct top_model *m, const struct top_gpu *g, char *buf, size_t cap);
/* GPU work (kernel or copy) on g, its row in the GPU panel (NULL: none). */
void top_gpu__add_work(struct top_gpu *g, int64_t start_ns, int64_t end_ns, bool is_kernel, int64_t bytes);
/* GPU work on g that counts in its busy time only (a memset). */
void top_gpu__add_busy(struct top_gpu *g, int64_t start_ns, int64_t end_ns);
/* The GPU of a row: the one with its UUID where the row has one (NULL or
 * "": none), so that ranks that each call their GPU device 0 keep a row
 * each; else, and for a GPU first seen without one (which takes it), the
 * first of that device number. Added on first sight; NULL past
 * TOP_MAX_GPUS. */
struct top_gpu *top_model__gpu(struct top_model *m, int32_t device, const char *uuid);
/* A GPU's busy share (0..100) in the last whole second at the model's
 * clock: its kernels', graph launches', copies' and memsets' time, capped
 * at 100. */
double top_gpu__busy_percent(const struct top_model *m, const struct top_gpu *g);
/* CUDA_GPU_MEMORY_USAGE_EVENTS: operation 0 allocates, 1 frees; only device
 * memory (memKind 2) counts towards device_memory_bytes. */
void top_model__add_memory(struct top_model *m, int64_t start_ns, int64_t bytes, int operation,
			   int mem_kind);
/* A GPU_METRICS row: metric kind (top_gpu_metrics__kind) of sampler
 * type_id, sampled at ts_ns. */
void top_model__add_gpu_metric(struct top_model *m, int64_t ts_ns, int64_t type_id, int kind, double value);
/* A push/pop or start/end range on a thread (by globalTid). */
void top_model__add_range(struct top_model *m, int32_t name, int64_t start_ns, int64_t end_ns,
			  int64_t global_tid);
/* The thread's entry (added when new; NULL past TOP_MAX_THREADS). */
struct top_thread *top_model__thread(struct top_model *m, int64_t global_tid);
/* Move the screen's clock on; with TOP_NVTX_AT_CLOCK, ranges that ended
 * by then leave their stacks. */
void top_model__set_clock(struct top_model *m, int64_t clock_ns);

/* The last whole history bucket at the model's clock. */
int64_t top_model__last_bucket(const struct top_model *m);

/* Kernel rows whose name contains filter (ASCII case-insensitive; NULL or ""
 * keeps all), sorted by column (descending, or ascending when ascending is
 * set; ties by name so the order is stable). 0, or -1 out of memory. */
int top_model__kernel_view(const struct top_model *m, enum top_sort sort, bool ascending,
			   const char *filter, struct top_view *out);
/* NVTX range names by total time, descending. */
int top_model__range_view(const struct top_model *m, struct top_view *out);
void top_view__exit(struct top_view *v);

/* Case-insensitive (ASCII) substring test; an empty needle matches. */
bool top_name_matches(const char *name, const char *needle);

#endif
