/* cmd_top.c - `perfkit top`: the live view of a capture (tui/top.c).
 *
 *	perfkit top FILE                 follow a capture being written, or
 *	                                 show a finished one
 *	perfkit top --replay[=SPEED] FILE
 *	                                 replay a finished one at its own pace
 *	perfkit top [-o FILE] -- PROGRAM run PROGRAM under capture, as
 *	                                 `perfkit run` does, and show it live
 *
 * When top runs the program, the program's stdin is /dev/null and its
 * stdout and stderr go to the capture's name with .log for .sqlite (the
 * screen is top's); perfkit's own messages are held back until the screen
 * is gone. Quitting top does not stop the
 * program: top waits for it as `perfkit run` would, so the capture is
 * complete and valid, and Ctrl-C reaches the program as it would without
 * perfkit (it shares the terminal's process group); top itself leaves once
 * the program has ended. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_reader.h"
#include "cli_capture.h"
#include "prof/escape.h"
#include "prof/output.h"

#ifdef PERFKIT_HAVE_TUI
#include "top.h"

#define REFRESH_MS_MIN 20
#define REFRESH_MS_MAX 10000

static const char *const usage[] = {
	"perfkit top [--refresh=MS] FILE",
	"perfkit top --replay[=SPEED] [--refresh=MS] FILE... | DIR",
	"perfkit top [-o FILE] [-f] [--trace=LIST] [--flush-interval=MS] -- PROGRAM [ARGS...]",
	NULL,
};

/* ---- the program top runs ----------------------------------------------------- */

static int program_poll(void *ctx, int *exit_status, int64_t *duration_ns)
{
	struct run_session *s = ctx;

	if (!run_session__wait(s, false))
		return 0;
	*exit_status = s->exit_status;
	*duration_ns = run_session__duration_ns(s);
	return 1;
}

static int finish_status;

static int program_finish(void *ctx)
{
	finish_status = run_session__finish(ctx);
	return finish_status;
}

/* FILE.log next to the capture (FILE without .sqlite): the program's
 * output, written as every output is (prof/output.h): through a temporary
 * file beside it, put in place when the program has ended; an existing log
 * only with -f. A signal leaves that file: it is the only copy of what the
 * program printed. NULL after the message. */
static struct prof_output *open_program_log(const char *output, bool force, char *path,
					    size_t cap)
{
	struct prof_output *log = NULL;
	struct prof_error err;
	size_t len = strlen(output);

	if (len > 7 && !strcmp(output + len - 7, ".sqlite"))
		len -= 7;
	if (snprintf(path, cap, "%.*s.log", (int)len, output) >= (int)cap) {
		cli_error("%s: name too long", output);
		return NULL;
	}
	if (prof_output__open(path, PROF_OUTPUT_KEEP_ON_SIGNAL | (force ? PROF_OUTPUT_REPLACE : 0),
			      NULL, &log, &err) < 0) {
		if (err.code == PROF_E_EXISTS)
			cli_error("%s exists (the program's output goes there); use -f to overwrite it",
				  path);
		else
			cli_error("%s", err.msg);
	}
	return log;
}

/* The log put in place; a warning says where it is when it cannot be. */
static void close_program_log(struct prof_output *log)
{
	struct prof_error err;

	if (prof_output__commit(log, &err) < 0) {
		cli_warning("%s; the program's output is in %s", err.msg,
			    prof_output__temp_path(log));
		prof_output__leave(log);
		return;
	}
	prof_output__delete(log);
}

/* stderr into a temporary file while the screen is up; back, and replayed. */
static int hold_stderr(FILE **held)
{
	int saved;

	fflush(stderr);
	*held = tmpfile();
	saved = *held ? dup(STDERR_FILENO) : -1;
	if (saved < 0 || dup2(fileno(*held), STDERR_FILENO) < 0) {
		if (*held)
			fclose(*held);
		*held = NULL;
		if (saved >= 0)
			close(saved);
		return -1;
	}
	return saved;
}

