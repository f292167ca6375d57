/* query.h - what report/summary shares with analysis/, compare/ and export/
 * besides the reports themselves (summary.h): the query helpers that
 * diagnose, the folded stacks and the HTML plots build on, so that they
 * attribute, name and group exactly as the summary reports do; the
 * display names of nsys's copy and memory kinds; and the steady-state loop
 * finder (window.c) with which diagnose picks its window and diff and gate
 * count iterations. The rest of the folder's
 * internals stay in summary_impl.h, which no other folder includes. */
#ifndef REPORT_SUMMARY_QUERY_H
#define REPORT_SUMMARY_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "prof/error.h"
#include "prof/saturate.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "sink/table.h"
#include "summary/job_time.h"

/* ---- SQL -------------------------------------------------------------- */

/* The source SQL "SELECT ... FROM A UNION ALL SELECT ... FROM B" over those
 * of the given parts whose table exists; parts[i] is used when tables[i]
 * exists. Returns a malloc'd string, or NULL (with *rc = 0) when no table
 * exists. */
char *sum_union(struct prof_store *s, const char *const *tables, const char *const *parts,
		int nparts, int *rc, struct prof_error *err);

/* The attribution rules nvtx_kern_sum and the folded stacks share, as SQL
 * over a kernel (or copy) row K and an API call row A, both table aliases:
 * K was launched by A when they share a correlation id within one process
 * (ids are per process; some nsys exports leave a GPU row's globalPid NULL
 * or 0). A push/pop range N is open on A's thread when the call starts. */
#define SUM_LAUNCHED_BY(K, A)                                                  \
	K ".correlationId = " A ".correlationId AND (" K ".globalPid IS NULL OR " \
	K ".globalPid = 0 OR " K ".globalPid = " PROF_SQL_GLOBAL_PID_OF_TID(A ".globalTid") ")"
/* 1 when GPU row K was launched by some call of the API table TABLE, as
 * SUM_LAUNCHED_BY would join them, else 0 (a row without a correlation id
 * too), without a lookup per row: two sets built once (the API tables have
 * no correlationId index: libprof's schema.c). */
#define SUM_LAUNCHED_BY_SOME(K, TABLE)                                          \
	"coalesce((" K ".globalPid IS NULL OR " K ".globalPid = 0) AND " K ".correlationId " \
	"IN (SELECT correlationId FROM " TABLE " WHERE correlationId IS NOT NULL) " \
	"OR (" K ".globalPid, " K ".correlationId) IN (SELECT "                     \
	PROF_SQL_GLOBAL_PID_OF_TID("globalTid") ", "                                \
	"correlationId FROM " TABLE " WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL), 0)"
#define SUM_NVTX_OPEN_AT_CALL(N, A)                                            \
	N ".eventType = " PROF_SQL_NVTX_PUSHPOP " AND " N ".globalTid = " A      \
	".globalTid AND " N ".start <= " A ".start AND " N ".end > " A ".start"

/* A row's span is bad when it is no duration: its end precedes its start
 * (or either is missing), or lies 2^63 ns or more after it, further than a
 * signed 64-bit count of ns reaches (a start of INT64_MIN with a real end).
 * No clock stamps either; only a damaged or hostile file holds them. SQL
 * true for such a row of table alias A ("" or "k."): SQLite's end - start
 * turns REAL past INT64_MAX, so the bound holds exactly where the integer
 * would have overflowed. Every reader that sums, draws or bins durations
 * leaves those rows out and says how many (SUM_BAD_SPAN_WORDS), rather
 * than drawing one 292 years wide; spans that fit, however long, stay and
 * their sums saturate (prof_add_saturated). */
#define SUM_BAD_SPAN(A)                                                        \
	"((" A "end >= " A "start AND " A "end - " A "start <= 9223372036854775807) IS NOT 1)"
/* How a note says what SUM_BAD_SPAN left out, after "N rows". */
#define SUM_BAD_SPAN_WORDS "with an impossible span (end before start, or 2^63 ns or more long)"
/* A copy or memset row is bad when its span is, or when it moves a negative
 * number of bytes (no copy does; a damaged file can say so). */
