/* gnuplot_session.c - one gnuplot drawing every plot of a page, through a
 * socket (see gnuplot_session.h). */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include "gnuplot_session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plots_gnuplot.h"
#include "prof/strfmt.h"
#include "prof/temp_files.h"

/* The line gnuplot prints after each plot: GPVAL_ERRNO, then GPVAL_ERRMSG. */
#define DONE "perfkit-plot-done "

struct gnuplot_session {
	pid_t pid;
	int fd; /* gnuplot's standard input and output */
	char log[4096];
	/* what gnuplot printed and has not been read as lines */
	char buf[4096];
	size_t len;
};

extern char **environ;

/* gnuplot started in dir, its standard input and output the socket io,
 * its errors into dir's gnuplot.log, with the signal mask mask: 0 or an
 * errno. posix_spawn, not fork: a fork marks every page of the page's
 * process copy-on-write until the exec, and the process that goes on
 * writing them (SQLite's caches, the sections) pays a fault a page, about
 * 5 ms of a small capture's 0.1 s page; glibc's child runs none of the
 * parent's signal handlers before the exec. */
static int spawn(const char *gnuplot, const char *dir, int io, const sigset_t *mask, pid_t *pid)
{
	char *argv[] = { "gnuplot", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc;

	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return rc;
	rc = posix_spawnattr_init(&attr);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	/* a file action that fails fails the spawn, with its errno */
	rc = posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* dup2 leaves the copies open across the exec, io itself (close on
	 * exec) closes */
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, io, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, io, 1);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&attr, mask);
	if (!rc)
		rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	if (!rc)
		rc = posix_spawn(pid, gnuplot, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

int gnuplot_session__start(const char *gnuplot, const char *dir, struct gnuplot_session **out,
			   struct prof_error *err)
{
	struct gnuplot_session *s = calloc(1, sizeof *s);
	sigset_t saved;
	int sv[2], rc;

	*out = NULL;
	if (!s)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (plots_path(s->log, sizeof s->log, dir, "gnuplot.log", err) < 0) {
		free(s);
		return err->code;
	}
	if (prof_temp__add(s->log, PROF_TEMP_FILE) < 0) {
		free(s);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(s);
		return prof_error__set(err, PROF_E_IO, "cannot start gnuplot: %s", strerror(errno));
	}
	fflush(NULL);
	/* a signal between the start and the registration of gnuplot's pid
	 * would leave gnuplot writing into a folder the handler removes */
	prof_temp__hold_signals(&saved);
	rc = spawn(gnuplot, dir, sv[1], &saved, &s->pid);
	if (rc == 0)
		prof_temp__set_helper(s->pid);
	prof_temp__release_signals(&saved);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		free(s);
		return prof_error__set(err, PROF_E_IO, "cannot start gnuplot: %s", strerror(rc));
	}
	s->fd = sv[0];
	*out = s;
	return 0;
}

void gnuplot_session__end(struct gnuplot_session *s)
{
	if (!s)
		return;
	close(s->fd);
	/* every plot it drew was confirmed closed: nothing of it is lost */
	kill(s->pid, SIGKILL);
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	prof_temp__set_helper(0);
	free(s);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Single quotes around text for gnuplot, a quote in it doubled. */
static char *quoted(const char *text)
{
	char *q = malloc(2 * strlen(text) + 3), *o = q;

	if (!q)
		return NULL;
	*o++ = '\'';
	for (; *text; text++) {
		if (*text == '\'')
			*o++ = '\'';
		*o++ = *text;
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

static int send_all(struct gnuplot_session *s, const char *text)
{
	for (size_t len = strlen(text); len > 0;) {
		ssize_t n = send(s->fd, text, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The first line gnuplot wrote to its log from offset on, for the message
 * of a gnuplot that stopped. */
static void log_line(const struct gnuplot_session *s, long offset, char *buf, size_t cap)
{
	FILE *f = fopen(s->log, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (fseek(f, offset, SEEK_SET) == 0)
		while (fgets(buf, (int)cap, f) && strspn(buf, " \t\r\n") == strlen(buf))
			buf[0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	fclose(f);
}

/* Waits for the line DONE; 1 with gnuplot's error number and message, 0
 * when gnuplot stopped or ran out of time (timed_out says which). */
static int read_done(struct gnuplot_session *s, int *errno_out, char *msg, size_t cap, bool *timed_out)
{
	int64_t deadline = now_ms() + GNUPLOT_PLOT_TIMEOUT_S * 1000;

	*timed_out = false;
	for (;;) {
		char *nl;
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;
		int rc;

		while ((nl = memchr(s->buf, '\n', s->len)) != NULL) {
			size_t line = (size_t)(nl - s->buf);
			bool done = line >= strlen(DONE) && !strncmp(s->buf, DONE, strlen(DONE));

			*nl = '\0';
			if (done) {
				char *rest;

				*errno_out = (int)strtol(s->buf + strlen(DONE), &rest, 10);
				snprintf(msg, cap, "%s", *rest == ' ' ? rest + 1 : rest);
			}
			memmove(s->buf, nl + 1, s->len - line - 1);
			s->len -= line + 1;
			if (done)
				return 1;
		}
		if (s->len == sizeof s->buf)
			s->len = 0; /* a line this long is not ours */
		if (left <= 0) {
			*timed_out = true;
			return 0;
		}
		rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (rc < 0 && errno != EINTR)
			return 0;
		if (rc <= 0)
			continue;
		n = recv(s->fd, s->buf + s->len, sizeof s->buf - s->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		s->len += (size_t)n;
	}
}

int gnuplot_session__draw(struct gnuplot_session **sp, const char *dir, const char *script,
			  struct prof_error *err)
{
	struct gnuplot_session *s = *sp;
	char *qdir, *qscript, *cmd = NULL, msg[PROF_ERROR_MSG_MAX];
	int gp_errno = 0, rc;
	bool timed_out = false;
	struct stat st;
	long offset = stat(s->log, &st) == 0 ? (long)st.st_size : 0;

	if (dir && strpbrk(dir, "\r\n"))
		return prof_error__set(err, PROF_E_IO, "the plots' folder has a line break in its name");
	qdir = quoted(dir ? dir : ".");
	qscript = quoted(script);
	if (qdir && qscript)
		cmd = prof_strfmt("reset session\nreset errors\nset print '-'\ncd %s\nload %s\nunset output\n"
				  "print sprintf('" DONE "%%d %%s', GPVAL_ERRNO, GPVAL_ERRMSG)\n",
				  qdir, qscript);
	free(qdir);
	free(qscript);
	if (!cmd)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = send_all(s, cmd) == 0 && read_done(s, &gp_errno, msg, sizeof msg, &timed_out);
	free(cmd);
	if (rc && gp_errno == 0)
		return 0;
	if (rc)
		return prof_error__set(err, PROF_E_IO, "gnuplot failed on %s: %s", script, msg);
	log_line(s, offset, msg, sizeof msg);
	gnuplot_session__end(s);
	*sp = NULL;
	if (timed_out)
		return prof_error__set(err, PROF_E_IO, "gnuplot ran over %d s on %s", GNUPLOT_PLOT_TIMEOUT_S,
				       script);
	return prof_error__set(err, PROF_E_IO, "gnuplot stopped on %s%s%s", script, msg[0] ? ": " : "",
			       msg);
}
