/* run_finish.c - the end of a run: what the program's processes recorded in
 * their proc-<pid>.sqlite files becomes the capture. Shared by a session's
 * end (run_session.c) and `perfkit recover` (run_recover.c), and timed by
 * bench/finish_bench.sh. */
#include "run_session_impl.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/protocol.h"
#include "prof/tables.h"

static int is_proc_file(const struct dirent *d)
{
	return prof_proc_file__match(d->d_name);
}

int run__proc_files(const struct run_messages *msg, const char *dir, struct run_proc_files *files)
{
	struct dirent **found = NULL;
	int n = scandir(dir, &found, is_proc_file, alphasort), rc = 0;

	memset(files, 0, sizeof *files);
	if (n < 0) {
		msg->error("cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	files->dir = strdup(dir);
	files->paths = calloc((size_t)n + 1, sizeof *files->paths);
	files->in_capture = calloc((size_t)n + 1, sizeof *files->in_capture);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (files->paths && snprintf(path, sizeof path, "%s/%s", dir, found[i]->d_name) <
					    (int)sizeof path) {
			files->paths[files->n] = strdup(path);
			if (files->paths[files->n])
				files->n++;
			else
				rc = -1;
		}
		free(found[i]);
	}
	free(found);
	if (!files->dir || !files->paths || !files->in_capture || rc < 0) {
		msg->error("out of memory reading %s", dir);
		run__proc_files_free(files);
		return -1;
	}
	return 0;
}

void run__proc_files_free(struct run_proc_files *files)
{
	for (int i = 0; i < files->n; i++)
		free(files->paths[i]);
	free(files->paths);
	free(files->in_capture);
	free(files->dir);
	memset(files, 0, sizeof *files);
}

/* "proc-<pid>.sqlite-wal" or "-shm" whose proc-<pid>.sqlite is gone. */
static bool orphan_side_file(const char *dir, const char *name, bool *is_wal)
{
	char main[NAME_MAX + 1], path[PATH_MAX];
	size_t len = strlen(name);

	if (len <= 4 || len > NAME_MAX || (strcmp(name + len - 4, "-wal") && strcmp(name + len - 4, "-shm")))
		return false;
	*is_wal = !strcmp(name + len - 4, "-wal");
	snprintf(main, sizeof main, "%.*s", (int)(len - 4), name);
	return prof_proc_file__match(main) &&
	       snprintf(path, sizeof path, "%s/%s", dir, main) < (int)sizeof path &&
	       access(path, F_OK) != 0 && errno == ENOENT;
}

int run__deleted_proc_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];
	int n = 0;
	bool is_wal;

	if (!d)
		return 0;
	/* a file is counted by its -shm, or by its -wal when it has no -shm */
	while ((e = readdir(d))) {
		if (!orphan_side_file(dir, e->d_name, &is_wal))
			continue;
		if (!is_wal)
			n++;
		else if (snprintf(path, sizeof path, "%s/%.*s-shm", dir,
				  (int)strlen(e->d_name) - 4, e->d_name) < (int)sizeof path &&
			 access(path, F_OK) != 0)
			n++;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (orphan_side_file(dir, e->d_name, &is_wal) &&
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
			unlink(path);
	closedir(d);
	return n;
}

/* The first GPU a process recorded. */
static char *gpu_name(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err;
	char *name = NULL;

	if (prof_store__open(path, &s, &err) < 0)
		return NULL;
	if (prof_cursor__open(s, "SELECT name FROM " PROF_T_GPU " ORDER BY id LIMIT 1", &c, &err) == 0 &&
	    prof_cursor__next(c, &err) == 1 && !prof_cursor__is_null(c, 0))
		name = strdup(prof_cursor__text(c, 0));
	prof_cursor__close(c);
	prof_store__close(s);
	return name;
}

char *run__first_gpu(const struct run_proc_files *files)
{
	char *name = NULL;

	for (int i = 0; i < files->n && !name; i++)
		name = gpu_name(files->paths[i]);
	return name;
}

/* The largest file: taken over, it is the one whose rows need no copy. */
static int largest(const struct run_proc_files *files)
{
	off_t most = -1;
	int at = 0;

	for (int i = 0; i < files->n; i++) {
		struct stat st;

		if (stat(files->paths[i], &st) == 0 && st.st_size > most) {
			most = st.st_size;
			at = i;
		}
	}
	return at;
}

/* A failure of the finish: want of room is kept for the outcome's line,
 * anything else told at once. */
static void note_failure(const struct run_messages *msg, const struct prof_error *err,
			 struct run_finish_outcome *outcome)
{
	if (err->code == PROF_E_FULL) {
		outcome->out_of_room = true;
		snprintf(outcome->why, sizeof outcome->why, "%s", err->msg);
	} else {
		msg->error("%s", err->msg);
	}
}

/* The name the capture keeps in the run's folder: the output's own, unless
 * that would pass for a process file there. */
int run__kept_path(const char *dir, const char *output, char *buf, size_t cap)
{
	const char *base = strrchr(output, '/');

	base = base ? base + 1 : output;
	return snprintf(buf, cap, "%s/%s%s", dir, prof_proc_file__match(base) ? "capture-" : "",
			base) < (int)cap ? 0 : -1;
}

/* The taken-over file was finished but its place would not take it (the
 * output's folder removed, no room on the output's file system): it stays
 * in the run's folder, under the output's name. Whether it did. */
static bool keep_finished(const char *taken, const char *output, const char *dir,
			  const struct prof_error *why, struct run_finish_outcome *outcome)
{
	if (why->code != PROF_E_NOT_PLACED)
		return false;
	if (run__kept_path(dir, output, outcome->kept, sizeof outcome->kept) < 0 ||
	    rename(taken, outcome->kept) < 0)
		snprintf(outcome->kept, sizeof outcome->kept, "%s", taken);
	snprintf(outcome->why, sizeof outcome->why, "%s", why->msg);
	return true;
}

int run__finish_capture(const struct run_messages *msg, struct prof_writer *w,
			struct run_proc_files *files, const struct prof_progress *progress,
			struct run_finish_outcome *outcome)
{
	struct prof_error err;
	int taken = -1, failed = 0, rc;
	char *output = strdup(prof_writer__path(w));

	memset(outcome, 0, sizeof *outcome);
	run__reserve_free(files->dir);
	if (!output) {
		msg->error("out of memory finishing %s", prof_writer__path(w));
		prof_writer__delete(w);
		return -1;
	}
	prof_writer__set_progress(w, progress);
	if (files->n > 0) {
		prof_progress__report(progress, PROF_FINISH_MERGE, 0, files->n);
		taken = largest(files);
		rc = prof_writer__take_over(&w, files->paths[taken], &err);
		if (rc < 0) {
			note_failure(msg, &err, outcome);
			prof_writer__delete(w);
			free(output);
			return -1;
		}
		if (rc > 0)
			taken = -1;
		else
			files->in_capture[taken] = true;
	}
	for (int i = 0, done = taken >= 0; i < files->n; i++) {
		if (i == taken)
			continue;
		prof_progress__report(progress, PROF_FINISH_MERGE, done++, files->n);
		if (prof_writer__merge(w, files->paths[i], &err) < 0) {
			note_failure(msg, &err, outcome);
			failed = 1;
		} else {
			files->in_capture[i] = true;
		}
	}
	for (int i = 0; i < files->n; i++)
		outcome->in_capture += files->in_capture[i];
	if (files->n > 0 && !outcome->in_capture && outcome->out_of_room) {
		/* No room for any of the program's files: a capture without them
		 * would only hide them. The output stays the unfinished one. */
		prof_writer__delete(w);
		free(output);
		return -1;
	}
	rc = prof_writer__finish(w, &err);
	if (rc < 0 && !(taken >= 0 && keep_finished(files->paths[taken], output, files->dir, &err,
						     outcome))) {
		note_failure(msg, &err, outcome);
		failed = -1;
	}
	free(output);
	return failed;
}

/* When the last row the capture holds began, in seconds from start_ns;
 * -1 when it holds none. */
static double last_row_s(struct prof_store *s, int64_t start_ns)
{
	static const char *const tables[] = {
		PROF_T_KERNEL, PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_MEMCPY, PROF_T_MEMSET,
	};
	struct prof_cursor *c;
	struct prof_error err;
	char sql[160];
	int64_t last = -1;

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT max(start) FROM %s", tables[i]);
		if (prof_cursor__open(s, sql, &c, &err) == 0) {
			if (prof_cursor__next(c, &err) == 1 && !prof_cursor__is_null(c, 0) &&
			    prof_cursor__int64(c, 0) > last)
				last = prof_cursor__int64(c, 0);
			prof_cursor__close(c);
		}
	}
	return last < start_ns ? -1 : (double)(last - start_ns) / 1e9;
}