#define SUM_BAD_COPY(A) "(" SUM_BAD_SPAN(A) " OR (" A "bytes < 0) IS 1)"
/* The rows with a bad span in every table of spans the store has (GPU
 * work, API calls, NVTX ranges): what a reader of the whole capture (a
 * trace, the folded stacks, the HTML report) left out (bad_spans.c). */
int sum_bad_spans__count(struct prof_store *s, int64_t *rows, struct prof_error *err);

/* The CUDA API calls of the runtime and driver tables as one SQL source
 * with the columns start, end, globalTid, correlationId (NULL where a table
 * has none) and nameId; NULL (*rc = 0) when neither table exists. Each call
 * counts once: where several rows of a table share a thread and a
 * correlation id, the innermost (the latest to start) stands for them.
 * Nsight Systems records a call twice when it collects CUDA backtraces
 * (a "cudaMemcpy" row of class CUDA backtrace around the runtime's
 * "cudaMemcpy_v3020"), which would otherwise count its time twice. */
char *sum_api_calls(struct prof_store *s, int *rc, struct prof_error *err);
/* The test sum_api_calls applies, for readers that walk an API table
 * themselves: SQL true when the row of alias (of table) stands for its
 * call ("1" when table holds no call twice, as perfkit's captures never
 * do). Written into buf (384 bytes suffice for perfkit's table names). */
int sum_call_once_sql(struct prof_store *s, char *buf, size_t cap, const char *alias,
		      const char *table, struct prof_error *err);

/* ---- sums of a capture's numbers --------------------------------------- */

/* Every sum and span of a capture's times or byte counts goes through
 * prof_add_saturated and prof_span_saturated (prof/saturate.h); a row's
 * span is tested in C by prof_span_is_bad. */

/* The sum of SQL expression X (durations, byte counts) as an INTEGER held
 * at the limits, for queries that add up a capture's values themselves:
 * SQLite's sum() fails the whole query with "integer overflow" past
 * INT64_MAX, so a capture of long kernels could not be diagnosed at all.
 * total() adds in double, exact while the sum stays below 2^53 (104 days
 * of ns); CAST of a REAL past the int64 range gives the nearest limit
 * (SQLite documents it). 0, not NULL, when there are no rows. */
#define SUM_TOTAL_SATURATED(X) "CAST(total(" X ") AS INTEGER)"

/* v * num / den for 0 <= num <= den (a point num/den of the way along a
 * span v), divided before it is multiplied so that a long span cannot
 * overflow. */
static inline int64_t sum_fraction_of(int64_t v, int64_t num, int64_t den)
{
	return v / den * num + v % den * num / den;
}

/* Make room in the array *(T **)pptr of *cap elements of size bytes for
 * element n (doubling; 8 at first): 0, or PROF_E_NOMEM with the array as
 * it was. */
static inline int sum_array__grow(void *pptr, size_t *cap, size_t n, size_t size)
{
	void **p = (void **)pptr, *g;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	while (c <= n)
		c *= 2;
	g = realloc(*p, c * size);
	if (!g)
		return PROF_E_NOMEM;
	*p = g;
	*cap = c;
	return 0;
}

/* ---- groups ----------------------------------------------------------- */

/* Statistics of one group of integer values (durations in ns or sizes in bytes). */
struct sum_group {
	char *label;      /* malloc'd copy of the source's l1 (NULL if NULL) */
	char *label2;     /* l2 likewise */
	int64_t key;      /* the source's k (a StringIds id, an enum value, ...) */
	bool key_is_null;
	int64_t n;
	int64_t total, min, max;
	double mean, median, stddev; /* stddev: sample (n - 1), 0 for one value */
};

struct sum_groups {
	struct sum_group *g;
	size_t n, cap;
	int64_t rows_left_out; /* rows with a bad span (SUM_BAD_SPAN), in no group */
};

void sum_groups__exit(struct sum_groups *gs);

/* The groups behind cuda_gpu_kern_sum, sorted by total (the overview and
 * the HTML report's kernel plot show their first rows). */
int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);
/* The groups behind nvtx_sum, sorted by total. */
int sum_nvtx_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);
/* Sort groups as the summaries show them: total descending, then label,
 * label2 and key. */
void sum_groups__sort_by_total(struct sum_groups *gs);

