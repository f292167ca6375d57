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
 * views. */
#include "run_session.h"
#include "run_session_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "prof/escape.h"
#include "prof/job_env.h"
#include "prof/protocol.h"
#include "prof/tables.h"
#include "prof/temp_files.h"
#include "prof/trace_opts.h"
#include "run_collector.h"
#include "run_signals.h"
#include "sink/sink.h"
#include "summary/summary.h"

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- finding things ---------------------------------------------------- */

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* buf = dir/name when it fits and the file exists. */
static int found_at(char *buf, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(buf, cap, "%s%s%s", dir, name ? "/" : "", name ? name : "");

	return n > 0 && (size_t)n < cap && exists(buf);
}

/* The injection library: next to the binary (a carried or relocated build),
 * in the build tree, or installed. */
static int locate_collector(char *buf, size_t cap)
{
	const char *built = run_collector__build_path();
	char self[PATH_MAX];
	ssize_t n;

	if (!built)
		return -1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (found_at(buf, cap, self, RUN_COLLECTOR_LIB) ||
			    found_at(buf, cap, self, "../collectors/" RUN_COLLECTOR_LIB))
				return 0;
		}
	}
	if (found_at(buf, cap, built, NULL) ||
	    found_at(buf, cap, PERFKIT_INSTALL_LIBDIR, RUN_COLLECTOR_LIB))
		return 0;
	return -2;
}

/* The shell's exit status for a program that could not be executed. */
static int cannot_run_status(int err)
{
	return err == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_EXECUTE;
}

/* What a shell would do with the program name: 0 found, else the shell's
 * exit status (127 not found, 126 not executable) after its message. A
 * folder passes access(X_OK) (it can be searched) but cannot be run. */
static int resolve_program(const struct run_messages *msg, const char *name, char *buf,
			   size_t cap)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(name, '/')) {
		snprintf(buf, cap, "%s", name);
		if (stat(buf, &st) < 0) {
			int err = errno;

			msg->error("%s: %s", name, strerror(err));
			return cannot_run_status(err);
		}
		if (S_ISDIR(st.st_mode)) {
			msg->error("%s: Is a directory", name);
			return RUN_EXIT_CANNOT_EXECUTE;
		}
		if (!S_ISREG(st.st_mode) || access(buf, X_OK) != 0) {
			msg->error("%s: Permission denied", name);
			return RUN_EXIT_CANNOT_EXECUTE;
		}
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*name) {
		size_t len = strcspn(path, ":");

		snprintf(buf, cap, "%.*s%s%s", (int)len, len ? path : ".", "/", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		if (!path[len])
			break;
		path += len + 1;
	}
	msg->error("%s: command not found", name);
	return RUN_EXIT_NOT_FOUND;
}

/* perfkit-<program>-N.sqlite, the first N that is free. */
static int default_output(const char *program, char *buf, size_t cap)
{
	const char *base = strrchr(program, '/');
	char name[64];
	size_t i;

	base = base ? base + 1 : program;
	for (i = 0; base[i] && i < sizeof(name) - 1; i++) {
		char c = base[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		name[i] = plain ? c : '_';
	}
	name[i] = '\0';
	for (int n = 1; n < 100000; n++) {
		snprintf(buf, cap, "perfkit-%s-%d.sqlite", name, n);
		if (!exists(buf))
			return 0;
	}
	return -1;
}

/* ---- the child ----------------------------------------------------------- */

static int set_env(const char *collector, const char *dir, int trace, const char *trace_list,
		   int64_t flush_ms)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", (long long)flush_ms);
	if (setenv(PROF_ENV_CUDA_INJECTION, collector, 1) < 0 ||
	    setenv(PROF_ENV_OUTPUT_DIR, dir, 1) < 0 || setenv(PROF_ENV_FLUSH_MS, num, 1) < 0 ||
	    setenv(PROF_ENV_TRACE, trace_list ? trace_list : "", 1) < 0)
		return -1;
	/* NVTX loads the collector too, which starts CUPTI before the first
	 * range even when NVTX is used before CUDA, and hands over to CUPTI. */
	if (trace & PROF_TRACE_NVTX)
		return setenv(PROF_ENV_NVTX_INJECTION, collector, 1);
	return unsetenv(PROF_ENV_NVTX_INJECTION);
}

