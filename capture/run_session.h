/* run_session.h - running a program under capture, shared by `perfkit run`
 * and `perfkit top -- PROGRAM`.
 *
 * A session goes through fixed steps:
 *
 *	run_session__prepare   options checked, collector and program found,
 *	                       the output created, the folder of per-process
 *	                       files made and the environment set
 *	run_session__start     the program forked (one that cannot be run is
 *	                       refused and leaves nothing); signals sent to
 *	                       perfkit go on to it (run_signals.h)
 *	run_session__wait      (blocking or not) until the program has ended
 *	run_session__finish    per-process files merged into the output, run
 *	                       metadata, indexes: the capture is complete
 *	run_session__report    "capture written to" and the overview
 *
 * While the program runs, each of its processes that initialises CUDA writes
 * dir/proc-<pid>.sqlite (committed at least every flush interval); the
 * output holds the run's metadata from the start, including the key
 * "live_dir" naming that folder, so a reader of the output (perfkit top) can
 * follow the per-process files until the merge. Those names, and the
 * environment the collector reads, are prof/protocol.h's.
 *
 * The output follows prof/output.h's rule: a link, a device, FIFO, socket
 * or directory, and the program being run, are refused, -f or not; an
 * existing file without -f. When nothing is at its path, the output is
 * claimed there at the start (O_EXCL), and the finished capture takes the
 * place of that claim. With -f onto an existing file, that file is left
 * untouched until the capture is complete: the run's metadata goes to
 * .NAME.perfkit-XXXXXX beside it (recording NAME as PROF_META_OUTPUT), and
 * the finished capture is renamed over the old file, unless another file
 * took the name meanwhile (then it is kept in the run's folder, as when the
 * claimed output is taken).
 *
 * Where an interrupted run leaves its rows: until the finish they are only
 * in the process files, in $TMPDIR/perfkit-run-XXXXXX; the unfinished
 * output (the claimed file, or the .NAME.perfkit-XXXXXX beside the old
 * one) names that folder. SIGINT and SIGTERM while the program runs are
 * passed on to it and the capture is finished as usual; a run killed
 * outright (SIGKILL, or a signal during the finish) leaves both, and
 * `perfkit recover NAME` merges them (it finds the file beside NAME), so
 * neither is removed by a signal. */
#ifndef PERFKIT_RUN_SESSION_H
#define PERFKIT_RUN_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "prof/output.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "run_signals.h"

/* The exit statuses a step returns besides the program's own: the perfkit
 * command's for bad usage (cli/cli_capture.h checks that they agree), and a
 * shell's for a program that cannot run. */
enum run_exit {
	RUN_EXIT_USAGE = 2,
	RUN_EXIT_CANNOT_EXECUTE = 126,
	RUN_EXIT_NOT_FOUND = 127,
};

/* How a session tells the user what went wrong. capture/ does not include
 * cli/, so the command hands over its one reporting helper (cli_error and
 * cli_warning: "perfkit: ..." on stderr, sanitised for the terminal). */
struct run_messages {
	void (*error)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
	void (*warning)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
};

/* What the user chose on the command line. */
struct run_options {
	const char *output;     /* -o; NULL: perfkit-PROGRAM-N.sqlite here */
	bool force;             /* -f: replace the output (a regular file) */
	const char *trace_list; /* --trace; NULL: everything */
	int64_t flush_ms;       /* --flush-interval */
	const char *metrics;    /* --metrics; NULL: none */
	int64_t metrics_sample; /* --metrics-sample */
	const char *gpu_metrics; /* --gpu-metrics[=HZ]: "" the default rate; NULL: none */
	const char *pytorch;     /* --pytorch: "modules"; NULL: none */
	const char *python_sampling; /* --python-sampling[=HZ]: "" the default rate; NULL: none */
	const char *python_backtrace; /* --python-backtrace: "cuda"; NULL: none */
	const char *python_native; /* --python-native-frames: "on", "off"; NULL: on */
	/* capture windows (run_window.c): NULL / false when not given */
	const char *capture_range; /* --capture-range: nvtx:NAME[@DOMAIN][,...] | cudaProfilerApi */
	const char *delay;         /* --delay=DUR */
	const char *duration;      /* --duration=DUR */
	bool start_paused;         /* --start-paused: windows by perfkit start/stop */
	const char *cuda_graph_trace; /* --cuda-graph-trace: "node", "graph"; NULL: node */
};

