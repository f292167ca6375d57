/* run_session.c - running a program with the collector injected and folding
 * what every one of its processes recorded into one capture (see
 * run_session.h for the steps; `perfkit run` and `perfkit top -- PROGRAM`
 * both go through them).
 *
 * The program runs as a child with CUDA_INJECTION64_PATH (and
 * NVTX_INJECTION64_PATH) pointing at libperfkit-inject.so; each process that
 * initialises CUDA writes its own proc-<pid>.sqlite into a private folder
 * (processes cannot share one SQLite writer), and when the program ends those
 * files are merged into the output, which only then gets its indexes and
 * views.
 *
 * This file holds the steps in their order (prepare, start, wait, abort);
 * the parts they use are a file each (run_session_parts.h). */
#include "run_session.h"
#include "run_session_impl.h"
#include "run_session_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prof/temp_files.h"
#include "prof/trace_opts.h"
#include "run_collector.h"
#include "run_signals.h"

int64_t run__realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void run_session__init(struct run_session *s, const struct run_options *opt, const char *command,
		       const struct run_messages *msg)
{
	memset(s, 0, sizeof(*s));
	s->opt = *opt;
	s->command = command;
	s->msg = msg;
	s->child_stdin_fd = -1;
	s->child_output_fd = -1;
}