/* Appends one "; "-separated part to line. */
static void add_part(char *line, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_part(char *line, size_t cap, const char *fmt, ...)
{
	size_t used = strlen(line);
	va_list ap;

	if (used && used + 2 < cap) {
		strcpy(line + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(line + used, cap - used, fmt, ap);
	va_end(ap);
}

void run__tell_outcome(const struct run_messages *msg, const char *path,
		       const struct run_proc_files *files, const struct run_finish_outcome *outcome)
{
	struct prof_store *s;
	struct prof_error err;
	char line[1024] = "", *start, *indexes = NULL;
	int64_t lost = 0;
	int left = files->n - outcome->in_capture;
	double last = -1;

	if (outcome->kept[0])
		msg->warning("%s: the capture is kept as %s", outcome->why, outcome->kept);
	if (prof_store__open(path, &s, &err) == 0) {
		lost = prof_store__counter(s, PROF_COUNTER_ROWS_NOT_WRITTEN);
		indexes = prof_store__meta(s, PROF_META_INDEXES_LEFT_OUT);
		start = prof_store__meta(s, "start_ns");
		if (lost && start)
			last = last_row_s(s, strtoll(start, NULL, 10));
		free(start);
		prof_store__close(s);
	}
	if (left > 0)
		add_part(line, sizeof line, "the capture holds %d of %d process files; the %s in %s",
			 outcome->in_capture, files->n, left == 1 ? "other is" : "others are", files->dir);
	if (lost && last >= 0)
		add_part(line, sizeof line, "%lld rows recorded after %.1f s of the run were not written",
			 (long long)lost, last);
	else if (lost)
		add_part(line, sizeof line, "%lld rows were not written", (long long)lost);
	if (indexes)
		add_part(line, sizeof line, "%s indexes left out (reports are slower)", indexes);
	if (line[0])
		msg->warning("%s%s", outcome->out_of_room || lost || indexes ? "the disk filled: " : "",
			     line);
	free(indexes);
}

void run__remove_merged(const struct run_proc_files *files)
{
	for (int i = 0; i < files->n; i++) {
		char side[PATH_MAX];

		if (!files->in_capture[i])
			continue;
		unlink(files->paths[i]);
		snprintf(side, sizeof side, "%s-wal", files->paths[i]);
		unlink(side);
		snprintf(side, sizeof side, "%s-shm", files->paths[i]);
		unlink(side);
	}
	run__reserve_free(files->dir);
	run__end_remove(files->dir);
	if (files->dir)
		rmdir(files->dir);
}

/* ---- the progress line ---------------------------------------------------- */

static void progress_line(void *ctx, enum prof_finish_step step, int done, int total)
{
	static const char *const doing[] = {
		[PROF_FINISH_MERGE] = "merging the process files",
		[PROF_FINISH_INDEX] = "building indexes",
		[PROF_FINISH_CHECKPOINT] = "writing the file",
	};

	(void)ctx;
	/* \r and erase-to-end keep it one line, rewritten in place */
	if (step == PROF_FINISH_DONE)
		fputs("\r\033[K", stderr);
	else
		fprintf(stderr, "\rperfkit: finishing the capture: %s (%d/%d)\033[K", doing[step],
			done, total);
	fflush(stderr);
}

const struct prof_progress *run__progress_line(void)
{
	static const struct prof_progress line = { progress_line, NULL };

	return isatty(STDERR_FILENO) ? &line : NULL;
}