/* ---- groups in parts (a job's captures, report/job) -------------------- */

/* count values of value: a group's values as ascending runs carry what its
 * exact median needs, and two parts' runs merge into the whole's. */
struct sum_run {
	int64_t value, count;
};

/* Set g's statistics (n, total, min, max, mean, median, stddev) from its
 * values as ascending runs, to the last bit as a group read from a store
 * holding those values. The labels and key are left as they are. */
void sum_group__fold_runs(struct sum_group *g, const struct sum_run *runs, size_t nruns);

/* What a walk over a capture's groups as runs calls: each run of each group
 * in (label, label2, key, value) order; labels are the texts the summary
 * shows (a kernel's name, a range's name and style). */
struct sum_runs_walk {
	int (*run)(void *ctx, const char *label, const char *label2, bool key_is_null, int64_t key,
		   struct sum_run run);
	void *ctx;
	int64_t rows_left_out; /* rows with a bad span, added to */
};
/* The runs behind cuda_gpu_kern_sum (keyed by name: label the kernel's
 * name, key 0, key_is_null when the kernel has none) and behind nvtx_sum. */
int sum_kernel_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err);
int sum_nvtx_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err);

/* ---- the overview in parts ---------------------------------------------- */

/* How a job's capture moves onto the job's time base: a row moves by the
 * offset at its start (report/job's mapping, as the merge moves it). */
struct sum_time_move {
	int64_t (*offset_at)(void *ctx, int64_t t);
	void *ctx;
};

/* The union of each device's kernels, copies and memsets in (device,
 * start) order: interval() gets each union interval once, in that order;
 * first/last: the span of all the work. */
struct sum_busy_walk {
	int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns);
	void *ctx;
	int64_t first_ns, last_ns;
	bool any;
	int64_t rows_left_out;
};
int sum_busy__walk(struct prof_store *s, const struct sum_time_move *move,
		   struct sum_busy_walk *w, struct prof_error *err);
/* The part of [start, end] inside [lo, hi], in ns. */
int64_t sum_busy__clipped(int64_t start, int64_t end, int64_t lo, int64_t hi);

struct sum_busy_device {
	int64_t device_id, busy_ns;
};

/* Copies of one direction and host memory kind. */
struct sum_transfer {
	int64_t copy_kind, host_kind;
	bool host_kind_null;
	int64_t count, bytes, time_ns;
};

/* ---- a failed context ------------------------------------------------- */

/* The first CUDA call that returned an error after which the context is
 * unusable (an illegal address, an assert, a kernel exception), and the
 * kernels and copies CUPTI recorded without GPU times (context_failure.c). */
struct sum_context_failure {
	bool failed;
	int64_t at_ns;              /* the failing call's start */
	int code;
	const char *error_name;     /* "cudaErrorIllegalAddress" (static) */
	const char *what;           /* "an illegal memory access" (static) */
	char call[96];              /* "cudaDeviceSynchronize" */
	int64_t run_start_ns;       /* what at_ns is said from: the capture's zero
				     * (sum_capture__time) */
	int64_t incomplete_kernels, incomplete_copies;
};

int sum_context_failure__find(struct prof_store *s, struct sum_context_failure *f,
			      struct prof_error *err);
/* The failure in one sentence ("" when none), its time from the run's
 * start; and the work without GPU times in another ("" when none). */
void sum_context_failure__say(const struct sum_context_failure *f, char *buf, size_t cap);
void sum_context_failure__say_untimed(const struct sum_context_failure *f, char *buf, size_t cap);

/* What the overview shows, read from one store (sum_overview__load) or put
 * together from a job's captures (report/job), then printed by
 * sum_overview__emit: the same rows either way. Strings are malloc'd. */
