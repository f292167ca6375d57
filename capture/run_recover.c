/* run_recover.c - `perfkit recover`: finishing the output of a `perfkit run`
 * that was killed (SIGKILL, the machine's OOM killer, a lost session) before
 * it merged what the program's processes recorded.
 *
 * Those processes outlive the launcher and keep committing their
 * proc-<pid>.sqlite files into the folder the output names (live_dir), so
 * the data is there; only the merge is missing. Recovery does the merge the
 * run would have done, into a new file renamed over the old one, and marks
 * the capture "recovered". A run killed before its program ended leaves no
 * exit status or end; one whose finish failed (no room for the output) does,
 * in the output's metadata or, when the output would not take them, in its
 * run folder (run_end.c), and the recovered capture keeps them.
 *
 * A run given -f onto an existing file leaves its unfinished output beside
 * that file (.NAME.perfkit-XXXXXX, see run_session.h), and NAME untouched:
 * `perfkit recover NAME` finds it there, and so does recovering that file
 * by its own name; either way the recovered capture replaces NAME, as the
 * run would have. */
#include "run_recover.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/escape.h"
#include "prof/output.h"
#include "prof/protocol.h"
#include "run_session_impl.h"

/* The metadata the recovered capture keeps: the live metadata, and the
 * run's end when its finish got as far as writing it. */
static const char *const kept_meta[] = { "command", "start_ns", PROF_META_PID, PROF_META_HOST,
					 "trace", "duration_ns", "exit_status" };
enum { KEPT_META = sizeof(kept_meta) / sizeof(kept_meta[0]), EXIT_STATUS = KEPT_META - 1 };

struct unfinished {
	char *meta[KEPT_META];
	char *dir, *metrics_dir;
	char *output; /* PROF_META_OUTPUT: the name it replaces; NULL: its own */
};