/* --gpu-metrics[=HZ]: samples per second, 0 when off, < 0 (said) when the
 * value is not one. Sampling and kernel replay (--metrics) both hold the
 * GPU's performance monitors. */
static long gpu_metrics_hz(const struct run_session *s)
{
	const char *v = s->opt.gpu_metrics;
	char *end;
	long hz;

	if (!v)
		return 0;
	if (s->opt.metrics) {
		s->msg->error("--gpu-metrics and --metrics cannot be used together (both use the "
			      "GPU's counters)");
		return -1;
	}
	if (!*v)
		return PROF_GPU_METRICS_HZ_DEFAULT;
	hz = strtol(v, &end, 10);
	if (*end || end == v || hz < PROF_GPU_METRICS_HZ_MIN || hz > PROF_GPU_METRICS_HZ_MAX) {
		s->msg->error("--gpu-metrics: '%s' is not a rate between %d and %d samples a second",
			      v, PROF_GPU_METRICS_HZ_MIN, PROF_GPU_METRICS_HZ_MAX);
		return -1;
	}
	return hz;
}

static int gpu_metrics_env(long hz)
{
	char num[32];

	if (!hz)
		return unsetenv(PROF_ENV_GPU_METRICS);
	snprintf(num, sizeof num, "%ld", hz);
	return setenv(PROF_ENV_GPU_METRICS, num, 1);
}

/* --metrics: the collector writes one metrics file per process into a folder
 * of its own, imported into the capture once it is finished. */
static int metrics_env(const char *metrics, int64_t sample, char *dir, size_t cap)
{
	struct prof_error err = { 0 };
	char num[32];

	if (!metrics) {
		unsetenv(PROF_ENV_METRICS);
		return 0;
	}
	if (prof_temp_dir__make("perfkit-metrics", dir, cap, &err) < 0)
		return -1; /* errno says why */
	snprintf(num, sizeof(num), "%lld", (long long)sample);
	if (setenv(PROF_ENV_METRICS, metrics, 1) < 0 || setenv(PROF_ENV_METRICS_DIR, dir, 1) < 0 ||
	    setenv(PROF_ENV_METRICS_SAMPLE, num, 1) < 0)
		return -1;
	return 0;
}

