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
 * run folder (run_end.c), and the recovered capture keeps them. */
#include "run_recover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/escape.h"
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
};

static void unfinished__free(struct unfinished *u)
{
	for (int i = 0; i < KEPT_META; i++)
		free(u->meta[i]);
	free(u->dir);
	free(u->metrics_dir);
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

int run_recover(const struct run_messages *msg, const char *path)
{
	struct unfinished u = { 0 };
	struct run_proc_files files = { 0 };
	struct run_finish_outcome outcome;
	struct prof_writer *w = NULL;
	struct prof_error err;
	char tmp[PATH_MAX] = "", *gpu = NULL;
	int rc = -1;

	if (read_unfinished(msg, path, &u) < 0)
		goto out;
	if (snprintf(tmp, sizeof tmp, "%s.recovering", path) >= (int)sizeof tmp) {
		msg->error("%s: name too long", path);
		goto out;
	}
	if (prof_writer__create(tmp, PROF_WRITER_OVERWRITE, &w, &err) < 0) {
		msg->error("%s", err.msg);
		goto out;
	}
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
		tmp[0] = '\0';
		path = outcome.kept;
	} else {
		remove_side_files(path);
		if (rename(tmp, path) < 0) {
			msg->error("cannot replace %s: %s (the recovered capture is %s)", path,
				   strerror(errno), tmp);
			rc = -1;
			goto out;
		}
		tmp[0] = '\0';
	}
	rc = 0;
	if (is_dir(u.metrics_dir))
		run__metrics_import(msg, path, u.metrics_dir);
	run__tell_outcome(msg, path, &files, &outcome);
	run__remove_merged(&files);
	fprintf(stderr, "perfkit: recovered %d process file%s into ", outcome.in_capture,
		outcome.in_capture == 1 ? "" : "s");
	prof_fputs_term(stderr, path);
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
	if (rc < 0 && tmp[0] && access(tmp, F_OK) == 0)
		unlink(tmp);
	free(gpu);
	unfinished__free(&u);
	return rc;
}