static void unfinished__free(struct unfinished *u)
{
	for (int i = 0; i < KEPT_META; i++)
		free(u->meta[i]);
	free(u->dir);
	free(u->metrics_dir);
	free(u->output);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The run's end from its folder, when the output would not take it. */
static void run_end_from_folder(struct unfinished *u)
{
	char num[32];
	int64_t duration_ns;
	int status;

	if (run__end_read(u->dir, &status, &duration_ns) < 0)
		return;
	snprintf(num, sizeof num, "%d", status);
	u->meta[EXIT_STATUS] = strdup(num);
	free(u->meta[EXIT_STATUS - 1]);
	snprintf(num, sizeof num, "%lld", (long long)duration_ns);
	u->meta[EXIT_STATUS - 1] = strdup(num);
}

/* Read what the killed run left in the output; 0, or the message printed. */
static int read_unfinished(const struct run_messages *msg, const char *path,
			   struct unfinished *u)
{
	struct prof_store *s = NULL;
	struct prof_error err;
	char *pid, *host;
	bool running;
	int rc = -1;

	if (prof_store__open(path, &s, &err) < 0) {
		msg->error("%s", err.msg);
		return -1;
	}
	u->dir = prof_store__meta(s, PROF_META_LIVE_DIR);
	if (prof_store__is_finished(s) || !u->dir || !*u->dir) {
		msg->error("%s is not the output of an unfinished perfkit run: nothing to recover",
			   path);
		goto out;
	}
	if (prof_store__run_alive(s)) {
		msg->error("%s: perfkit run is still writing it; recover only a run that was killed",
			   path);
		goto out;
	}
	pid = prof_store__meta(s, PROF_META_PID);
	host = prof_store__meta(s, PROF_META_HOST);
	running = pid && prof_run__alive(strtoll(pid, NULL, 10), host);
	if (running)
		msg->error("%s: the program (pid %s) is still running and writing to %s; "
			   "recover when it has ended",
			   path, pid, u->dir);
	free(pid);
	free(host);
	if (running)
		goto out;
	if (!is_dir(u->dir)) {
		msg->error("%s: the folder of its process files, %s, is gone: nothing to recover",
			   path, u->dir);
		goto out;
	}
	for (int i = 0; i < KEPT_META; i++)
		u->meta[i] = prof_store__meta(s, kept_meta[i]);
	if (!u->meta[EXIT_STATUS])
		run_end_from_folder(u);
	u->metrics_dir = prof_store__meta(s, PROF_META_LIVE_METRICS_DIR);
	u->output = prof_store__meta(s, PROF_META_OUTPUT);
	rc = 0;
out:
	prof_store__close(s);
	return rc;
}

/* SQLite's side files of the killed writer: stale next to a new file. */
static void remove_side_files(const char *path)
{
	char side[PATH_MAX];

	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

/* Whether path is the unfinished output of a perfkit run; *output (when
 * not NULL) gets its PROF_META_OUTPUT. Quiet: the caller words refusals. */
static bool unfinished_output(const char *path, char **output)
{
	struct prof_store *s;
	struct prof_error err;
	char *dir;
	bool yes;

	if (prof_store__open(path, &s, &err) < 0)
		return false;
	dir = prof_store__meta(s, PROF_META_LIVE_DIR);
	yes = !prof_store__is_finished(s) && dir && *dir;
	if (yes && output)
		*output = prof_store__meta(s, PROF_META_OUTPUT);
	free(dir);
	prof_store__close(s);
	return yes;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The unfinished outputs of `perfkit run -f` onto path: hidden files beside
 * it (.NAME.perfkit-XXXXXX) naming it as their output. The first found
 * (malloc'd; NULL: none), and how many there are. */
static char *written_beside(const char *path, int *count)
{
	const char *base = base_name(path);
	char dir[PATH_MAX], candidate[PATH_MAX], *found = NULL;
	struct dirent *e;
	DIR *d;

	*count = 0;
	snprintf(dir, sizeof dir, "%.*s", (int)(base - path), path);
	d = opendir(dir[0] ? dir : ".");
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char *output = NULL;

		if (e->d_name[0] != '.' || !strstr(e->d_name, ".perfkit-") ||
		    snprintf(candidate, sizeof candidate, "%s%s", dir, e->d_name) >= (int)sizeof candidate)
			continue;
		if (unfinished_output(candidate, &output) && output && !strcmp(output, base) &&
		    !(*count)++)
			found = strdup(candidate);
		free(output);
	}
	closedir(d);
	return found;
}

/* Where the recovered capture of src goes: the file it was to replace
 * (beside it, by the name it recorded), else src itself. */
static char *destination(const char *src, const char *output)
{
	const char *base = base_name(src);
	char *dst;

	if (!output || !*output || strchr(output, '/') || !strcmp(output, ".") ||
	    !strcmp(output, ".."))
		return strdup(src);
	dst = malloc((size_t)(base - src) + strlen(output) + 1);
	if (dst)
		sprintf(dst, "%.*s%s", (int)(base - src), src, output);
	return dst;
}

int run_recover(const struct run_messages *msg, const char *path)
{
	struct unfinished u = { 0 };
	struct run_proc_files files = { 0 };
	struct run_finish_outcome outcome;
	struct prof_output *out = NULL;
	struct prof_writer *w = NULL;
	struct prof_error err;
	char *beside = NULL, *dst = NULL, *gpu = NULL;
	const char *src = path, *placed;
	int rc = -1, n;

	/* a finished NAME: the run given -f onto it left its output beside it */
	if (!unfinished_output(path, NULL)) {
		beside = written_beside(path, &n);
		if (n > 1) {
			msg->error("%s: %d unfinished perfkit runs were to replace it; recover one by "
				   "the name of its file (%s is one)", path, n, beside);
			goto out;
		}
		if (beside)
			src = beside;
	}
	if (read_unfinished(msg, src, &u) < 0)
		goto out;
	dst = beside ? strdup(path) : destination(src, u.output);
	if (!dst) {
		msg->error("out of memory");
		goto out;
	}
	/* the recovered capture replaces dst once it is complete */
	if (prof_output__open(dst, PROF_OUTPUT_REPLACE | PROF_OUTPUT_BY_NAME, NULL, &out, &err) < 0 ||
	    prof_writer__create(prof_output__temp_path(out), PROF_WRITER_CLAIMED, &w, &err) < 0) {
		msg->error("%s", err.msg);
		goto out;
	}
	prof_writer__set_name(w, dst);
	if (run__proc_files(msg, u.dir, &files) < 0)
		goto out;
	gpu = run__first_gpu(&files);
	for (int i = 0; i < KEPT_META; i++)
		if (u.meta[i])
			prof_writer__meta(w, kept_meta[i], u.meta[i]);
	prof_writer__meta(w, "recovered", "1");
	run__meta_merged(w, gpu);
	rc = run__finish_capture(msg, w, &files, run__progress_line(), &outcome);
	w = NULL;
	if (rc < 0) {
		if (outcome.out_of_room)
			msg->error("%s; the process files stay in %s", outcome.why, u.dir);
		goto out;
	}
	if (outcome.kept[0]) {
		/* the recovered file could not be put beside the output: it is
		 * where outcome says, and the output stays as it was */
		placed = outcome.kept;
	} else {
		remove_side_files(src);
		if (prof_output__commit(out, &err) < 0) {
			msg->error("%s (the recovered capture is %s)", err.msg,
				   prof_output__temp_path(out));
			prof_output__leave(out);
			out = NULL;
			rc = -1;
			goto out;
		}
		if (strcmp(src, dst) != 0)
			unlink(src);
		placed = dst;
	}
	rc = 0;
	if (is_dir(u.metrics_dir))
		run__metrics_import(msg, placed, u.metrics_dir);
	run__tell_outcome(msg, placed, &files, &outcome);
	run__remove_merged(&files);
	fprintf(stderr, "perfkit: recovered %d process file%s into ", outcome.in_capture,
		outcome.in_capture == 1 ? "" : "s");
	prof_fputs_term(stderr, placed);
	if (u.meta[EXIT_STATUS]) {
		fputs(" (the program's exit status was ", stderr);
		prof_fputs_term(stderr, u.meta[EXIT_STATUS]);
		fputs(")\n", stderr);
	} else {
		fputs(" (the program's exit status and end are not known)\n", stderr);
	}
out:
	run__proc_files_free(&files);
	if (w)
		prof_writer__delete(w);
	prof_output__delete(out);
	free(gpu);
	free(dst);
	free(beside);
	unfinished__free(&u);
	return rc;
}