static const char *process_env(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* -o with %h, %p, %r, %q{VAR}: one name per host, launcher or rank when the
 * same command line runs on every node (`srun perfkit run -o job-%h-%r`). */
static int expand_output(const char *pattern, char *buf, size_t cap, struct prof_error *err)
{
	char host[256] = "";
	struct prof_pattern_values v = { host, (long)getpid(), process_env, NULL };

	gethostname(host, sizeof(host) - 1);
	return prof_output_pattern__expand(pattern, &v, buf, cap, err);
}

/* ---- the capture ------------------------------------------------------- */

void run__remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

void run__meta_int(struct prof_writer *w, const char *key, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	prof_writer__meta(w, key, num);
}

char *run_session__command_line(char **argv)
{
	size_t len = 1;
	char *cmd;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	cmd = calloc(1, len);
	for (int i = 0; cmd && argv[i]; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	return cmd;
}

void run__meta_command(struct prof_writer *w, char **argv)
{
	char *cmd = run_session__command_line(argv);

	prof_writer__meta(w, "command", cmd ? cmd : argv[0]);
	free(cmd);
}

const char *run_session__file(const struct run_session *s)
{
	return s->beside ? prof_output__temp_path(s->beside) : s->output;
}

/* The capture's file as it is now: nothing writes it again until the
 * finish, which checks that it is still there as it was (output_fate). */
static void note_output(struct run_session *s)
{
	struct stat st;

	s->out_known = stat(run_session__file(s), &st) == 0;
	if (s->out_known) {
		s->out_dev = st.st_dev;
		s->out_ino = st.st_ino;
		s->out_bytes = st.st_size;
	}
}

/* What a reader of the unfinished output needs to follow the run: the
 * program, its pid, when it started and where its processes write. */
static void write_live_meta(struct run_session *s)
{
	struct prof_error err;
	char host[256] = "";

	run__meta_command(s->w, s->argv);
	run__meta_int(s->w, "start_ns", (long long)s->start_ns);
	run__meta_int(s->w, PROF_META_PID, (long long)s->pid);
	run__meta_int(s->w, PROF_META_RUN_PID, (long long)getpid());
	gethostname(host, sizeof(host) - 1);
	prof_writer__meta(s->w, PROF_META_HOST, host);
	run__meta_trace(s->w, s->opt.trace_list);
	prof_writer__meta(s->w, PROF_META_LIVE_DIR, s->dir);
	if (s->metrics_dir[0])
		prof_writer__meta(s->w, PROF_META_LIVE_METRICS_DIR, s->metrics_dir);
	if (s->beside)
		prof_writer__meta(s->w, PROF_META_OUTPUT, base_name(s->output));
	prof_writer__flush(s->w, &err);
	note_output(s);
}

void run__meta_trace(struct prof_writer *w, const char *trace_list)
{
	prof_writer__meta(w, "trace", trace_list && *trace_list ? trace_list : "cuda,nvtx,memory,api");
}

void run__meta_merged(struct prof_writer *w, const char *gpu)
{
	if (gpu)
		prof_writer__meta(w, "gpu", gpu);
	prof_writer__meta(w, "perfkit_version", PERFKIT_VERSION);
	/* The folders are gone once merged: a finished capture names no live
	 * data, and it is at its name. */
	prof_writer__meta(w, PROF_META_LIVE_DIR, NULL);
	prof_writer__meta(w, PROF_META_LIVE_METRICS_DIR, NULL);
	prof_writer__meta(w, PROF_META_OUTPUT, NULL);
}

static void write_meta(struct run_session *s, const char *gpu)
{
	char host[256] = "";

	run__meta_command(s->w, s->argv);
	gethostname(host, sizeof(host) - 1);
	prof_writer__meta(s->w, PROF_META_HOST, host);
	run__meta_int(s->w, "start_ns", (long long)s->start_ns);
	run__meta_int(s->w, "duration_ns", (long long)(s->end_ns - s->start_ns));
	run__meta_int(s->w, "exit_status", s->exit_status);
	run__meta_trace(s->w, s->opt.trace_list);
	run__meta_merged(s->w, gpu);
}

/* Metrics rows, and this GPU's cached `perfkit peaks`, into the capture. */
void run__metrics_import(const struct run_messages *msg, const char *output, char *dir)
{
	struct prof_error err;
	int rows;

	if (dir[0]) {
		rows = prof_analysis__import_metrics_dir(output, dir, &err);
		if (rows < 0)
			msg->warning("hardware metrics not stored: %s", err.msg);
		else
			fprintf(stderr, "perfkit: %d kernel launches with hardware metrics\n", rows);
		run__remove_dir(dir);
		dir[0] = '\0';
	}
	if (peaks_doc__store_cached(output, &err) < 0)
		msg->warning("cached peaks not stored: %s", err.msg);
}

/* The output as prof/output.h's rule says: refused as it must be, claimed
 * when its name is free, or with -f onto an existing file a temporary file
 * beside it (see run_session.h). */
static int create_output(struct run_session *s, struct prof_error *err)
{
	const struct prof_output_spared program = { s->program_path, "the program to run" };
	unsigned flags = s->opt.force ? PROF_OUTPUT_REPLACE : 0;
	struct stat st;
	int rc;

	rc = prof_output__check(s->output, flags, &program, err);
	if (rc)
		return rc;
	if (lstat(s->output, &st) != 0)
		return prof_writer__create(s->output, 0, &s->w, err);
	rc = prof_output__open(s->output, flags | PROF_OUTPUT_BY_NAME | PROF_OUTPUT_KEEP_ON_SIGNAL,
			       &program, &s->beside, err);
	if (!rc)
		rc = prof_writer__create(prof_output__temp_path(s->beside), PROF_WRITER_CLAIMED, &s->w,
					 err);
	if (!rc && prof_writer__set_name(s->w, s->output) < 0)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc) {
		prof_writer__delete(s->w);
		s->w = NULL;
		prof_output__delete(s->beside);
		s->beside = NULL;
	}
	return rc;
}

/* ---- the steps ----------------------------------------------------------- */

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
		s->msg->error("--trace: unknown item '%s' (choose from cuda, nvtx, memory, api, api-all)",
			      s->opt.trace_list + bad_at);
		return RUN_EXIT_USAGE;
	}
	if (s->opt.metrics && strcmp(s->opt.metrics, "roofline") && strcmp(s->opt.metrics, "memory")) {
		s->msg->error("--metrics: unknown set '%s' (choose roofline or memory)",
			      s->opt.metrics);
		return RUN_EXIT_USAGE;
	}
	if (s->opt.metrics_sample < 1 || s->opt.metrics_sample > PROF_METRICS_SAMPLE_MAX) {
		s->msg->error("--metrics-sample must be between 1 and %d", PROF_METRICS_SAMPLE_MAX);
		return RUN_EXIT_USAGE;
	}
	if (gpu_metrics_hz(s) < 0)
		return RUN_EXIT_USAGE;
	if (s->opt.flush_ms < 1 || s->opt.flush_ms > PROF_FLUSH_MS_MAX) {
		s->msg->error("--flush-interval must be between 1 and %d ms", PROF_FLUSH_MS_MAX);
		return RUN_EXIT_USAGE;
	}
	s->output = s->opt.output;
	if (s->output && strchr(s->output, '%')) {
		if (expand_output(s->output, s->out_path, sizeof(s->out_path), &err) < 0) {
			s->msg->error("%s", err.msg);
			return RUN_EXIT_USAGE;
		}
		s->output = s->out_path;
	}
	if (!s->output) {
		if (default_output(argv[0], s->out_path, sizeof(s->out_path)) < 0) {
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
	rc = locate_collector(s->collector, sizeof(s->collector));
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
	rc = resolve_program(s->msg, argv[0], s->program_path, sizeof(s->program_path));
	if (rc)
		return rc;
	/* Created now, so a refused -o costs nothing and the name is ours. */
	if (create_output(s, &err) < 0) {
		s->msg->error("%s", err.msg);
		return RUN_EXIT_USAGE;
	}
	if (prof_temp_dir__make("perfkit-run", s->dir, sizeof(s->dir), &err) < 0) {
		s->msg->error("cannot make a folder for the process files: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (set_env(s->collector, s->dir, s->trace, s->opt.trace_list, s->opt.flush_ms) < 0) {
		s->msg->error("cannot set the environment: %s", strerror(errno));
		run_session__abort(s);
		return RUN_EXIT_USAGE;
	}
	if (metrics_env(s->opt.metrics, s->opt.metrics_sample, s->metrics_dir,
			sizeof(s->metrics_dir)) < 0 || gpu_metrics_env(gpu_metrics_hz(s)) < 0) {
		s->msg->error("cannot prepare hardware metrics: %s", strerror(errno));
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
	_exit(cannot_run_status(err));
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
	s->start_ns = realtime_ns();
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
			if (err == ENOENT && exists(s->program_path))
				s->msg->error("%s: cannot execute: its interpreter (#!) or loader was "
					      "not found", s->argv[0]);
			else
				s->msg->error("%s: %s", s->argv[0], strerror(err));
		} else {
			s->msg->error("cannot start %s: %s", s->argv[0], strerror(err));
		}
		run_signals__restore();
		run_session__abort(s);
		return pid > 0 ? cannot_run_status(err) : RUN_EXIT_USAGE;
	}
	s->pid = pid;
	write_live_meta(s);
	return 0;
}

int run_session__wait(struct run_session *s, bool block)
{
	if (s->ended)
		return 1;
	if (run_signals__wait(s->pid, &s->status, block) == 0)
		return 0;
	s->end_ns = realtime_ns();
	s->ended = true;
	run_signals__stop();
	run_signals__restore();
	s->exit_status = WIFSIGNALED(s->status) ? 128 + WTERMSIG(s->status)
						 : WEXITSTATUS(s->status);
	return 1;
}

/* Whether a capture that could not be finished is still the unfinished
 * output `perfkit recover` finishes (taking over the process file failed
 * before it was put in place). */
static bool recoverable(const char *output)
{
	struct prof_store *store;
	struct prof_error err;

	if (prof_store__open_capture(output, &store, &err) == 0) {
		prof_store__close(store);
		return false;
	}
	return err.code == PROF_E_UNFINISHED;
}

static bool folder_exists(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return true;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The output's folder was removed while the program ran (the output's
 * file went with it: the writer holds a file nobody can open), or another
 * file has taken the output's name since (another run given -f): the
 * capture is made in the run's folder instead, under the output's name;
 * why says which. 0, or -1 when that could not be created either (the old
 * output is kept writing). Closing the old writer leaves the WAL and
 * shared-memory files under the output's name alone: SQLite checkpoints
 * and removes them only while the name is still its database's. */
static int keep_in_run_folder(struct run_session *s, struct run_finish_outcome *kept,
			      const char *why)
{
	struct prof_writer *w;
	struct prof_error err;
	char path[PATH_MAX];

	if (run__kept_path(s->dir, s->output, path, sizeof path) < 0 ||
	    prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err) < 0)
		return -1;
	snprintf(kept->why, sizeof kept->why, "%s (%s)", why, s->output);
	snprintf(kept->kept, sizeof kept->kept, "%s", path);
	prof_writer__delete(s->w);
	s->w = w;
	/* the file beside the output held only the run's metadata */
	prof_output__delete(s->beside);
	s->beside = NULL;
	snprintf(s->out_path, sizeof s->out_path, "%s", path);
	s->output = s->out_path;
	write_live_meta(s);
	return 0;
}

