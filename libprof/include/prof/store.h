/* store.h - the capture store: one SQLite file per capture.
 *
 * The writer is built for one background thread: rows are appended through
 * prepared statements inside large transactions (prof_writer__flush commits
 * the open one and begins the next), so a reader in another process sees
 * data up to the last flush. The reader opens perfkit captures and nsys
 * SQLite exports read-only and streams rows through cursors; it never loads
 * a whole table into memory. */
#ifndef PROF_STORE_H
#define PROF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/event.h"

/* The perfkit schema version this library writes and the newest it reads. */
#define PROF_SCHEMA_VERSION 1

/* ---- writing ---------------------------------------------------------- */

/* PERFKIT_COUNTERS: rows a writer could not store for want of room (the
 * disk full, the file size limit): those of the transaction that could not
 * be written, and every row appended after it. */
#define PROF_COUNTER_ROWS_NOT_WRITTEN "rows_not_written"
/* PERFKIT_COUNTERS: sampled GPU metrics (--gpu-metrics) the hardware buffer
 * had no room for, counted from the gaps between a sampler's samples. */
#define PROF_COUNTER_GPU_METRIC_SAMPLES_DROPPED "gpu_metric_samples_dropped"
/* Samplers that stopped decoding before the program ended (a hardware
 * buffer that overflowed where it cannot overwrite its oldest samples). */
#define PROF_COUNTER_GPU_METRIC_ENDED_EARLY "gpu_metric_samplers_ended_early"
/* PERFKIT_META: the indexes the finish could not build for want of room
 * ("3 of 8"); readers work without them, more slowly. */
#define PROF_META_INDEXES_LEFT_OUT "indexes_left_out"

struct prof_writer;

enum prof_writer_flags {
	/* Replace an existing file (else PROF_E_EXISTS), removing it at once:
	 * for files of perfkit's own (a run's folder, tests). A file the user
	 * named goes through prof/output.h instead, which leaves the old file
	 * until the new one is complete. */
	PROF_WRITER_OVERWRITE = 1 << 0,
	/* The file at path is an empty one made for this writer: the
	 * temporary file of a prof_output opened with PROF_OUTPUT_BY_NAME. */
	PROF_WRITER_CLAIMED = 1 << 1,
};

/* Out of room: a row append, commit or checkpoint found the disk full (or
 * the file size limit reached). The transaction then being written is
 * rolled back and every row after it is refused (PROF_E_FULL) and counted,
 * never written: the file keeps exactly the rows committed before, complete
 * without its -wal (each commit is folded into the file at once). The
 * count is stored as PROF_COUNTER_ROWS_NOT_WRITTEN when the writer closes
 * or finishes. */
int prof_writer__create(const char *path, unsigned flags, struct prof_writer **out,
			struct prof_error *err);
/* The file w writes (for a taken-over file, the process file until the
 * finish renames it). */
const char *prof_writer__path(const struct prof_writer *w);
/* Call the file name in messages (a temporary file by the output it
 * becomes); NULL: its path. 0 or PROF_E_NOMEM. */
int prof_writer__set_name(struct prof_writer *w, const char *name);
/* Commit the open transaction and begin a new one. Call it on a timer. */
int prof_writer__flush(struct prof_writer *w, struct prof_error *err);
/* Commit, build indexes and summary views, record final metadata, close.
 * Frees w whatever the result. */
int prof_writer__finish(struct prof_writer *w, struct prof_error *err);
/* Commit what is there and close without the end-of-capture work (used by a
 * process that is about to die: the file stays valid and readable). */
void prof_writer__delete(struct prof_writer *w);

/* Intern a string into StringIds; returns its id (> 0), or 0 for NULL. The
 * same text always gives the same id within one store. */
int64_t prof_writer__string(struct prof_writer *w, const char *text);

int prof_writer__kernel(struct prof_writer *w, const struct prof_kernel *k);
int prof_writer__memcpy(struct prof_writer *w, const struct prof_memcpy *m);
int prof_writer__memset(struct prof_writer *w, const struct prof_memset *m);
int prof_writer__api(struct prof_writer *w, enum prof_api_domain domain,
		     const struct prof_api_call *a);
int prof_writer__sync(struct prof_writer *w, const struct prof_sync *s);
int prof_writer__memory(struct prof_writer *w, const struct prof_memory_event *e);
/* Unified-memory page faults (CUDA_UM_CPU/GPU_PAGE_FAULT_EVENTS); the
 * migrations are memcpy rows of the PROF_COPY_UVM_* kinds. */
