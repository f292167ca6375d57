/* window.h - the capture's time base (capture_time.c) and its
 * steady-state loop (window.c, window_nvtx.c, window_kernels.c), with
 * which diagnose picks its window and diff and gate count iterations. */
#ifndef REPORT_MODEL_WINDOW_H
#define REPORT_MODEL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

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
/* sum_capture__time's zero_ns and zero_utc_ns alone (first_ns and last_ns
 * 0): under a rank's scope or --rank without the pass over the rows shown
 * that only first_ns and last_ns need (a job's diagnosis asked it of
 * every rank for the time its failure is said at). */
int sum_capture__zero(struct prof_store *s, struct sum_capture_time *t, struct prof_error *err);
/* The extent of some tables, found by a pass that read their every row
 * (the timeline exports' pairs: export/trace_tracks.h): the first start
 * and last end of their real rows, as sum_capture__time would read them. */
struct sum_extent_known {
	const char *const *tables; /* NULL-ended */
	int64_t lo, hi;            /* INT64_MAX, INT64_MIN: none */
};
/* sum_capture__time, reading only the tables known leaves out; on a
 * store that shows only some rows (--rank) known is of no use: every
 * table is read. */
int sum_capture__time_known(struct prof_store *s, const struct sum_extent_known *known,
			    struct sum_capture_time *t, struct prof_error *err);
/* Whether the capture's extent counts table's rows. */
bool sum_capture__extent_table(const char *table);
/* The first start and last end of table's real rows, every row of it, as
 * the extent counts them (INT64_MAX, INT64_MIN: none): a part of
 * sum_extent_known read by itself. */
int sum_capture__table_extent(struct prof_store *s, const char *table, int64_t *lo, int64_t *hi,
			      struct prof_error *err);

/* How the loop is searched for (diagnose's iterations.* and
 * window.whole_run settings). */
struct sum_loop_options {
	double min_iterations; /* repeats needed before a range or kernel counts as the loop */
	double coverage;       /* an NVTX name must cover this fraction of the best-covering one */
	double tiling;         /* a range nested in a rarer one covering less than this of it is a phase */
	bool whole_run;        /* no search: the window is the whole capture */
	/* a temporary table of the CUDA API calls, runtime and driver, each
	 * call once, less those with a bad span, indexed by correlationId
	 * (diagnose's DIAG_API_CALLS), to find the calls that launched GPU
	 * work from the work's side; NULL: none. It makes the search faster,
	 * never its answer different. */
	const char *calls;
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
	int64_t span_ns;            /* the time of [start_ns, end_ns) in the capture's
				     * stretches (model/capture_windows.h): its length,
				     * less the time between capture windows */
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
 * window's end. In a capture made of capture windows no iteration crosses
 * from one into another: a kernel iteration ends with its window at the
 * latest, and an NVTX instance that spans two is none. */
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
 * launches of its kernel inside the window, each inside one of the
 * capture's stretches; none when w has no loop.
 * *steps is malloc'd (NULL when there are none). */
int sum_window__steps(struct prof_store *s, const struct sum_window *w, struct sum_step **steps,
		      int *n, struct prof_error *err);

#endif