/* What became of the output's file while the program ran (its folder
 * still there): someone else's tools can delete or truncate it, and
 * another `perfkit run -f` onto the same name replaces it with its own. */
enum output_fate { OUTPUT_AS_WRITTEN, OUTPUT_DELETED, OUTPUT_TRUNCATED, OUTPUT_REPLACED };

static enum output_fate output_fate(const struct run_session *s)
{
	struct stat st;

	if (!s->out_known)
		return OUTPUT_AS_WRITTEN;
	/* written beside the output: the file -f was to replace was itself
	 * replaced meanwhile, and is not the one -f was given for */
	if (s->beside && prof_output__taken(s->beside))
		return OUTPUT_REPLACED;
	if (stat(run_session__file(s), &st) < 0)
		return errno == ENOENT ? OUTPUT_DELETED : OUTPUT_AS_WRITTEN;
	if (st.st_dev != s->out_dev || st.st_ino != s->out_ino)
		return OUTPUT_REPLACED;
	return st.st_size < s->out_bytes ? OUTPUT_TRUNCATED : OUTPUT_AS_WRITTEN;
}

/* The output's file was deleted or truncated while the program ran: the
 * writer's file is no longer one it can finish (SQLite refuses to write a
 * deleted file; a truncated one has lost pages). It held only the run's
 * metadata, so it is made anew under the same name. The old writer is
 * closed first: closing it removes the WAL by name, which must not be the
 * new file's. 0, or -1 (the old output stays, and the finish reports why
 * it fails). */