int prof_writer__um_cpu_fault(struct prof_writer *w, const struct prof_um_cpu_fault *f);
int prof_writer__um_gpu_fault(struct prof_writer *w, const struct prof_um_gpu_fault *f);
/* Python's stacks (perfkit run --python-sampling, --python-backtrace). */
int prof_writer__py_frame(struct prof_writer *w, const struct prof_py_frame *f);
int prof_writer__py_sample(struct prof_writer *w, const struct prof_py_sample *s);
int prof_writer__py_cuda_call(struct prof_writer *w, const struct prof_py_cuda_call *c);
/* A CUDA graph's launch as one row (--cuda-graph-trace=graph). */
int prof_writer__graph_trace(struct prof_writer *w, const struct prof_graph_trace *g);
/* A capture window: its row when it opens (end_ns < 0), its end and what
 * closed it when it closes. */
int prof_writer__capture_window(struct prof_writer *w, const struct prof_capture_window *c);
int prof_writer__capture_window_end(struct prof_writer *w, int64_t global_pid, int64_t id,
				    int64_t end_ns, const char *closed_by);
int prof_writer__nvtx(struct prof_writer *w, const struct prof_nvtx_event *e);
int prof_writer__overhead(struct prof_writer *w, const struct prof_overhead *o);
int prof_writer__gpu(struct prof_writer *w, const struct prof_gpu_info *g);
int prof_writer__process(struct prof_writer *w, uint32_t pid, const char *name);
int prof_writer__thread_name(struct prof_writer *w, int64_t global_tid, const char *name);
/* Jobs of many processes: where this process stands, its clock pairs and
 * the GPUs it saw (PERFKIT_PROCESS_INFO, PERFKIT_CLOCKS,
 * PERFKIT_PROCESS_GPUS). */
int prof_writer__process_info(struct prof_writer *w, const struct prof_process_info *p);
int prof_writer__clock_pair(struct prof_writer *w, const struct prof_clock_pair *c);
int prof_writer__process_gpu(struct prof_writer *w, int64_t global_pid, int32_t device_id,
			     const char *uuid);
/* Sampled GPU metrics: the description of each (type, metric) once, then
 * the samples (TARGET_INFO_GPU_METRICS, GPU_METRICS). */
int prof_writer__gpu_metric_type(struct prof_writer *w, const struct prof_gpu_metric_type *t);
int prof_writer__gpu_metric(struct prof_writer *w, const struct prof_gpu_metric *m);
/* NVTX payload schemas, their entries and enum values (NVTX_PAYLOAD_*). */
int prof_writer__payload_schema(struct prof_writer *w, const struct prof_payload_schema *s);
int prof_writer__payload_entry(struct prof_writer *w, const struct prof_payload_entry *e);
int prof_writer__payload_enum_entry(struct prof_writer *w,
				    const struct prof_payload_enum_entry *e);
/* PERFKIT_META: run metadata (command, host, gpu, start_ns, duration_ns,
 * exit_status, ...). Setting a key again replaces its value. */
int prof_writer__meta(struct prof_writer *w, const char *key, const char *value);
/* PERFKIT_COUNTERS: accumulating counters such as "dropped_records" or
 * "incomplete_kernels". */
int prof_writer__count(struct prof_writer *w, const char *name, int64_t delta);

/* Merge every row of the capture at src_path into w (ids re-mapped, StringIds
 * re-interned). Used to fold per-process files into one output. */
int prof_writer__merge(struct prof_writer *w, const char *src_path, struct prof_error *err);

/* How a capture of a job joins the others in one file (perfkit merge):
 * host_index >= 0 replaces bits PROF_GLOBAL_HOST_SHIFT and up of every
 * globalPid, globalTid and endGlobalTid (0 and NULL stay), so that two
 * hosts' processes of one pid stay apart; -1 keeps them. Every time of the
 * capture's clock (start, end, GPU_METRICS.timestamp,
 * PERFKIT_CLOCKS.timestampNs) moves onto the job's time base by
 * shift_ns + rate * (t - pivot_ns), rounded to the ns, where t is the
 * row's start: a row's end moves with its start, so no duration changes. */
struct prof_merge_map {
	int host_index;
	int64_t shift_ns;
	double rate;
	int64_t pivot_ns;
};

/* prof_writer__merge, the source's rows mapped by map (NULL: as they are).
 * Also copies the source's PERFKIT_KERNEL_METRICS (its ids mapped as its
 * kernels') and PERFKIT_PEAKS (the destination's kept when both have
 * them). */