int run_session__prepare(struct run_session *s, char **argv)
{
	struct prof_error err;
	size_t bad_at = 0;
	int rc;

	s->argv = argv;
	s->trace = prof_trace_opts__parse(s->opt.trace_list, &bad_at);
	if (s->trace < 0) {
		s->msg->error("--trace: unknown item '%s' (choose from cuda, kernels, copies, sync, "
			      "overhead, graphs, nvtx, memory, api, api-all, um)",
			      s->opt.trace_list + bad_at);
		return RUN_EXIT_USAGE;
	}
	if (run__graph_trace_check(s) < 0)
		return RUN_EXIT_USAGE;
	if (s->opt.metrics && strcmp(s->opt.metrics, "roofline") && strcmp(s->opt.metrics, "memory")) {
		s->msg->error("--metrics: unknown set '%s' (choose roofline or memory)",
			      s->opt.metrics);
		return RUN_EXIT_USAGE;
	}
	if (s->opt.metrics_sample < 1 || s->opt.metrics_sample > PROF_METRICS_SAMPLE_MAX) {
		s->msg->error("--metrics-sample must be between 1 and %d", PROF_METRICS_SAMPLE_MAX);
		return RUN_EXIT_USAGE;
	}
	if (run__gpu_metrics_hz(s) < 0 || run__python_check(s) < 0 || run__window_check(s) < 0)
		return RUN_EXIT_USAGE;
	if (s->opt.flush_ms < 1 || s->opt.flush_ms > PROF_FLUSH_MS_MAX) {
		s->msg->error("--flush-interval must be between 1 and %d ms", PROF_FLUSH_MS_MAX);
		return RUN_EXIT_USAGE;
	}
	s->output = s->opt.output;
	if (s->output && strchr(s->output, '%')) {
		if (run__expand_output(s->output, s->out_path, sizeof(s->out_path), &err) < 0) {
			s->msg->error("%s", err.msg);
			return RUN_EXIT_USAGE;
		}
		s->output = s->out_path;
	}
	if (!s->output) {
		if (run__default_output(argv[0], s->out_path, sizeof(s->out_path)) < 0) {
			s->msg->error("no free perfkit-*.sqlite name here; use -o FILE");
			return RUN_EXIT_USAGE;
		}
		s->output = s->out_path;
	}
	/* what is at -o is refused as soon as it can be (the program it may be
	 * is known once found, below) */
	if (prof_output__check(s->output, s->opt.force ? PROF_OUTPUT_REPLACE : 0, NULL, &err) < 0) {
		s->msg->error("%s", err.msg);
		return RUN_EXIT_USAGE;
	}
	rc = run__locate_collector(s->collector, sizeof(s->collector));
	if (rc == -1) {
		s->msg->error("this perfkit was built without CUPTI; %s cannot capture",
			      s->command);
		return RUN_EXIT_USAGE;
	}
	if (rc < 0) {
		s->msg->error("cannot find %s next to perfkit or in %s", RUN_COLLECTOR_LIB,
			      PERFKIT_INSTALL_LIBDIR);
		return RUN_EXIT_USAGE;
	}
	rc = run__resolve_program(s->msg, argv[0], s->program_path, sizeof(s->program_path));
	if (rc)
		return rc;
	/* Created now, so a refused -o costs nothing and the name is ours. */
	if (run__create_output(s, &err) < 0) {
		s->msg->error("%s", err.msg);
		return RUN_EXIT_USAGE;
	}
	if (prof_temp_dir__make("perfkit-run", s->dir, sizeof(s->dir), &err) < 0) {
		s->msg->error("cannot make a folder for the process files: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (run__set_env(s->collector, s->dir, s->trace, s->opt.trace_list, s->opt.flush_ms) < 0) {
		s->msg->error("cannot set the environment: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (run__metrics_env(s->opt.metrics, s->opt.metrics_sample, s->metrics_dir,
			sizeof(s->metrics_dir)) < 0 || run__gpu_metrics_env(run__gpu_metrics_hz(s)) < 0) {
		s->msg->error("cannot prepare hardware metrics: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (run__python_env(s) < 0) {
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (run__window_env(s) < 0) {
		s->msg->error("cannot set the environment: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	return 0;
}

const char *run_session__live_dir(const struct run_session *s)
{
	return s->dir;
}

int64_t run_session__start_ns(const struct run_session *s)
{
	return s->start_ns;
}

int64_t run_session__duration_ns(const struct run_session *s)
{
	return s->end_ns - s->start_ns;
}

/* The program, in the forked child. An exec that fails sends its errno
 * back through report_fd; one that succeeds closes it unwritten. */
static _Noreturn void exec_program(const struct run_session *s, int report_fd)
{
	int err;

	run_signals__child_reset();
	if (s->child_stdin_fd >= 0)
		dup2(s->child_stdin_fd, STDIN_FILENO);
	if (s->child_output_fd >= 0) {
		dup2(s->child_output_fd, STDOUT_FILENO);
		dup2(s->child_output_fd, STDERR_FILENO);
	}
	execv(s->program_path, s->argv);
	err = errno;
	if (write(report_fd, &err, sizeof err) != (ssize_t)sizeof err) {
		/* unsaid: perfkit then learns of it only from the exit status */
	}
	_exit(run__cannot_run_status(err));
}

/* The errno the program's exec failed with, or 0 once it ran. */
static int exec_failure(int report_fd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(report_fd, &err, sizeof err);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof err ? err : 0;
}

int run_session__start(struct run_session *s)
{
	int report[2], err;
	pid_t pid;

	/* room for the finish, should the program fill the disk */
	run__reserve_make(s->dir);
	if (pipe(report) < 0) {
		s->msg->error("cannot start %s: %s", s->argv[0], strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	fcntl(report[0], F_SETFD, FD_CLOEXEC);
	fcntl(report[1], F_SETFD, FD_CLOEXEC);
	run_signals__catch();
	fflush(NULL);
	s->start_ns = run__realtime_ns();
	run__window_start_env(); /* without it --delay counts from the collector's start */
	pid = fork();
	if (pid == 0)
		exec_program(s, report[1]);
	err = errno;
	close(report[1]);
	if (pid > 0) {
		run_signals__pass_on_to(pid);
		err = exec_failure(report[0]);
	}
	close(report[0]);
	if (pid < 0 || err) {
		/* the program never ran: nothing of the run is kept */
		if (pid > 0) {
			run_signals__stop();
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			if (err == ENOENT && run__exists(s->program_path))
				s->msg->error("%s: cannot execute: its interpreter (#!) or loader was "
					      "not found", s->argv[0]);
			else
				s->msg->error("%s: %s", s->argv[0], strerror(err));
		} else {
			s->msg->error("cannot start %s: %s", s->argv[0], strerror(err));
		}
		run_signals__restore();
		run_session__abort(s);
		return pid > 0 ? run__cannot_run_status(err) : RUN_EXIT_USAGE;
	}
	s->pid = pid;
	run__write_live_meta(s);
	return 0;
}

int run_session__wait(struct run_session *s, bool block)
{
	if (s->ended)
		return 1;
	if (run_signals__wait(s->pid, &s->status, block) == 0)
		return 0;
	s->end_ns = run__realtime_ns();
	s->ended = true;
	run_signals__stop();
	run_signals__restore();
	s->exit_status = WIFSIGNALED(s->status) ? 128 + WTERMSIG(s->status)
						 : WEXITSTATUS(s->status);
	return 1;
}

void run_session__abort(struct run_session *s)
{
	if (s->dir[0])
		run__remove_dir(s->dir);
	if (s->metrics_dir[0])
		run__remove_dir(s->metrics_dir);
	s->dir[0] = s->metrics_dir[0] = '\0';
	if (s->w) {
		prof_writer__delete(s->w);
		s->w = NULL;
		if (!s->beside)
			unlink(s->output);
	}
	/* what -f was to replace stays as it was */
	prof_output__delete(s->beside);
	s->beside = NULL;
}