static int rewrite_output(struct run_session *s, enum output_fate fate)
{
	struct prof_error err;

	prof_writer__delete(s->w);
	s->w = NULL;
	if (prof_writer__create(run_session__file(s), PROF_WRITER_OVERWRITE, &s->w, &err) < 0 ||
	    (s->beside && prof_writer__set_name(s->w, s->output) < 0)) {
		s->msg->error("%s", s->w ? prof_writer__last_error(s->w)->msg : err.msg);
		return -1;
	}
	s->msg->warning("%s was %s while the program ran; the capture is written there anew",
			s->output, fate == OUTPUT_DELETED ? "deleted" : "truncated");
	write_live_meta(s);
	return 0;
}

/* The capture finished beside the output renamed over it. When another
 * file took the name in the moment since output_fate looked, the capture
 * goes to the run's folder as keep_in_run_folder would have put it (or,
 * on another file system, stays where it is), and outcome says where. */
static void put_beside_in_place(struct run_session *s, struct run_finish_outcome *outcome)
{
	const char *temp = prof_output__temp_path(s->beside);
	struct prof_error err;
	char kept[PATH_MAX];

	if (!outcome->kept[0] && prof_output__commit(s->beside, &err) < 0) {
		if (run__kept_path(s->dir, s->output, kept, sizeof kept) == 0 && rename(temp, kept) == 0)
			snprintf(outcome->kept, sizeof outcome->kept, "%s", kept);
		else
			snprintf(outcome->kept, sizeof outcome->kept, "%s", temp);
		if (err.code == PROF_E_EXISTS)
			snprintf(outcome->why, sizeof outcome->why,
				 "another file took the output's name (%s)", s->output);
		else
			snprintf(outcome->why, sizeof outcome->why, "%s", err.msg);
		/* kept where it is when it could not be moved */
		if (!strcmp(outcome->kept, temp)) {
			prof_output__leave(s->beside);
			s->beside = NULL;
			return;
		}
	}
	/* the capture is in place, or kept elsewhere: the file beside goes */
	prof_output__delete(s->beside);
	s->beside = NULL;
}