int prof_writer__merge_mapped(struct prof_writer *w, const char *src_path,
			      const struct prof_merge_map *map, struct prof_error *err);

/* Make the capture at src_path the one *w writes, instead of copying its
 * rows into *w: src gets *w's metadata and counters, *w is closed, and *w
 * becomes a writer appending to src, which prof_writer__finish finishes and
 * renames to the path *w was created with (copied there from another file
 * system; when neither can be done, prof_writer__finish returns
 * PROF_E_NOT_PLACED and the finished capture lies at src_path). Finishing it gives the capture prof_writer__merge(*w, src_path)
 * and prof_writer__finish would, without copying a row; other files merged
 * into it afterwards go in as into the original. For the (largest) process
 * file of a run. Returns 1, *w untouched, when src cannot be taken over:
 * another connection has it open (a reader following it, a process still
 * writing), it is not a capture of this perfkit's schema, *w holds rows of
 * its own, or it could not be read; merge it then. Otherwise 0, or a
 * PROF_E_* code when *w (whichever it is) could not go on. */
int prof_writer__take_over(struct prof_writer **w, const char *src_path, struct prof_error *err);

/* The end of a long capture takes a while; these are its steps, in order,
 * for a progress line or a benchmark. */
enum prof_finish_step {
	PROF_FINISH_MERGE,      /* process files folded in (reported by their caller) */
	PROF_FINISH_INDEX,      /* indexes and the planner's statistics built */
	PROF_FINISH_CHECKPOINT, /* the file made self-contained and put in place */
	PROF_FINISH_DONE,       /* over: done 1 of 1 when the capture is complete, 0 when not */
};

/* report(ctx, step, done, total) is called as each part of a step starts:
 * done parts of total are behind it. */
struct prof_progress {
	void (*report)(void *ctx, enum prof_finish_step step, int done, int total);
	void *ctx;
};

/* Have prof_writer__finish report its steps through progress (NULL: not). */
void prof_writer__set_progress(struct prof_writer *w, const struct prof_progress *progress);
/* progress->report when progress and its report are set. */
void prof_progress__report(const struct prof_progress *progress, enum prof_finish_step step,
			   int done, int total);

/* The last failure of a call that takes no struct prof_error (row appends,
 * prof_writer__string, meta, count): code and a message naming the file. */
const struct prof_error *prof_writer__last_error(const struct prof_writer *w);

/* ---- reading ---------------------------------------------------------- */

struct prof_store;
struct prof_cursor;

enum prof_store_kind { PROF_STORE_PERFKIT = 1, PROF_STORE_NSYS = 2 };

/* How long a reader waits for another process's lock on the file (a
 * writer committing into it under the rollback journal) before it gives
 * up with PROF_E_LOCKED; PROF_BUSY_TIMEOUT_ENV, milliseconds, may set
 * another (0 to PROF_BUSY_TIMEOUT_MS_MAX). */
#define PROF_BUSY_TIMEOUT_MS_DEFAULT 5000
#define PROF_BUSY_TIMEOUT_MS_MAX 600000
#define PROF_BUSY_TIMEOUT_ENV "PERFKIT_BUSY_TIMEOUT_MS"

/* For a program of perfkit's own (the perfkit command), once, before it
 * opens any store: SQLite's process-wide settings that suit readers on
 * several threads (sqlite_process.c says which and why). 0, or
 * PROF_E_USAGE where SQLite had started already (nothing changed then:
 * every reader works the same, only slower). Not for a library loaded into
 * another program, whose SQLite settings are that program's. */
int prof_sqlite__setup_process(void);

/* Open read-only, validating what the file is. On failure err->msg is a
 * one-line message naming the file and what is wrong with it.
 *
 * Every table of prof/tables.h then reads, through this store, in its
 * canonical form: a temporary view of the table's name with every column
 * perfkit knows of (NULL where the file lacks it), the file's other
 * columns, and its rowid as a column "rowid"; a missing table reads as
 * empty. Statements name tables and columns without asking
 * prof_store__has_table or prof_store__has_column, which still answer
 * what the file itself holds, for the few readers to which a missing
 * table says more than an empty one. The file is never written. */
int prof_store__open(const char *path, struct prof_store **out, struct prof_error *err);
/* Open size bytes held in memory as a capture, read-only: validated, refused
 * and read exactly as prof_store__open reads a file holding those bytes
 * (name stands for the file: messages and prof_store__path give it). The
 * bytes are copied; the caller keeps its own. The fuzz harnesses use it so
 * that no input is written to disk. */
