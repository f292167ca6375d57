/* reader_live.c - whether a perfkit run output can be read as a capture yet.
 *
 * `perfkit run` creates its output at once, holding only the run's metadata
 * and live_dir (prof/protocol.h), and folds in what the program's processes
 * recorded only when the program has ended. Read before that, such a file
 * looks like a capture of a run that did nothing, and every report would say
 * so with confidence. So readers ask here first, and tell the user which of
 * the two cases it is: the run is still going, or it was killed before it
 * merged (the process files then wait in live_dir for `perfkit recover`). */
#include "store_impl.h"

#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/protocol.h"

static long long meta_ll(struct prof_store *s, const char *key)
{
	char *v = prof_store__meta(s, key), *end = NULL;
	long long n = 0;

	if (v) {
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			n = 0;
	}
	free(v);
	return n;
}

/* A process that has ended but not been reaped yet (its parent, a killed
 * perfkit run, is gone and init has not got to it) still answers kill(). */
static bool is_zombie(long long pid)
{
	char path[64], buf[512], *close_paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

bool prof_run__alive(long long pid, const char *host)
{
	char here[256] = "";

	if (pid <= 0 || pid > INT32_MAX)
		return false;
	gethostname(here, sizeof(here) - 1);
	if (host && *host && strcmp(host, here))
		return false; /* another host's pid: cannot tell, so not ours to wait for */
	if (kill((pid_t)pid, 0) < 0 && errno != EPERM)
		return false;
	return !is_zombie(pid);
}

bool prof_store__run_alive(struct prof_store *s)
{
	char *host = prof_store__meta(s, PROF_META_HOST);
	bool alive = prof_run__alive(meta_ll(s, PROF_META_RUN_PID), host);

	free(host);
	return alive;
}

int prof_store__check_complete(struct prof_store *s, struct prof_error *err)
{
	struct stat st;
	char *dir;
	int rc = 0;

	if (prof_store__is_finished(s))
		return 0;
	dir = prof_store__meta(s, PROF_META_LIVE_DIR);
	if (!dir || !*dir) {
		/* A process's own file (no perfkit run around it) that ended
		 * without finishing: valid, readable, as far as it got. */
		free(dir);
		return 0;
	}
	if (prof_store__run_alive(s))
		rc = prof_error__set(err, PROF_E_UNFINISHED,
				     "%s: perfkit run (pid %lld) is still writing it; follow it with "
				     "`perfkit top %s`, or read it when the run has ended",
				     s->path, meta_ll(s, PROF_META_RUN_PID), s->path);
	else if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		rc = prof_error__set(err, PROF_E_UNFINISHED,
				     "%s: perfkit run ended before merging what the program recorded; "
				     "`perfkit recover %s` merges it from %s",
				     s->path, s->path, dir);
	else
		rc = prof_error__set(err, PROF_E_UNFINISHED,
				     "%s: perfkit run ended before merging what the program recorded, "
				     "and its folder %s is gone: nothing to read",
				     s->path, dir);
	free(dir);
	return rc;
}

int prof_store__open_capture(const char *path, struct prof_store **out, struct prof_error *err)
{
	int rc = prof_store__open(path, out, err);

	if (rc < 0)
		return rc;
	/* a finished capture does not change: one that did while it was read
	 * was read as a mix of two */
	(*out)->check_unchanged = true;
	rc = prof_store__check_complete(*out, err);
	if (rc < 0) {
		prof_store__close(*out);
		*out = NULL;
	}
	return rc;
}
