/* run_finish.c - the end of a run: what the program's processes recorded in
 * their proc-<pid>.sqlite files becomes the capture. Shared by a session's
 * end (run_session.c) and `perfkit recover` (run_recover.c), and timed by
 * bench/finish_bench.sh. */
#include "run_session_impl.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/protocol.h"

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
	files->paths = calloc((size_t)n + 1, sizeof *files->paths);
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
	if (!files->paths || rc < 0) {
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
	memset(files, 0, sizeof *files);
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
	if (prof_store__has_table(s, "TARGET_INFO_GPU") &&
	    prof_cursor__open(s, "SELECT name FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", &c, &err) == 0 &&
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

int run__finish_capture(const struct run_messages *msg, struct prof_writer *w,
			const struct run_proc_files *files, const struct prof_progress *progress)
{
	struct prof_error err;
	int taken = -1, failed = 0, rc;

	prof_writer__set_progress(w, progress);
	if (files->n > 0) {
		prof_progress__report(progress, PROF_FINISH_MERGE, 0, files->n);
		taken = largest(files);
		rc = prof_writer__take_over(&w, files->paths[taken], &err);
		if (rc < 0) {
			msg->error("%s", err.msg);
			prof_writer__delete(w);
			return -1;
		}
		if (rc > 0)
			taken = -1;
	}
	for (int i = 0, done = taken >= 0; i < files->n; i++) {
		if (i == taken)
			continue;
		prof_progress__report(progress, PROF_FINISH_MERGE, done++, files->n);
		if (prof_writer__merge(w, files->paths[i], &err) < 0) {
			msg->error("%s", err.msg);
			failed = 1;
		}
	}
	if (prof_writer__finish(w, &err) < 0) {
		msg->error("%s", err.msg);
		return -1;
	}
	return failed;
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
