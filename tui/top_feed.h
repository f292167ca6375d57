/* top_feed.h - which stores perfkit top reads, and how its clock runs.
 *
 * Where the rows of a capture are depends on who writes it:
 *  - `perfkit run` (and `perfkit top -- PROGRAM`) has each process of the
 *    program write dir/proc-<pid>.sqlite and merges them into the output
 *    only at the end; the output names that folder in PERFKIT_META
 *    (live_dir) from the start. The feed follows every per-process file,
 *    taking up new ones as processes start, and keeps them open: after the
 *    program ends their last rows are read from the open files, even once
 *    the folder has been removed. When the output is finished, any process
 *    whose file came and went unseen is read from the output by its pid.
 *  - a capture written directly (the collector without `perfkit run`, or a
 *    writer program) is followed in place, connecting only while reading,
 *    so its writer can finish it;
 *  - a finished capture is read once, or replayed by time (--replay). */
#ifndef TUI_TOP_FEED_H
#define TUI_TOP_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "top_model.h"
#include "top_source.h"

struct top_feed_config {
	const char *path;       /* the capture file */
	const char *live_dir;   /* set when top runs the program itself: its folder */
	const char *program;    /* with live_dir: the command line (for the header) */
	uint32_t pid;           /* with live_dir: the program's pid */
	int64_t start_ns;       /* with live_dir: when it started (CLOCK_REALTIME) */
	bool windowed;          /* with live_dir: it records only inside capture windows */
	bool replay;
	double speed;           /* replay: capture seconds per wall second */
};

enum top_feed_state {
	TOP_FEED_LIVE,      /* a capture being written */
	TOP_FEED_LOADING,   /* a finished capture, not all of it read yet */
	TOP_FEED_REPLAY,    /* replaying */
	TOP_FEED_FINISHED,  /* everything read */
	TOP_FEED_LOST,      /* the one file read was deleted, replaced, cut short or
			     * damaged while being read: nothing more is read */
};

/* How often a followed capture is checked for its end, in ns. */
#define TOP_FEED_CHECK_NS 500000000LL

struct top_feed;

/* Open what cfg names and fill the model's header. A missing, foreign or
 * broken file fails here with the reader's one-line message. */
int top_feed__open(const struct top_feed_config *cfg, struct top_model *m,
		   struct top_feed **out, struct prof_error *err);
void top_feed__close(struct top_feed *f);
/* The refresh step: read what is new until the monotonic clock passes
 * deadline_ns, move the model's clock. wall_ns is CLOCK_REALTIME, mono_ns
 * CLOCK_MONOTONIC (the replay clock runs on it). */
void top_feed__refresh(struct top_feed *f, struct top_model *m, int64_t wall_ns,
		       int64_t mono_ns, int64_t deadline_ns);
/* The replay clock stands still while paused. */
void top_feed__pause(struct top_feed *f, bool paused, int64_t mono_ns);
enum top_feed_state top_feed__state(const struct top_feed *f);
/* The program's exit status once the capture is finished; -1 unknown. */
int top_feed__exit_status(const struct top_feed *f);
/* Files lost while being read (top_source.h): how many, how the first was
 * lost, and its one-line message naming the file (NULL while none is). A
 * `perfkit run`'s process file counts from the moment it is deleted,
 * replaced or truncated before the run merged it: top still has it open,
 * but the capture will lack it. Deleting a file top replays loses
 * nothing. */
int top_feed__lost_files(const struct top_feed *f);
enum top_loss top_feed__loss(const struct top_feed *f);
const struct prof_error *top_feed__problem(const struct top_feed *f);

/* When top runs the program: it has ended; read everything its processes
 * wrote (call before the per-process files are merged away). */
void top_feed__drain(struct top_feed *f, struct top_model *m);
/* ... and its capture is complete: let the per-process files go. */
void top_feed__program_done(struct top_feed *f, struct top_model *m, int exit_status,
			    int64_t duration_ns);

#endif