/* A capture that could not be finished: the unfinished output beside the
 * old file stays for `perfkit recover`, which finds it by the old name. */
static void leave_unfinished(struct run_session *s)
{
	prof_output__leave(s->beside);
	s->beside = NULL;
}

int run_session__finish(struct run_session *s)
{
	struct run_proc_files files;
	struct run_finish_outcome outcome, moved = { 0 };
	enum output_fate fate;
	char *gpu;
	int rc, scanned, deleted;

	/* the run's end, where recover finds it should the output's disk not
	 * take it; the reserve gives room for it on the run folder's */
	run__reserve_free(s->dir);
	run__end_write(s->dir, s->exit_status, s->end_ns - s->start_ns);
	if (!folder_exists(run_session__file(s))) {
		keep_in_run_folder(s, &moved, "the output's folder is gone");
	} else if ((fate = output_fate(s)) == OUTPUT_REPLACED) {
		/* another run took the name (-f): the capture does not take it back */
		keep_in_run_folder(s, &moved, "another file took the output's name");
	} else if (fate != OUTPUT_AS_WRITTEN && rewrite_output(s, fate) < 0) {
		s->msg->warning("the process files stay in %s", s->dir);
		leave_unfinished(s);
		return -1;
	}
	deleted = run__deleted_proc_files(s->dir);
	if (deleted)
		s->msg->warning("%d process file%s deleted from %s while the program ran: the "
				"capture lacks %s rows", deleted, deleted == 1 ? " was" : "s were",
				s->dir, deleted == 1 ? "its" : "their");
	scanned = run__proc_files(s->msg, s->dir, &files);
	if (scanned == 0 && files.n == 0 && !deleted) {
		/* Nothing initialised CUDA: still a valid capture of the run. */
		prof_writer__process(s->w, (uint32_t)s->pid, s->argv[0]);
		fputs("perfkit: note: ", stderr);
		prof_fputs_term(stderr, s->argv[0]);
		fputs(" made no CUDA calls; the capture holds no GPU activity\n", stderr);
	}
	gpu = run__first_gpu(&files);
	write_meta(s, gpu);
	free(gpu);
	rc = run__finish_capture(s->msg, s->w, &files, run__progress_line(), &outcome);
	s->w = NULL;
	s->merged = scanned < 0 || rc != 0 ? -1 : files.n;
	if (rc < 0) {
		/* nothing is removed: the files are all there is of the run */
		if (recoverable(run_session__file(s)))
			s->msg->warning("%s%sthe process files stay in %s: %s`perfkit recover %s` "
					"merges them", outcome.why, outcome.why[0] ? "; " : "", s->dir,
					outcome.out_of_room ? "when there is room, " : "", s->output);
		else
			s->msg->warning("%s%sthe process files stay in %s", outcome.why,
					outcome.why[0] ? "; " : "", s->dir);
		run__proc_files_free(&files);
		leave_unfinished(s);
		return -1;
	}
	if (!outcome.kept[0] && moved.kept[0]) {
		memcpy(outcome.kept, moved.kept, sizeof outcome.kept);
		memcpy(outcome.why, moved.why, sizeof outcome.why);
	}
	if (s->beside)
		put_beside_in_place(s, &outcome);
	if (outcome.kept[0]) {
		snprintf(s->out_path, sizeof s->out_path, "%s", outcome.kept);
		s->output = s->out_path;
	}
	s->ready_ns = realtime_ns();
	run__tell_outcome(s->msg, s->output, &files, &outcome);
	run__remove_merged(&files);
	run__proc_files_free(&files);
	if (access(s->dir, F_OK) != 0)
		s->dir[0] = '\0';
	run__metrics_import(s->msg, s->output, s->metrics_dir);
	return 0;
}

