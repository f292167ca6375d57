/* run_control.c - `perfkit start FILE|PID` and `perfkit stop FILE|PID`.
 *
 * Every collector of a run looks at the control file in the run's folder
 * between its flushes (collectors/capture_window.c) and applies its newest
 * line. The folder is made private to the run's user (prof_temp_dir), the
 * file is written beside and renamed into place whole, and a collector
 * honours only a file of its own user: another user can neither find the
 * folder through the capture nor write in it. */
#define _GNU_SOURCE
#include "run_control.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/escape.h"
#include "prof/protocol.h"
#include "prof/store.h"

static bool is_pid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* PERFKIT_OUTPUT_DIR from a process's environment into dir: 1 found, 0
 * not there, -1 not readable (errno: another user's, or no such process). */
static int dir_of_pid(long pid, char *dir, size_t cap)
{
	char path[64], buf[1 << 16];
	size_t n;
	FILE *f;
	static const char key[] = PROF_ENV_OUTPUT_DIR "=";

	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	if (ferror(f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
		if (!strncmp(buf + at, key, sizeof key - 1) &&
		    snprintf(dir, cap, "%s", buf + at + sizeof key - 1) < (int)cap)
			return 1;
	return 0;
}

/* The folder from the environment of pid's children and grandchildren
 * (perfkit run's pid, or a launcher's above it): 1 found, 0 not. */
static int dir_of_children(long pid, int levels, char *dir, size_t cap)
{
	char path[96], kids[4096];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(kids, sizeof kids, f)) {
		char *save = NULL;

		for (char *k = strtok_r(kids, " \n", &save); k && !found;
		     k = strtok_r(NULL, " \n", &save)) {
			long kid = strtol(k, NULL, 10);

			found = dir_of_pid(kid, dir, cap) > 0 ||
				(levels > 1 && dir_of_children(kid, levels - 1, dir, cap));
		}
	}
	fclose(f);
	return found;
}

/* The run's folder from a pid: the program's own environment, or, for
 * perfkit run's pid (which set the variable for its child only), a child's. */
static int dir_from_pid(const struct run_messages *msg, long pid, char *dir, size_t cap)
{
	int rc = dir_of_pid(pid, dir, cap);

	if (rc > 0)
		return 0;
	if (rc < 0) {
		msg->error(errno == EACCES ? "process %ld is not yours"
			   : errno == ENOENT ? "no process %ld"
					      : "cannot read process %ld's environment", pid);
		return -1;
	}
	if (dir_of_children(pid, 2, dir, cap))
		return 0;
	msg->error("process %ld is not a perfkit run or a program it captures", pid);
	return -1;
}

/* The run's folder from the output it writes. */
static int dir_from_file(const struct run_messages *msg, const char *file, char *dir, size_t cap)
{
	struct prof_store *s = NULL;
	struct prof_error err;
	char *live;
	int rc = -1;

	if (prof_store__open(file, &s, &err) < 0) {
		msg->error("%s", err.msg);
		return -1;
	}
	live = prof_store__meta(s, PROF_META_LIVE_DIR);
	if (prof_store__is_finished(s) || !live || !*live)
		msg->error("%s is not the output of a perfkit run still going", file);
	else if (!prof_store__run_alive(s))
		msg->error("%s: its perfkit run has ended (killed?); nothing to start or stop", file);
	else if (snprintf(dir, cap, "%s", live) >= (int)cap)
		msg->error("%s: the run's folder name is too long", file);
	else
		rc = 0;
	free(live);
	prof_store__close(s);
	return rc;
}

/* The sequence number of the control file's line now; 0 without one. */
static long current_seq(const char *path)
{
	long seq = 0;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%ld", &seq) != 1)
			seq = 0;
		fclose(f);
	}
	return seq;
}

int run_control(const struct run_messages *msg, const char *target, bool open_window)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 64], line[64];
	struct stat st;
	int fd, len;

	if (is_pid(target) ? dir_from_pid(msg, strtol(target, NULL, 10), dir, sizeof dir)
			   : dir_from_file(msg, target, dir, sizeof dir))
		return -1;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		msg->error("the run's folder %s is gone: the run has ended", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		msg->error("the run's folder %s is not yours: only the run's user starts and "
			   "stops its windows", dir);
		return -1;
	}
	snprintf(path, sizeof path, "%s/%s", dir, PROF_CONTROL_FILE);
	snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, PROF_CONTROL_FILE, (long)getpid());
	len = snprintf(line, sizeof line, "%ld %s\n", current_seq(path) + 1,
		       open_window ? "open" : "close");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		msg->error("cannot write in the run's folder %s: %s", dir, strerror(errno));
		return -1;
	}
	if (write(fd, line, (size_t)len) != len || close(fd) < 0 || rename(tmp, path) < 0) {
		msg->error("cannot write the control file in %s: %s", dir, strerror(errno));
		unlink(tmp);
		return -1;
	}
	fprintf(stderr, "perfkit: asked every process of the run to %s recording (within 50 ms)\n",
		open_window ? "start" : "stop");
	return 0;
}
