/* run_session_parts.h - the parts of a capture session, one file each, as
 * run_session.c's steps use them: finding the collector, the program and
 * the output's name (run_locate.c), the program's environment
 * (run_env.c), the capture's metadata and output file (run_meta.c), and
 * where the finished capture goes (run_session_end.c). */
#ifndef PERFKIT_RUN_SESSION_PARTS_H
#define PERFKIT_RUN_SESSION_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "run_session.h"

/* run_session.c: the wall clock, in ns since the epoch. */
int64_t run__realtime_ns(void);

/* run_locate.c */
/* Whether something is at path. */
int run__exists(const char *path);
/* What follows path's last '/'. */
const char *run__base_name(const char *path);
/* The injection library into buf: 0; -1 in a build without CUPTI; -2 when
 * it is not where the build or the install put it. */
int run__locate_collector(char *buf, size_t cap);
/* The exit status of a program that could not be run, by errno. */
int run__cannot_run_status(int err);
/* name as exec would find it (through PATH) into buf: 0, or the exit
 * status after the error is told. */
int run__resolve_program(const struct run_messages *msg, const char *name, char *buf,
			 size_t cap);
/* perfkit-<program>-N.sqlite, the first N free here, into buf: 0 or -1. */
int run__default_output(const char *program, char *buf, size_t cap);
/* -o with %h, %p, %r, %q{VAR} expanded into buf (prof/job_env.h). */
int run__expand_output(const char *pattern, char *buf, size_t cap, struct prof_error *err);

/* run_env.c: each 0, or -1 with errno set. */
int run__set_env(const char *collector, const char *dir, int trace, const char *trace_list,
		 int64_t flush_ms);
/* A rate option (--OPTION[=HZ], v "" for the default, NULL when not
 * given): samples a second, 0 when not given, < 0 after the error. */
long run__rate(const struct run_session *s, const char *option, const char *v, long fallback,
	       long least, long most);
/* --gpu-metrics[=HZ]: samples a second, 0 when off, < 0 after the error. */
long run__gpu_metrics_hz(const struct run_session *s);
int run__gpu_metrics_env(long hz);
/* --metrics: its folder made into dir and named in the environment. */
int run__metrics_env(const char *metrics, int64_t sample, char *dir, size_t cap);

/* run_python.c: --pytorch, --python-sampling, --python-backtrace. check:
 * 0, or -1 after the error; the rate: samples a second, 0 when off, < 0
 * after the error; env: the hook put on PYTHONPATH with what it is to do
 * (0, or -1 after the error). */
int run__python_check(const struct run_session *s);
long run__python_sampling_hz(const struct run_session *s);
int run__python_env(const struct run_session *s);

/* run_graph_trace.c: --cuda-graph-trace=node|graph checked; graph adds
 * `graphs` to the trace list handed on. 0, or -1 after the error. */
int run__graph_trace_check(struct run_session *s);

/* run_window.c: capture windows. check: 0, or -1 after the error (the
 * durations read into s); asked: whether any window option was given; env:
 * the collector told (0, or -1 with errno); start_env: the run's start on
 * CLOCK_MONOTONIC, which --delay counts from; report: the end's line on
 * how much of the run the windows held. */
int run__window_check(struct run_session *s);
bool run__windows_asked(const struct run_session *s);
int run__window_env(const struct run_session *s);
int run__window_start_env(void);
struct prof_store;
void run__window_report(const struct run_session *s, struct prof_store *store);

/* run_meta.c */
/* What a reader of the unfinished output needs to follow the run. */
void run__write_live_meta(struct run_session *s);
/* The finished run's metadata. */
void run__write_meta(struct run_session *s, const char *gpu);
/* The output claimed as prof/output.h's rule says (run_session.h). */
int run__create_output(struct run_session *s, struct prof_error *err);

#endif