struct sum_overview {
	char *name;                 /* the File row */
	bool nsys;
	char *command, *host, *gpu, *start, *duration, *exit_status; /* PERFKIT_META */
	char *gpu_names;            /* "0: NAME; 1: ..." when gpu is NULL */
	bool has_session_start;
	int64_t session_start_ns;
	struct sum_busy_device *busy; /* by device id */
	size_t nbusy, busy_cap;
	int64_t busy_first_ns, busy_last_ns, busy_left_out;
	bool busy_any;
	struct sum_groups kernels, ranges; /* sorted by total */
	struct sum_transfer *transfers;    /* most bytes first */
	size_t ntransfers, transfers_cap;
	int64_t transfers_left_out;
	/* managed memory's page faults: CPU faults, GPU fault groups and the
	 * faults in them (CUDA_UM_*_PAGE_FAULT_EVENTS) */
	int64_t um_cpu_faults, um_gpu_groups, um_gpu_faults;
	int64_t dropped, not_written;
	struct sum_context_failure failure;
	int64_t gm_samples_dropped; /* sampled GPU metrics lost (--gpu-metrics) */
	int64_t gm_ended_early;     /* GPUs whose sampling stopped before the program */
	bool has_job_time;          /* a job of several hosts: the Time base and Alignment
				     * error rows */
	struct sum_job_time job_time;
};

int sum_overview__load(struct prof_store *s, struct sum_overview *o, struct prof_error *err);
int sum_overview__emit(const struct sum_overview *o, struct rpt_sink *sink, struct prof_error *err);
void sum_overview__exit(struct sum_overview *o);
/* The run's span from start and duration, when both are recorded. */
bool sum_overview__span(const struct sum_overview *o, int64_t *start_ns, int64_t *duration_ns);
/* Append "ID: NAME" to a "; "-separated list of GPU names. */
int sum_gpu_names__add(char **names, int64_t id, const char *name);
int sum_transfers__add(struct sum_overview *o, const struct sum_transfer *t);
/* Only the transfers of s (and transfers_left_out) into o. */
int sum_overview__load_transfers(struct prof_store *s, struct sum_overview *o,
				 struct prof_error *err);
/* cuda_gpu_kern_sum's table of gs. */
int sum_kernel_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink,
			    struct prof_error *err);

/* ---- names ------------------------------------------------------------ */

/* Length of an API name without CUPTI's "_v<digits>" version suffix
 * ("cudaMalloc_v3020" -> strlen("cudaMalloc")): calls are shown, and
 * summed, under the name without it, as Nsight Systems shows them. Other
 * suffixes stay: "cudaLaunchKernel_ptsz_v7000" is "cudaLaunchKernel_ptsz",
 * the per-thread default stream's entry point. */
size_t sum_api_name_len(const char *name);
/* The same in SQL, for a text expression X, so that readers group by the
 * name they show. */
#define SUM_API_NAME(X)                                                       \
	"(CASE WHEN rtrim(" X ", '0123456789') <> " X " AND rtrim(" X           \
	", '0123456789') GLOB '*?_v' THEN substr(" X ", 1, length(rtrim(" X     \
	", '0123456789')) - 2) ELSE " X " END)"
/* StringIds with API names as SUM_API_NAME shows them, to join in place of
 * the table: "JOIN " SUM_API_NAMES " s ON s.id = r.nameId". */
#define SUM_API_NAMES                                                          \
	"(SELECT id, " SUM_API_NAME("value") " AS value FROM " PROF_T_STRINGS ")"

/* "[CUDA memcpy Host-to-Device]" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_operation(int64_t copy_kind);
/* "Host-to-Device" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_direction(int64_t copy_kind);
/* "HtoD", "UVM DtoH", ... for an ENUM_CUDA_MEMCPY_OPER value; NULL for
 * PROF_COPY_UNKNOWN and values outside the enum, which each caller names in
 * its own words. */
const char *sum_copy_short(int64_t copy_kind);
/* "Pageable", "Pinned", ... for an ENUM_CUDA_MEM_KIND value. */
const char *sum_mem_kind(int64_t mem_kind);
/* "pageable", "pinned", "device" or "managed" for those ENUM_CUDA_MEM_KIND
 * values, in running text; NULL for the others. */
const char *sum_mem_word(int64_t mem_kind);
#define SUM_MEMSET_OPERATION "[CUDA memset]"

/* ---- the processes and ranks of a capture (ranks.c) ------------------- */

/* A GPU a process used, by its own device number. */
struct sum_gpu {
	int32_t device_id;
	char *uuid;             /* PERFKIT_PROCESS_GPUS; NULL when not recorded */
	char *name;             /* TARGET_INFO_GPU's; NULL when unknown */
};