int prof_store__open_memory(const void *data, size_t size, const char *name,
			    struct prof_store **out, struct prof_error *err);
void prof_store__close(struct prof_store *s);
const char *prof_store__path(const struct prof_store *s);
/* A second connection to the file s reads, under s's name, for a reader
 * that works on two threads at once (each thread one store). PROF_E_USAGE
 * for a capture held in memory, one whose rows --rank or --window
 * narrowed (the views are s's own), one still being written or one
 * changed since s opened it (the two would read two captures); else as
 * prof_store__open. */
int prof_store__reopen(struct prof_store *s, struct prof_store **out, struct prof_error *err);
/* What a reader above keeps for this connection alone: a table's rows read
 * once into memory for the several analyses that read them, under key (the
 * address of something of its own). It lives until the store is closed,
 * which hands it to done. Keeping under a key kept before hands the old
 * value to its done. 0, or PROF_E_NOMEM (nothing kept; value is the
 * caller's still). Something kept holds for the rows the connection read
 * then: the keeper says when that is still what it reads. */
int prof_store__keep(struct prof_store *s, const void *key, void *value, void (*done)(void *value),
		     struct prof_error *err);
/* What is kept under key, or NULL. */
void *prof_store__kept(const struct prof_store *s, const void *key);
/* What the connections to one file share, on any thread: a store and
 * those opened again from it (prof_store__reopen), each value under a key
 * (the address of something of the reader's) and a tag (tag_len bytes,
 * compared as bytes: the question it answers). 1: *value is the value,
 * made on any of them; 0: none is, and the caller makes it and gives it
 * (prof_store__shared_give) or says it could not (prof_store__shared_drop);
 * one that asks meanwhile, on another thread, waits for that. PROF_E_NOMEM:
 * nothing is shared, the caller makes its own. A value lives until the
 * last of the connections closes, which hands it to done; it is read by
 * several threads and changed by none. Only for answers that hold on
 * every connection: a finished capture's, of rows no view narrows
 * (prof_store__restricted) on the connection that asks. */
int prof_store__shared_take(struct prof_store *s, const void *key, const void *tag, size_t tag_len,
			    void **value);
void prof_store__shared_give(struct prof_store *s, const void *key, const void *tag, size_t tag_len,
			     void *value, void (*done)(void *value));
void prof_store__shared_drop(struct prof_store *s, const void *key, const void *tag, size_t tag_len);
/* What is shared under key and tag now, without making it or waiting for
 * it: 1 and *value where it was given, else 0 (none, or being made). For
 * a question whose answer only matters when it was given before it is
 * asked (a wish of what a later walk should also count). */
int prof_store__shared_peek(struct prof_store *s, const void *key, const void *tag, size_t tag_len, void **value);
/* Call the store name from now on (messages, prof_store__path): a job's
 * temporary merged capture goes by the captures it was made of. */
int prof_store__set_name(struct prof_store *s, const char *name, struct prof_error *err);
enum prof_store_kind prof_store__kind(const struct prof_store *s);
/* From now on, table (a name of prof/tables.h) reads as the rows of its
 * canonical form for which the SQL condition where, over its columns,
 * holds: every statement of this store sees only those (perfkit's --rank).
 * where NULL: every row again. 0; 1 when the store has no form of table
 * (a name not of prof/tables.h): nothing to restrict; or a PROF_E_* code. */
int prof_store__restrict(struct prof_store *s, const char *table, const char *where,
			 struct prof_error *err);
/* A second condition on table's rows, held apart from prof_store__restrict's
 * and ANDed with it, so that each is set and put back on its own: a stretch
 * of time (perfkit's --window) under --rank's processes, which an analysis
 * of each rank in turn changes. where NULL: none. Returns as restrict does. */
int prof_store__restrict_time(struct prof_store *s, const char *table, const char *where,
			      struct prof_error *err);
/* Whether some table reads as fewer than its rows (a condition of
 * prof_store__restrict or prof_store__restrict_time is set): when not,
 * every statement sees all of the file, and what a reader learnt of all of
 * it holds for what it reads now. */
bool prof_store__restricted(const struct prof_store *s);
/* Whether a condition of prof_store__restrict_time is set on some table. */
bool prof_store__time_restricted(const struct prof_store *s);
/* The SELECT that gives table's canonical form with every row, whatever
 * prof_store__restrict and prof_store__restrict_time chose, for a statement's FROM ("FROM (%s) AS k"):
 * what reads the whole capture under --rank (the rank model). NULL when
 * the store has no form of table. Valid until the store is closed. */
