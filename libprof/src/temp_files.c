/* temp_files.c - the registry of temporary files and folders a signal
 * removes (see prof/temp_files.h). */
#include "prof/temp_files.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prof/array.h"

struct temp_entry {
	char *path;
	enum prof_temp_kind kind;
};

static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* Changed only with the signals held, read by the handler. */
static struct temp_entry *entries;
static size_t nentries, capacity;
static pid_t helper;
static bool handler_installed;

static void on_fatal_signal(int sig)
{
	struct sigaction dfl;
	sigset_t set;
	int saved = errno;

	if (helper > 0) {
		kill(helper, SIGKILL);
		while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	for (size_t i = nentries; i-- > 0;) {
		if (entries[i].kind == PROF_TEMP_DIR)
			rmdir(entries[i].path);
		else
			unlink(entries[i].path);
	}
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	errno = saved; /* not reached: the default action ends the process */
}

/* Over the default disposition only: a signal the process was started
 * ignoring (SIGINT of a background job, nohup's SIGHUP) stays ignored, and
 * a handler of the program's own (perfkit run's, ncurses') stays its. */
static void install_handler(void)
{
	struct sigaction sa, old;

	if (handler_installed)
		return;
	handler_installed = true;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	for (size_t i = 0; i < NFATAL; i++)
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(fatal_signals[i], &sa, NULL);
}

void prof_temp__child_defaults(void)
{
	struct sigaction dfl, old;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == on_fatal_signal)
			sigaction(fatal_signals[i], &dfl, NULL);
}

void prof_temp__hold_signals(sigset_t *saved)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&set, fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, saved);
}

void prof_temp__release_signals(const sigset_t *saved)
{
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

int prof_temp__add(const char *path, enum prof_temp_kind kind)
{
	char *copy = strdup(path);
	sigset_t saved;
	int rc = 0;

	if (!copy)
		return PROF_E_NOMEM;
	prof_temp__hold_signals(&saved);
	install_handler();
	rc = prof_array__grow(&entries, &capacity, nentries + 1, sizeof *entries);
	if (rc < 0)
		goto out;
	entries[nentries].path = copy;
	entries[nentries].kind = kind;
	nentries++;
	copy = NULL;
out:
	prof_temp__release_signals(&saved);
	free(copy);
	return rc;
}

/* Drop the entries that match, keeping the others in their order. */
static void forget_matching(const char *path, bool with_tree)
{
	size_t len = strlen(path), kept = 0;
	sigset_t saved;

	prof_temp__hold_signals(&saved);
	for (size_t i = 0; i < nentries; i++) {
		const char *p = entries[i].path;
		bool match = !strcmp(p, path) ||
			     (with_tree && !strncmp(p, path, len) && p[len] == '/');

		if (match)
			free(entries[i].path);
		else
			entries[kept++] = entries[i];
	}
	nentries = kept;
	prof_temp__release_signals(&saved);
}

void prof_temp__forget(const char *path)
{
	forget_matching(path, false);
}

void prof_temp__forget_tree(const char *dir)
{
	forget_matching(dir, true);
}

void prof_temp__set_helper(pid_t pid)
{
	sigset_t saved;

	prof_temp__hold_signals(&saved);
	helper = pid;
	prof_temp__release_signals(&saved);
}

/* $TMPDIR/PREFIX-XXXXXX made into path; held: with the signals held,
 * registered too. */
static int make_dir(const char *prefix, char *path, size_t cap, bool hold, struct prof_error *err)
{
	const char *base = getenv("TMPDIR");
	sigset_t saved;
	int n, rc = 0, saved_errno = 0;

	if (!base || !*base)
		base = "/tmp";
	n = snprintf(path, cap, "%s/%s-XXXXXX", base, prefix);
	if (n < 0 || (size_t)n >= cap) {
		rc = prof_error__set(err, PROF_E_IO, "cannot make a temporary folder in '%s': "
				     "the name is too long", base);
		path[0] = '\0';
		errno = ENAMETOOLONG;
		return rc;
	}
	if (hold)
		prof_temp__hold_signals(&saved);
	if (!mkdtemp(path)) {
		saved_errno = errno;
		rc = prof_error__set(err, PROF_E_IO, "cannot make a temporary folder in '%s': %s",
				     base, strerror(errno));
	} else if (hold && prof_temp__add(path, PROF_TEMP_DIR) < 0) {
		saved_errno = ENOMEM;
		rmdir(path);
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	if (hold)
		prof_temp__release_signals(&saved);
	if (rc) {
		path[0] = '\0';
		errno = saved_errno; /* a caller tells a full disk from other failures */
	}
	return rc;
}

int prof_temp_dir__create(const char *prefix, char *path, size_t cap, struct prof_error *err)
{
	return make_dir(prefix, path, cap, true, err);
}

int prof_temp_dir__make(const char *prefix, char *path, size_t cap, struct prof_error *err)
{
	return make_dir(prefix, path, cap, false, err);
}