static void release_stderr(FILE *held, int saved)
{
	char buf[4096];
	size_t n;

	if (saved < 0)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(held);
	while ((n = fread(buf, 1, sizeof buf, held)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(held);
}

static int top_program(const struct run_options *opt, int64_t refresh_ms, char **prog)
{
	static const struct run_messages msg = RUN_CLI_MESSAGES;
	char log_path[4096], *command;
	struct prof_output *log;
	struct run_session s;
	struct top_config cfg;
	struct top_program ops = { program_poll, program_finish, NULL };
	struct prof_error err;
	bool running = true;
	int rc, null_fd, saved;
	FILE *held = NULL;

	run_session__init(&s, opt, "top", &msg);
	rc = run_session__prepare(&s, prog);
	if (rc)
		return rc;
	log = open_program_log(s.output, opt->force, log_path, sizeof log_path);
	null_fd = open("/dev/null", O_RDONLY);
	if (!log || null_fd < 0) {
		if (null_fd < 0)
			cli_error("/dev/null: %s", strerror(errno));
		prof_output__delete(log);
		if (null_fd >= 0)
			close(null_fd);
		run_session__abort(&s);
		return CLI_EXIT_USAGE;
	}
	s.child_stdin_fd = null_fd;
	s.child_output_fd = fileno(prof_output__stream(log));
	rc = run_session__start(&s);
	close(null_fd);
	if (rc) {
		prof_output__delete(log); /* the program never ran: nothing of it is kept */
		return rc;
	}
	command = run_session__command_line(prog);
	memset(&cfg, 0, sizeof cfg);
	cfg.feed.path = run_session__file(&s);
	cfg.feed.live_dir = run_session__live_dir(&s);
	cfg.feed.program = command ? command : prog[0];
	cfg.feed.pid = (uint32_t)s.pid;
	cfg.feed.start_ns = run_session__start_ns(&s);
	cfg.feed.windowed = run_session__windowed(&s);
	cfg.refresh_ms = (int)refresh_ms;
	ops.ctx = &s;
	cfg.program = &ops;
	cfg.take_signal = run_signals__take;
	run_signals__catch();
	saved = hold_stderr(&held);
	rc = top__run(&cfg, &running, &err);
	release_stderr(held, saved);
	run_signals__restore();
	free(command);
	/* a process file lost: the run's own lines below say what the capture
	 * lacks; the exit status stays the program's, as with perfkit run */
	if (rc == TOP_FILE_LOST)
		cli_warning("%s", err.msg);
	else if (rc)
		cli_error("%s", err.msg);
	if (running) {
		fputs("perfkit: ", stderr);
		prof_fputs_term(stderr, prog[0]);
		fprintf(stderr, " (pid %d) is still running; waiting for it to end "
			"(Ctrl-C interrupts it)\n", (int)s.pid);
		run_session__wait(&s, true);
		finish_status = run_session__finish(&s);
	}
	/* the program has ended: all it printed is in the log */
	close_program_log(log);
	if (finish_status < 0)
		return s.exit_status; /* the program's, whatever became of the capture */
	fputs("perfkit: program output in ", stderr);
	prof_fputs_term(stderr, log_path);
	fputc('\n', stderr);
	run_session__report(&s);
	return s.exit_status;
}

/* ---- a capture file ------------------------------------------------------------------ */

static int top_file(const char *path, const char *replay, int64_t refresh_ms)
{
	struct top_config cfg;
	struct prof_error err;
	struct stat st;
	char *end;
	int rc;

	memset(&cfg, 0, sizeof cfg);
	cfg.feed.path = path;
	if (replay) {
		cfg.feed.replay = true;
		cfg.feed.speed = *replay ? strtod(replay, &end) : 1.0;
		if (*replay && (*end || !isfinite(cfg.feed.speed) || cfg.feed.speed <= 0)) {
			cli_error("--replay: SPEED must be a positive number, not '%s'", replay);
			return CLI_EXIT_USAGE;
		}
	}
	cfg.refresh_ms = (int)refresh_ms;
	cfg.take_signal = run_signals__take;
	run_signals__catch();
	rc = top__run(&cfg, NULL, &err);
	run_signals__restore();
	if (!rc)
		return CLI_EXIT_OK;
	if (rc == TOP_FILE_LOST) {
		/* what the screen showed stopped short of the capture */
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	/* `perfkit top ./app` meant `perfkit top -- ./app` */
	if (err.code == PROF_E_NOT_SQLITE && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0)
		cli_error("%s (to run a program: perfkit top -- %s)", err.msg, path);
	else
		cli_error("%s", err.msg);
	return CLI_EXIT_USAGE;
}

int cmd_top(int argc, char **argv)
{
	struct run_options opt = RUN_OPTIONS_INIT;
	const char *replay = NULL;
	int64_t refresh_ms = TOP_REFRESH_MS_DEFAULT;
	const struct cli_option opts[] = {
		CLI_OPTIONAL("replay", &replay, "SPEED",
			     "replay a finished capture at SPEED times its pace (default 1)"),
		CLI_INT(0, "refresh", &refresh_ms, "MS", "read the capture this often (default 250)"),
		RUN_CLI_CAPTURE_OPTIONS(&opt),
		CLI_END(),
	};
	char **prog = NULL;
	int n, nopt = argc;

	/* What follows the first "--" is the program and its arguments. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			nopt = i;
			prog = argv + i + 1;
			break;
		}
	}
	n = cli_parse(nopt, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	/* one process's view: under mpirun, rank 0's */
	if (replay && cli_reader__not_rank0())
		return CLI_EXIT_OK;
	if (refresh_ms < REFRESH_MS_MIN || refresh_ms > REFRESH_MS_MAX) {
		cli_error("--refresh must be between %d and %d ms", REFRESH_MS_MIN, REFRESH_MS_MAX);
		return CLI_EXIT_USAGE;
	}
	if (prog && *prog) {
		if (n > 0) {
			cli_error("top shows either a capture FILE or a program after '--', not both");
			return CLI_EXIT_USAGE;
		}
		if (replay) {
			cli_error("--replay replays a capture FILE; it cannot run a program");
			return CLI_EXIT_USAGE;
		}
		return top_program(&opt, refresh_ms, prog);
	}
	if (n == 0) {
		cli_error("top needs a capture file, or a program: perfkit top -- PROGRAM [ARGS...]");
		return CLI_EXIT_USAGE;
	}
	if (n > 1 && !replay) {
		cli_error("top follows one capture file; --replay replays a job of several (to run "
			  "a program: perfkit top -- PROGRAM)");
		return CLI_EXIT_USAGE;
	}
	/* -f of --replay: a job's captures that do not look like one job's, as one */
	if (opt.output || (opt.force && !replay) || opt.trace_list ||
	    opt.flush_ms != PROF_FLUSH_MS_DEFAULT) {
		cli_error("-o, -f, --trace and --flush-interval apply to a program: perfkit top [options] -- PROGRAM");
		return CLI_EXIT_USAGE;
	}
	if (!replay)
		return top_file(argv[0], replay, refresh_ms);
	/* a finished job's captures, several files or a directory, replayed as one */
	struct cli_input input = { 0 };
	int status = cli_input__make(&input, argv, n, opt.force);

	if (!status)
		status = top_file(input.path, replay, refresh_ms);
	cli_input__close(&input);
	return status;
}

#else /* built without the tui module */

int cmd_top(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("this perfkit was built without ncurses; top is not available");
	return CLI_EXIT_USAGE;
}

#endif
