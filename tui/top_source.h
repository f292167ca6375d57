/* top_source.h - one store perfkit top reads from, without ever reading a
 * row twice.
 *
 * Two ways through a store:
 *  - by rowid (a capture being written, or a finished one shown at once):
 *    each table remembers the last rowid it has read, and each refresh asks
 *    only for rows past it ("WHERE rowid > ?"), a range scan of the rowid
 *    B-tree whose cost is the number of new rows; a table the writer makes
 *    with its first row (graph launches) is taken up when it appears;
 *  - by time (--replay of a finished capture): one cursor per table ordered
 *    by start stays open for the whole replay and is stepped while its next
 *    row's start is at or before the replay clock.
 * Both stop at a deadline and carry on at the next refresh, so a big backlog
 * never stalls the screen.
 *
 * The connection can be let go between refreshes (disconnect) and taken up
 * again: the positions live here, not in SQLite. perfkit top does that for a
 * capture that its writer will finish, since leaving WAL mode at the end
 * needs the file to itself. */
#ifndef TUI_TOP_SOURCE_H
#define TUI_TOP_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "idmap.h"
#include "prof/store.h"
#include "top_model.h"

enum top_table {
	TOP_T_KERNEL,
	TOP_T_MEMCPY,
	TOP_T_MEMSET,
	TOP_T_GRAPH,     /* graph launches recorded whole (--cuda-graph-trace=graph) */
	TOP_T_MEMORY,
	TOP_T_NVTX,
	TOP_T_GPU_METRICS,
	TOP_T__COUNT
};

enum top_read_mode {
	TOP_READ_ROWID,
	TOP_READ_REPLAY,
};

/* What became of a store's file while top read it; once lost, a source is
 * not read again (what was read of it stays on the screen). */
enum top_loss {
	TOP_LOSS_NONE,
	TOP_LOSS_DELETED,    /* its name names no file */
	TOP_LOSS_REPLACED,   /* its name names another file */
	TOP_LOSS_TRUNCATED,  /* shorter than it was: a capture being written only grows */
	TOP_LOSS_DAMAGED,    /* a read found it corrupt or unreadable */
};

struct top_table_pos {
	bool present;            /* the file has the table (checked on connect; a table
				  * written with its first row is looked for again
				  * at each read until it is there) */
	char *select;            /* "SELECT cols FROM table WHERE filter" */
	int64_t last_rowid;      /* rowid mode: the last row read */
	int64_t rows;            /* rows read */
	struct prof_cursor *cur; /* replay: the open cursor */
	int replay_state;        /* replay: 0 not begun, 1 a row waits in cur, 2 done */
};

struct top_source {
	char *path;
	struct prof_store *store;   /* NULL while disconnected */
	enum top_read_mode mode;
	uint32_t pid;               /* of proc-<pid>.sqlite; 0 otherwise */
	struct top_table_pos t[TOP_T__COUNT];
	struct idmap kernel_ids;    /* StringIds id -> model kernel name */
	struct idmap graph_ids;     /* graphId -> model kernel name of its launches */
	struct idmap range_ids;     /* StringIds id -> model range name */
	struct idmap metric_ids;    /* (typeId, metricId) -> top_gpu_metrics kind, TOP_GM__COUNT: not shown */
	struct idmap gpu_ids;       /* (globalPid, deviceId) -> index of the model's GPU, TOP_MAX_GPUS: none */
	bool described;             /* GPU and process read into the header */
	int64_t dropped_records;    /* this store's PERFKIT_COUNTERS value */
	/* the file as top first read it, and the largest it has been since */
	dev_t dev;
	ino_t ino;
	int64_t largest_bytes;
	enum top_loss lost;
};

/* Open path (validated by the reader) and connect. */
int top_source__open(const char *path, enum top_read_mode mode, struct top_source **out,
		     struct prof_error *err);
void top_source__close(struct top_source *s);
/* Whether the source's name still names the file top began reading, no
 * shorter than it has been: 0, or < 0 with s->lost set (deleted, replaced,
 * truncated) and a one-line message naming the file in err. */
int top_source__check_file(struct top_source *s, struct prof_error *err);
/* Take the connection up again (no-op when connected). */
int top_source__connect(struct top_source *s, struct prof_error *err);
/* Let the connection go; positions are kept. Not during a replay. */
void top_source__disconnect(struct top_source *s);

/* Rowid mode: read every new row into m (connecting first if need be), or
 * stop when the monotonic clock passes deadline_ns. 1 caught up, 0 stopped
 * at the deadline, < 0 error; an error that finds the file damaged (or a
 * read that did, whose caller answered without one) also sets s->lost.
 * The replay below does the same. */
int top_source__read(struct top_source *s, struct top_model *m, int64_t deadline_ns,
		     struct prof_error *err);
/* Replay mode: read the rows that start at or before clock_ns. 1 every
 * such row read, 0 stopped at the deadline, < 0 error. */
int top_source__replay(struct top_source *s, struct top_model *m, int64_t clock_ns,
		       int64_t deadline_ns, struct prof_error *err);
/* Replay mode: the earliest start of any row (*out stays 0 when there is
 * none). Begins the cursors; that first step sorts tables without an index
 * on start, once. Rows with an impossible span that sort first (a start of
 * INT64_MIN) go into m first, which leaves them out and counts them: the
 * replay starts where the capture does, not 292 years before it. */
int top_source__replay_origin(struct top_source *s, struct top_model *m, int64_t *out,
			      struct prof_error *err);
/* Replay mode: no row left. */
bool top_source__replay_done(const struct top_source *s);
/* Every row of one process (globalPid), in one pass: for a process that
 * came and went without top seeing its own file. */
int top_source__read_pid(struct top_source *s, struct top_model *m, uint32_t pid,
			 struct prof_error *err);
/* The header facts this store holds (GPU, first process) into m where m
 * has none yet, and the store's dropped-records counter. */
void top_source__describe(struct top_source *s, struct top_model *m);

/* The monotonic clock in ns (deadlines). */
int64_t top_monotonic_ns(void);

/* The capture windows of s at clock_ns (INT64_MAX: as the file holds them
 * now, a window without an end still open) added to *w: windows a
 * process opens are numbered in start order. The table is a handful of
 * rows, and a window's end is written into its row when it closes, so it
 * is read whole each time. 0, or a PROF_E_* code. */
int top_source__windows(struct top_source *s, int64_t clock_ns, struct top_windows *w,
			struct prof_error *err);

#endif