const char *prof_store__all_rows(struct prof_store *s, const char *table);
/* Optional tables may be missing (nsys creates tables only when it has data). */
bool prof_store__has_table(struct prof_store *s, const char *table);
/* Whether table has a column of that name (nsys exports differ by version). */
bool prof_store__has_column(struct prof_store *s, const char *table, const char *column);
/* The column of table that says whose process a row is: prefer
 * ("globalPid" or "globalTid") when the file holds it, else the other of
 * the two when it holds that, else NULL (no process's rows). nsys exports
 * differ in which of them a table carries, so --rank's views ask here. */
const char *prof_store__owner_column(struct prof_store *s, const char *table,
				     const char *prefer);
/* Rows in table; 0 when the table is missing. */
int64_t prof_store__count(struct prof_store *s, const char *table);
/* False while a perfkit capture is still being written (no 'finished' meta
 * row yet); always true for an nsys export. */
bool prof_store__is_finished(struct prof_store *s);
/* 0 when the file can be read as a capture; PROF_E_UNFINISHED (message in
 * err) for the output of a `perfkit run` that has not merged its processes'
 * data yet: the run is still going, or it was killed first (then `perfkit
 * recover` merges it). Readers other than `perfkit top` call it after open. */
int prof_store__check_complete(struct prof_store *s, struct prof_error *err);
/* prof_store__open, then prof_store__check_complete: what every reader of a
 * finished capture (reports, diagnose, roofline, diff, gate) opens with. */
int prof_store__open_capture(const char *path, struct prof_store **out, struct prof_error *err);
/* Whether the `perfkit run` that writes this output is still running. */
bool prof_store__run_alive(struct prof_store *s);
/* Whether process pid runs on this host (host NULL or empty: this one). */
bool prof_run__alive(long long pid, const char *host);
/* A PERFKIT_META value (malloc'd copy; NULL if absent or an nsys export). */
char *prof_store__meta(struct prof_store *s, const char *key);
/* A PERFKIT_COUNTERS value, 0 if absent. */
int64_t prof_store__counter(struct prof_store *s, const char *name);
/* Whether what was read of s can be trusted: 0, or < 0 with a one-line
 * message naming the file when a read since the open found it damaged or
 * locked (even a read whose caller saw only "no such table" or 0), when
 * another process has truncated the file since (some pages then read as
 * zeros without SQLite noticing), or, for a store opened with
 * prof_store__open_capture, when another process has changed it since
 * (its size, SQLite's change counter or data_version moved: each statement
 * reads the file as it is then, so what was read may mix two versions;
 * PROF_E_CHANGED, "FILE changed while it was read; run again"). A file
 * deleted or replaced meanwhile is no fault: the open file is still read
 * whole. Readers of a finished capture call it before they call their
 * output complete. */
int prof_store__check_read(struct prof_store *s, struct prof_error *err);
/* Read every page of s's file and check the structure of every table and
 * index in it (SQLite's quick_check): 0, or PROF_E_CORRUPT with one line
 * naming the file when any of it is damaged, also kept for
 * prof_store__check_read. A reader reads only what its output needs, so
 * without this a command that needs little of a damaged capture would
 * print from it with confidence where another refuses it: every command
 * calls it on each capture it was given before it reads (cli/'s reader
 * preamble, report/job's probe, perfkit top on a finished capture). It
 * costs one read of the file. */
int prof_store__check_whole(struct prof_store *s, struct prof_error *err);
/* prof_store__check_whole on a thread and a second connection of its own
 * while the caller reads on (it costs one read of the file, 7 s of a 10M
 * kernel capture's export), for a reader whose output nobody sees before
 * prof_store__check_read: that call, and prof_store__whole_check_failed,
 * wait for it, and what it finds comes first, as it would have come before
 * any read. A capture that cannot be opened again (in memory, being
 * written) is checked in place, and that check's result returned. */
int prof_store__check_whole_apart(struct prof_store *s, struct prof_error *err);
/* prof_store__check_whole put off, for a reader as above that has its own
 * idle time to run it in (the HTML page, while its diagnosis is made on the
 * second core): prof_store__check_whole_now runs it; where nothing did,
 * prof_store__check_read or prof_store__whole_check_failed does. What it
 * finds comes first, as it would have come before any read. */