/* Past this many kernels and API calls together the end of a run names
 * the report instead of printing the overview (a tenth of a second or so
 * on a core below it). */
#define RUN_OVERVIEW_MAX_ROWS 250000

void run_session__report(const struct run_session *s)
{
	struct prof_store *store = NULL;
	struct rpt_sink *sink;
	struct prof_error err;
	int64_t dropped, kernels, calls;

	fprintf(stderr, "perfkit: capture written to ");
	prof_fputs_term(stderr, s->output);
	/* how long the capture took to be complete once the program had
	 * ended (the last rows merged, the indexes built) */
	if (s->ready_ns > s->end_ns && s->end_ns)
		fprintf(stderr, " (ready %.2f s after the program ended)",
			(double)(s->ready_ns - s->end_ns) / 1e9);
	fputc('\n', stderr);
	if (s->merged <= 0)
		return;
	if (prof_store__open(s->output, &store, &err) < 0) {
		s->msg->error("%s", err.msg);
		return;
	}
	kernels = prof_store__count(store, PROF_T_KERNEL);
	calls = prof_store__count(store, PROF_T_RUNTIME) + prof_store__count(store, PROF_T_DRIVER);
	if (kernels + calls > RUN_OVERVIEW_MAX_ROWS) {
		/* Its medians sort every row: seconds for a million launches,
		 * which the user would wait for at the end of every run. */
		fprintf(stderr, "perfkit: %lld kernels and %lld API calls: `perfkit report ",
			(long long)kernels, (long long)calls);
		prof_fputs_term(stderr, s->output);
		fputs("` gives the overview\n", stderr);
	} else {
		sink = rpt_sink__new(RPT_FORMAT_TEXT, stderr);
		if (sink && summary__overview(store, sink, &err) < 0)
			s->msg->error("%s", err.msg);
		rpt_sink__delete(sink);
	}
	dropped = prof_store__counter(store, "dropped_records");
	if (dropped)
		s->msg->warning("CUPTI dropped %lld records: the capture is incomplete",
				(long long)dropped);
	prof_store__close(store);
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
