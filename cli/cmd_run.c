/* cmd_run.c - `perfkit run`: run a program with the collector injected and
 * fold what every one of its processes recorded into one capture.
 *
 * The program runs as a child with CUDA_INJECTION64_PATH (and
 * NVTX_INJECTION64_PATH) pointing at libperfkit-inject.so; each process that
 * initialises CUDA writes its own proc-<pid>.sqlite into a private folder
 * (processes cannot share one SQLite writer), and when the program ends those
 * files are merged into the output, which only then gets its run metadata,
 * indexes and views. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../collectors/trace_opts.h"
#include "capture_tables.h"
#include "cli.h"
#include "prof/escape.h"
#include "prof/store.h"
#include "run_collector.h"
#include "sinks.h"
#include "summary.h"
#include "table.h"

#define FLUSH_MS_DEFAULT 500
#define FLUSH_MS_MAX 600000

static const char *const run_usage[] = {
	"perfkit run [<options>] [--] PROGRAM [ARGS...]",
	NULL,
};

static volatile sig_atomic_t child_pid;

/* Signals someone sent to perfkit go on to the program. Those the terminal
 * sent (Ctrl-C) already reached it: the program shares our process group. */
static void forward_signal(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	if (child_pid > 0 && info->si_code <= 0)
		kill((pid_t)child_pid, sig);
}

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

/* The injection library: next to the binary (a carried or relocated build),
 * in the build tree, or installed. */
/* buf = dir/name when it fits and the file exists. */
static int found_at(char *buf, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(buf, cap, "%s%s%s", dir, name ? "/" : "", name ? name : "");

	return n > 0 && (size_t)n < cap && exists(buf);
}

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

/* What a shell would do with the program name: 0 found, else the shell's
 * exit status (127 not found, 126 not executable) after its message. */
static int resolve_program(const char *name, char *buf, size_t cap)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(buf, cap, "%s", name);
		if (!exists(buf)) {
			cli_error("%s: No such file or directory", name);
			return 127;
		}
		if (access(buf, X_OK) != 0) {
			cli_error("%s: Permission denied", name);
			return 126;
		}
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*name) {
		size_t len = strcspn(path, ":");
		struct stat st;

		snprintf(buf, cap, "%.*s%s%s", (int)len, len ? path : ".", "/", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		if (!path[len])
			break;
		path += len + 1;
	}
	cli_error("%s: command not found", name);
	return 127;
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
	if (setenv("CUDA_INJECTION64_PATH", collector, 1) < 0 ||
	    setenv("PERFKIT_OUTPUT_DIR", dir, 1) < 0 || setenv("PERFKIT_FLUSH_MS", num, 1) < 0 ||
	    setenv("PERFKIT_TRACE", trace_list ? trace_list : "", 1) < 0)
		return -1;
	/* NVTX loads the collector too, which starts CUPTI before the first
	 * range even when NVTX is used before CUDA, and hands over to CUPTI. */
	if (trace & TRACE_NVTX)
		return setenv("NVTX_INJECTION64_PATH", collector, 1);
	return unsetenv("NVTX_INJECTION64_PATH");
}