int prof_store__check_whole_later(struct prof_store *s);
/* The check prof_store__check_whole_later put off, now (none: 0): 0, or
 * what prof_store__check_whole returns. */
int prof_store__check_whole_now(struct prof_store *s);
/* After a read failed: the damage prof_store__check_whole_apart's or
 * prof_store__check_whole_later's check found (PROF_E_CORRUPT, its message
 * in err), which is then the failure to tell, or 0. */
int prof_store__whole_check_failed(struct prof_store *s, struct prof_error *err);
/* Run sql for its effect on the connection's temporary database: a view or
 * table a report builds (the store itself is opened read-only). */
int prof_store__exec(struct prof_store *s, const char *sql, struct prof_error *err);

/* A capture file at one moment: which file it is, its size and SQLite's
 * change counter (header bytes 24-27, which every commit under the
 * rollback journal moves). Between two states that differ, another process
 * changed the file, or put another in its place. */
struct prof_file_state {
	uint64_t dev, ino;
	int64_t bytes;
	uint32_t changes;
};

/* The state of the file at path now; PROF_E_IO with a line naming it when
 * it cannot be read. */
int prof_file_state__read(const char *path, struct prof_file_state *st, struct prof_error *err);
bool prof_file_state__same(const struct prof_file_state *a, const struct prof_file_state *b);
/* PROF_E_CHANGED: "PATH changed while it was read; run again". */
int prof_file__changed(const char *path, struct prof_error *err);

/* Streaming cursor over one SQL statement. Values are always bound, never
 * formatted into the SQL. next() returns 1 for a row, 0 at the end, < 0 on
 * error (message in err). Column accessors take a 0-based index. */
int prof_cursor__open(struct prof_store *s, const char *sql, struct prof_cursor **out,
		      struct prof_error *err);
int prof_cursor__bind_int64(struct prof_cursor *c, int index_1based, int64_t v);
int prof_cursor__bind_double(struct prof_cursor *c, int index_1based, double v);
int prof_cursor__bind_text(struct prof_cursor *c, int index_1based, const char *v);
int prof_cursor__next(struct prof_cursor *c, struct prof_error *err);
/* From now on c keeps each row's kinds and integers once asked, for rows
 * that several walks read, each asking a column again; a cursor read once
 * a column is faster without. */
void prof_cursor__keep_values(struct prof_cursor *c);
/* Back to before the first row, the bound values kept: a statement asked
 * many times with new values is prepared once. */
void prof_cursor__reset(struct prof_cursor *c);
int prof_cursor__columns(const struct prof_cursor *c);
const char *prof_cursor__column_name(const struct prof_cursor *c, int col);
bool prof_cursor__is_null(struct prof_cursor *c, int col);
int64_t prof_cursor__int64(struct prof_cursor *c, int col);
double prof_cursor__double(struct prof_cursor *c, int col);
const char *prof_cursor__text(struct prof_cursor *c, int col); /* valid until next() */
/* The bytes of a TEXT column in full (a NUL inside included), their count
 * in *len; valid until next(). */
const char *prof_cursor__text_bytes(struct prof_cursor *c, int col, size_t *len);
/* What a column of the current row holds, as SQLite stored it: what its
 * ORDER BY compares (NULL first, then numbers, then text). */
enum prof_value_kind { PROF_VALUE_NULL, PROF_VALUE_INT, PROF_VALUE_REAL, PROF_VALUE_TEXT, PROF_VALUE_BLOB };
enum prof_value_kind prof_cursor__kind(struct prof_cursor *c, int col);
/* A BLOB column's bytes and their count (NULL, 0 for NULL or an empty
 * value); valid until next(). */
const void *prof_cursor__blob(struct prof_cursor *c, int col, size_t *len);
void prof_cursor__close(struct prof_cursor *c);

/* A row stepped on one thread and read on another: a copy holds the
 * values of another cursor's current row, read through the calls above
 * (columns, is_null, int64, double, text, text_bytes, kind, blob), and
 * touches no connection. next() gives it no row, reset() does nothing, a
 * bind fails; it has no column names. close() frees it. */
int prof_cursor__new_copy(struct prof_cursor **out, struct prof_error *err);
/* src's current row (src a cursor or itself a copy) into copy, over what
 * it held: 0, or PROF_E_NOMEM with copy emptied. */
int prof_cursor__copy_row(struct prof_cursor *copy, struct prof_cursor *src,
			  struct prof_error *err);

#endif