#define RUN_OPTIONS_INIT { .flush_ms = PROF_FLUSH_MS_DEFAULT, .metrics_sample = 1 }

struct run_session {
	struct run_options opt;
	const char *command;      /* "run" or "top", for messages */
	const struct run_messages *msg; /* how its messages reach the user */
	char **argv;              /* the program and its arguments */
	const char *output;       /* the capture's name */
	/* With -f onto an existing file: the temporary file beside it that the
	 * capture is written in until the finish renames it into place;
	 * NULL: the capture is written at output itself. */
	struct prof_output *beside;
	int child_stdin_fd;       /* -1: the program inherits ours */
	int child_output_fd;      /* stdout and stderr; -1: inherited */
	pid_t pid;                /* the program, once started */
	int exit_status;          /* the program's, 128 + signal when killed */
	int merged;               /* per-process files folded into the output */
	/* private */
	char program_path[PATH_MAX], out_path[PATH_MAX], dir[PATH_MAX], metrics_dir[PATH_MAX];
	char collector[PATH_MAX];
	struct prof_writer *w;
	/* the capture's file (run_session__file) as last written before the
	 * program ended */
	bool out_known;
	dev_t out_dev;
	ino_t out_ino;
	off_t out_bytes;
	int trace;
	/* --trace's list with `graphs` added for --cuda-graph-trace=graph */
	char trace_list_graphs[256];
	int status;
	bool ended;
	int64_t start_ns, end_ns;
	int64_t delay_ns, duration_ns; /* --delay and --duration, checked */
	int64_t ready_ns; /* realtime when the capture was complete, 0 before */
};

/* The program's arguments joined by spaces, malloc'd (NULL without memory). */
char *run_session__command_line(char **argv);
/* Zero s, set its options, the command named in messages and how they are
 * reported. */
void run_session__init(struct run_session *s, const struct run_options *opt, const char *command,
		       const struct run_messages *msg);
/* Everything before the program starts. 0, or the exit status to return
 * (the message printed; nothing left behind). */
int run_session__prepare(struct run_session *s, char **argv);
/* The file the capture is written in until it is finished: output, or the
 * temporary file beside it. */
const char *run_session__file(const struct run_session *s);
/* The folder holding the per-process files of the running program. */
const char *run_session__live_dir(const struct run_session *s);
/* Whether it records only inside capture windows (--capture-range,
 * --delay, --duration, --start-paused). */
bool run_session__windowed(const struct run_session *s);
/* When the program started (CLOCK_REALTIME), and how long it ran once
 * run_session__wait saw it end. */
int64_t run_session__start_ns(const struct run_session *s);
int64_t run_session__duration_ns(const struct run_session *s);
/* Fork the program. 0, or an exit status (the session is aborted): 126 or
 * 127, as a shell's, when the program could not be executed (one line
 * says why; nothing of the run is left). */
int run_session__start(struct run_session *s);
/* 1 once the program has ended (s->exit_status set), 0 while it runs (only
 * when block is false). */
int run_session__wait(struct run_session *s, bool block);
/* Make the capture complete. 0, or -1 after a message (s->exit_status is
 * still the program's). */
int run_session__finish(struct run_session *s);
/* "perfkit: capture written to FILE" and the overview, on stderr. */
void run_session__report(const struct run_session *s);
/* Give up before the program started: remove what prepare made. */
void run_session__abort(struct run_session *s);

#endif
