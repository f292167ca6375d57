/* run_end.c - what a run knew when its program ended: its exit status and
 * how long it ran.
 *
 * The finish writes them into the capture's metadata, in the commit that
 * starts the merge. When that commit finds the output's disk full (the
 * output on one disk, the run folder with its room on another), the output
 * is left unfinished for `perfkit recover`, which could then only say that
 * the status was not known. So the run also leaves them in its run folder,
 * beside the process files recover merges, before the finish begins; the
 * record goes with the folder once the capture holds them. */
#include "run_session_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RUN_END_NAME "run-end"

static int end_path(const char *dir, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s/" RUN_END_NAME, dir) < (int)cap ? 0 : -1;
}

void run__end_write(const char *dir, int exit_status, int64_t duration_ns)
{
	char path[PATH_MAX], text[96];
	int fd, len;
	bool whole;

	if (!dir || !dir[0] || end_path(dir, path, sizeof path) < 0)
		return;
	len = snprintf(text, sizeof text, "exit_status=%d\nduration_ns=%" PRId64 "\n", exit_status,
		       duration_ns);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	whole = write(fd, text, (size_t)len) == len;
	if (close(fd) < 0 || !whole)
		unlink(path); /* a part would mislead */
}

int run__end_read(const char *dir, int *exit_status, int64_t *duration_ns)
{
	char path[PATH_MAX];
	FILE *f;
	int got;

	if (!dir || end_path(dir, path, sizeof path) < 0 || !(f = fopen(path, "r")))
		return -1;
	got = fscanf(f, "exit_status=%d duration_ns=%" SCNd64, exit_status, duration_ns);
	fclose(f);
	return got == 2 ? 0 : -1;
}

void run__end_remove(const char *dir)
{
	char path[PATH_MAX];

	if (dir && end_path(dir, path, sizeof path) == 0)
		unlink(path);
}