static int run_child(const char *program, char **argv, pid_t *pid_out, int *status_out)
{
	struct sigaction sa, old_int, old_term;
	int status = 0;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execv(program, argv);
		fprintf(stderr, "perfkit: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	*pid_out = pid;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	*status_out = status;
	return 0;
}

/* ---- the capture ------------------------------------------------------- */

static int is_proc_file(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return strncmp(d->d_name, "proc-", 5) == 0 && len > 12 &&
	       strcmp(d->d_name + len - 7, ".sqlite") == 0;
}

/* The first GPU a process recorded, for the run's metadata. */
static char *first_gpu_name(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err;
	char *name = NULL;

	if (prof_store__open(path, &s, &err) < 0)
		return NULL;
	if (prof_store__has_table(s, "TARGET_INFO_GPU") &&
	    prof_cursor__open(s, "SELECT name FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", &c, &err) == 0 &&
	    prof_cursor__next(c, &err) == 1 && !prof_cursor__is_null(c, 0))
		name = strdup(prof_cursor__text(c, 0));
	prof_cursor__close(c);
	prof_store__close(s);
	return name;
}

static void remove_dir(const char *dir)
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

/* Merge every process's file; returns how many there were, or < 0. */
static int merge_processes(struct prof_writer *w, const char *dir, char **gpu)
{
	struct dirent **files = NULL;
	int n = scandir(dir, &files, is_proc_file, alphasort), rc = 0;

	if (n < 0) {
		cli_error("cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct prof_error err;

		if (snprintf(path, sizeof(path), "%s/%s", dir, files[i]->d_name) >= (int)sizeof(path)) {
			free(files[i]);
			continue;
		}
		if (!*gpu)
			*gpu = first_gpu_name(path);
		if (prof_writer__merge(w, path, &err) < 0) {
			cli_error("%s", err.msg);
			rc = -1;
		}
		free(files[i]);
	}
	free(files);
	return rc < 0 ? rc : n;
}

static void write_meta(struct prof_writer *w, char **argv, int64_t start_ns, int64_t end_ns,
		       int exit_status, const char *gpu, const char *trace_list)
{
	char host[256] = "", num[32], *cmd;
	size_t len = 1;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	cmd = calloc(1, len);
	for (int i = 0; cmd && argv[i]; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	prof_writer__meta(w, "command", cmd ? cmd : argv[0]);
	free(cmd);
	gethostname(host, sizeof(host) - 1);
	prof_writer__meta(w, "host", host);
	if (gpu)
		prof_writer__meta(w, "gpu", gpu);
	snprintf(num, sizeof(num), "%lld", (long long)start_ns);
	prof_writer__meta(w, "start_ns", num);
	snprintf(num, sizeof(num), "%lld", (long long)(end_ns - start_ns));
	prof_writer__meta(w, "duration_ns", num);
	snprintf(num, sizeof(num), "%d", exit_status);
	prof_writer__meta(w, "exit_status", num);
	prof_writer__meta(w, "perfkit_version", PERFKIT_VERSION);
	prof_writer__meta(w, "trace", trace_list && *trace_list ? trace_list : "cuda,nvtx,memory,api");
}

static void print_summary(const char *path)
{
	struct prof_store *s = NULL;
	struct rpt_sink *sink;
	struct prof_error err;
	int64_t dropped;

	if (prof_store__open(path, &s, &err) < 0) {
		cli_error("%s", err.msg);
		return;
	}
	sink = rpt_sink__new(RPT_FORMAT_TEXT, stderr);
	if (sink && summary__overview(s, sink, &err) < 0)
		cli_error("%s", err.msg);
	rpt_sink__delete(sink);
	dropped = prof_store__counter(s, "dropped_records");
	if (dropped)
		cli_warning("CUPTI dropped %lld records: the capture is incomplete", (long long)dropped);
	prof_store__close(s);
}

/* ---- hardware metrics and peaks (report/capture_tables.h) ----------------- */

/* --metrics: the collector writes one metrics file per process into a folder
 * of its own, imported into the capture once it is finished. */
static int metrics_env(const char *metrics, int64_t sample, char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	char num[32];

	if (!metrics) {
		unsetenv("PERFKIT_METRICS");
		return 0;
	}
	snprintf(dir, cap, "%s/perfkit-metrics-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return -1;
	}
	snprintf(num, sizeof(num), "%lld", (long long)sample);
	if (setenv("PERFKIT_METRICS", metrics, 1) < 0 || setenv("PERFKIT_METRICS_DIR", dir, 1) < 0 ||
	    setenv("PERFKIT_METRICS_SAMPLE", num, 1) < 0)
		return -1;
	return 0;
}

/* Metrics rows, and this GPU's cached `perfkit peaks`, into the capture. */
static void metrics_import(const char *output, char *dir)
{
	struct prof_error err;
	int rows;

	if (dir[0]) {
		rows = ctab__import_metrics_dir(output, dir, &err);
		if (rows < 0)
			cli_warning("hardware metrics not stored: %s", err.msg);
		else
			fprintf(stderr, "perfkit: %d kernel launches with hardware metrics\n", rows);
		remove_dir(dir);
		dir[0] = '\0';
	}
	if (ctab__store_cached_peaks(output, &err) < 0)
		cli_warning("cached peaks not stored: %s", err.msg);
}

/* ---- the command ----------------------------------------------------------- */

int cmd_run(int argc, char **argv)
{
	const char *output = NULL, *trace_list = NULL, *metrics = NULL;
	int64_t metrics_sample = 1;
	char metrics_dir[PATH_MAX] = "";
	bool force = false;
	int64_t flush_ms = FLUSH_MS_DEFAULT;
	const struct cli_option opts[] = {
		CLI_STRING('o', "output", &output, "FILE",
			   "capture file (default perfkit-PROGRAM-N.sqlite here)"),
		CLI_FLAG('f', "force", &force, "overwrite FILE if it exists"),
		CLI_STRING(0, "trace", &trace_list, "LIST",
			   "what to record: cuda,nvtx,memory,api (default all)"),
		CLI_INT(0, "flush-interval", &flush_ms, "MS",
			"commit recorded data at least this often (default 500)"),
		CLI_STRING(0, "metrics", &metrics, "roofline",
			   "hardware metrics per kernel launch (kernel replay: kernels serialised, slower)"),
		CLI_INT(0, "metrics-sample", &metrics_sample, "N",
			"with --metrics, profile every Nth launch of each kernel (default 1)"),
		CLI_END(),
	};
	char collector[PATH_MAX], program[PATH_MAX], out_path[PATH_MAX], dir[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	struct prof_writer *w = NULL;
	struct prof_error err;
	int n, trace, status = 0, exit_status, merged, rc;
	int64_t start_ns, end_ns;
	pid_t pid = 0;
	char *gpu = NULL;
	size_t bad_at = 0;

	n = cli_parse(argc, argv, opts, run_usage, CLI_STOP_AT_NON_OPTION);
	if (n < 0)
		return cli_parse_status(n);
	if (n == 0) {
		cli_error("run needs a program: perfkit run [<options>] -- PROGRAM [ARGS...]");
		return CLI_EXIT_USAGE;
	}
	trace = trace_opts__parse(trace_list, &bad_at);
	if (trace < 0) {
		cli_error("--trace: unknown item '%s' (choose from cuda, nvtx, memory, api)",
			  trace_list + bad_at);
		return CLI_EXIT_USAGE;
	}
	if (metrics && strcmp(metrics, "roofline")) {
		cli_error("--metrics: unknown set '%s' (choose roofline)", metrics);
		return CLI_EXIT_USAGE;
	}
	if (metrics_sample < 1 || metrics_sample > 1000000) {
		cli_error("--metrics-sample must be between 1 and 1000000");
		return CLI_EXIT_USAGE;
	}
	if (flush_ms < 1 || flush_ms > FLUSH_MS_MAX) {
		cli_error("--flush-interval must be between 1 and %d ms", FLUSH_MS_MAX);
		return CLI_EXIT_USAGE;
	}
	rc = locate_collector(collector, sizeof(collector));
	if (rc == -1) {
		cli_error("this perfkit was built without CUPTI; run cannot capture");
		return CLI_EXIT_USAGE;
	}
	if (rc < 0) {
		cli_error("cannot find %s next to perfkit or in %s", RUN_COLLECTOR_LIB,
			  PERFKIT_INSTALL_LIBDIR);
		return CLI_EXIT_USAGE;
	}
	rc = resolve_program(argv[0], program, sizeof(program));
	if (rc)
		return rc;
	if (!output) {
		if (default_output(argv[0], out_path, sizeof(out_path)) < 0) {
			cli_error("no free perfkit-*.sqlite name here; use -o FILE");
			return CLI_EXIT_USAGE;
		}
		output = out_path;
	}
	/* Created now, so a refused -o costs nothing and the name is ours. */
	if (prof_writer__create(output, force ? PROF_WRITER_OVERWRITE : 0, &w, &err) < 0) {
		if (err.code == PROF_E_EXISTS)
			cli_error("%s exists; use -f to overwrite it", output);
		else
			cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s/perfkit-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		cli_error("cannot make a folder for the process files: %s", strerror(errno));
		prof_writer__delete(w);
		unlink(output);
		return CLI_EXIT_USAGE;
	}
	if (set_env(collector, dir, trace, trace_list, flush_ms) < 0) {
		cli_error("cannot set the environment: %s", strerror(errno));
		goto fail;
	}
	if (metrics_env(metrics, metrics_sample, metrics_dir, sizeof(metrics_dir)) < 0) {
		cli_error("cannot prepare hardware metrics: %s", strerror(errno));
		goto fail;
	}
	start_ns = realtime_ns();
	if (run_child(program, argv, &pid, &status) < 0)
		goto fail;
	end_ns = realtime_ns();
	exit_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);

	merged = merge_processes(w, dir, &gpu);
	if (merged == 0) {
		/* Nothing initialised CUDA: still a valid capture of the run. */
		prof_writer__process(w, (uint32_t)pid, argv[0]);
		fputs("perfkit: note: ", stderr);
		prof_fputs_term(stderr, argv[0]);
		fputs(" made no CUDA calls; the capture holds no GPU activity\n", stderr);
	}
	write_meta(w, argv, start_ns, end_ns, exit_status, gpu, trace_list);
	free(gpu);
	remove_dir(dir);
	rc = prof_writer__finish(w, &err);
	if (rc < 0) {
		cli_error("%s", err.msg);
		return exit_status ? exit_status : CLI_EXIT_USAGE;
	}
	metrics_import(output, metrics_dir);
	fprintf(stderr, "perfkit: capture written to ");
	prof_fputs_term(stderr, output);
	fputc('\n', stderr);
	if (merged > 0)
		print_summary(output);
	return exit_status;
fail:
	remove_dir(dir);
	if (metrics_dir[0])
		remove_dir(metrics_dir);
	prof_writer__delete(w);
	unlink(output);
	return CLI_EXIT_USAGE;
}