/* A process of the capture. A rank is a process its launcher numbered
 * (PERFKIT_PROCESS_INFO); in a capture that does not say (nsys exports,
 * earlier perfkit captures, a program run without a launcher), every
 * process with CUDA work (kernels, copies, memsets), numbered in pid order.
 * A launcher or data-loader worker without CUDA work is kept, not a rank. */
struct sum_process {
	int64_t global_pid;     /* as the tables hold it (pid << 24 for perfkit) */
	uint32_t pid;
	int rank;               /* -1: not a rank */
	int world_size, local_rank; /* -1: unknown */
	char *host, *name, *launcher; /* NULL: unknown */
	bool has_cuda;          /* kernels, copies or memsets */
	struct sum_gpu *gpus;   /* by device number */
	int ngpus;
	bool selected;          /* chosen by --rank (every process without it) */
};

struct sum_ranks {
	struct sum_process *p;  /* ranks in rank order, then the other processes by pid */
	int n;
	int nranks;
	bool from_process_info; /* numbers from the launcher, not from CUDA work */
	bool several_hosts;     /* a job merged from captures of several hosts */
	bool filtered;          /* --rank chose some of them */
};

/* The whole capture's processes, whatever --rank shows the reports. */
int sum_ranks__load(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
/* In parts, for a job's captures read one by one (report/job): each
 * capture's processes as it records them (ranks a launcher gave, else -1;
 * hosts where PERFKIT_PROCESS_INFO says them), then the job's processes
 * together numbered as sum_ranks__load numbers a capture's, those without
 * a host given host (NULL: none). No GPU names, every process selected. */
int sum_ranks__read(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
int sum_ranks__number(struct sum_ranks *r, const char *host, struct prof_error *err);
void sum_ranks__exit(struct sum_ranks *r);
/* Whether the capture is a job: several processes with CUDA work, or ranks
 * a launcher numbered. The traces, the folded stacks and the HTML report
 * then show each process as its rank. */
bool sum_ranks__is_job(const struct sum_ranks *r);
/* False when s cannot be a job, known without reading its GPU work (a
 * perfkit capture of one process, whose launcher numbered none): readers
 * that only need the answer skip the model's scans then. */
bool sum_ranks__may_be_job(struct prof_store *s);
/* The process of a globalPid, or of a rank; NULL when there is none. */
const struct sum_process *sum_ranks__process(const struct sum_ranks *r, int64_t global_pid);
const struct sum_process *sum_ranks__rank(const struct sum_ranks *r, int rank);
/* "rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)": how a process is named
 * wherever one is shown (a process that is no rank: "torchrun (pid 812)
 * · node7"). */
void sum_process__label(const struct sum_process *p, char *buf, size_t cap);
/* "rank 1", or "pid 812" for a process that is no rank. */
void sum_process__rank_name(const struct sum_process *p, char *buf, size_t cap);

/* --rank (rank_choice.c; summary__select_ranks in summary.h chooses): set
 * each process's selected from the choice. */
int sum_ranks__mark_selected(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
/* Narrow every table the reports read to one process's rows, for an
 * analysis that works one rank at a time; no cursor may be open. */
int sum_ranks__scope(struct prof_store *s, int64_t global_pid, struct prof_error *err);
/* Back to what --rank chose (the whole capture without it). */
int sum_ranks__unscope(struct prof_store *s, struct prof_error *err);

/* ---- the steady-state loop (window.c) --------------------------------- */

/* The capture's time base (capture_time.c), decided here once for every
 * reader: every time perfkit shows (diagnose's "+x s" and window, the
 * reports' start columns, the Chrome and Perfetto traces, the HTML
 * report's plots, --from/--to) counts from zero_ns. The zero is where the
 * capture started: a perfkit capture's run start (PERFKIT_META start_ns;
 * a job's is its first capture's), an nsys export's session start
 * (TARGET_INFO_SESSION_START_TIME), or the first record where the capture
 * says neither or recorded something earlier. Records are the rows of the
 * GPU work, API calls and NVTX with a real time: a start of 0 or less (an
 * NVTX domain's registration), an NVTX domain's creation and rows with a
 * bad span (SUM_BAD_SPAN) never set it. The zero is the whole capture's
 * whatever --rank or a rank's scope narrowed the tables to; first_ns and
 * last_ns are of the rows the store shows (0, 0 without any). */
struct sum_capture_time {
	int64_t zero_ns;     /* on the capture's clock */
	int64_t zero_utc_ns; /* the zero as a UTC time (ns since 1970): what the
			      * Chrome trace's baseTimeNanoseconds says */
	int64_t first_ns;    /* the first record's start */
	int64_t last_ns;     /* the last record's end */
};
int sum_capture__time(struct prof_store *s, struct sum_capture_time *t, struct prof_error *err);

/* How the loop is searched for (diagnose's iterations.* and
 * window.whole_run settings). */
struct sum_loop_options {
	double min_iterations; /* repeats needed before a range or kernel counts as the loop */
	double coverage;       /* an NVTX name must cover this fraction of the best-covering one */
	double tiling;         /* a range nested in a rarer one covering less than this of it is a phase */
	bool whole_run;        /* no search: the window is the whole capture */
};

/* 3, 0.5, 0.9, no: the defaults diagnose documents. */
void sum_loop_options__init(struct sum_loop_options *o);

/* What marks a loop's iterations. */
enum sum_loop_mark { SUM_LOOP_NONE, SUM_LOOP_NVTX, SUM_LOOP_KERNEL };

/* A capture's steady-state loop: from NVTX, the most repeated range name
 * in which GPU work is launched, among those covering nearly as much time
 * as the best-covering one (phases nested in a rarer range, libraries' own
 * ranges and XLA's compiler passes left out), else the runs of the XLA
 * program that launches the most GPU time, extended to the end of the GPU
 * work its calls launched; else the period of the repeating kernel launch
 * sequence; else the whole capture. A window in which no GPU work runs is
 * never the loop. The first iteration (the warm-up) stays out. */
struct sum_window {
	int64_t zero_ns;            /* where shown times count from (sum_capture__time) */
	int64_t capture_start_ns, capture_end_ns; /* the first record's start, the last's end */
	int64_t start_ns, end_ns;   /* the steady-state loop */
	int64_t host_end_ns;        /* where the loop's host side ends (end_ns may run
				     * on to the GPU work it launched): diagnose's rules
				     * about API calls stop here, so a sync or a free
				     * after the loop does not count as inside it */
	int iterations;             /* in the window (the warm-up left out); 0: no loop */
	char source[256];           /* how the loop was found, for humans */
	bool whole_run;             /* the window is the whole capture */
	enum sum_loop_mark mark;    /* what marks the iterations */
	char mark_name[512];        /* the NVTX range's or the kernel's name; an XLA
				     * program's runs are "XlaModule:#hlo_module=NAME,
				     * program_id=*#" (window_nvtx.c) */
};

/* One iteration of the loop: an instance of the NVTX range (host time, on
 * thread global_tid), or the time from one launch of the marking kernel to
 * the next (GPU time, global_tid 0); the last kernel iteration ends at the
 * window's end. */
struct sum_step {
	int64_t start_ns, end_ns;
	int64_t global_tid;
};

int sum_window__find(struct prof_store *s, const struct sum_loop_options *o, struct sum_window *w,
		     struct prof_error *err);
/* The loop marked as `like` is, by the same NVTX range or kernel name: two
 * captures of one program then count the same iterations even where the
 * search would settle on another marker in one of them (a window cut
 * elsewhere, a phase close to the tiling threshold). No loop (iterations 0,
 * the whole capture) when this capture has no such marker repeating. */
int sum_window__find_marked(struct prof_store *s, const struct sum_loop_options *o,
			    const struct sum_window *like, struct sum_window *w,
			    struct prof_error *err);
/* Whether two loops are marked by the same range or kernel. */
bool sum_window__same_mark(const struct sum_window *a, const struct sum_window *b);
/* The iterations of w's loop (the warm-up left out), sorted by start: the
 * instances of its NVTX range, on every thread, or the periods between
 * launches of its kernel inside the window; none when w has no loop.
 * *steps is malloc'd (NULL when there are none). */
int sum_window__steps(struct prof_store *s, const struct sum_window *w, struct sum_step **steps,
		      int *n, struct prof_error *err);

#endif
