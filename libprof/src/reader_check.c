/* reader_check.c - whether what a reader read of a capture can be trusted.
 *
 * A capture is read by many statements, each its own read of the file, and
 * another process may hold the file's lock meanwhile (a writer committing
 * under the rollback journal), damage it, or truncate it. Some readers
 * answer without an error (has_table, count, meta, counter say "no" or 0),
 * so the first such failure is kept whoever met it, and
 * prof_store__check_read gives it before a reader calls its output
 * complete. */
#include "store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- waiting for another process's lock ---------------------------------- */

int store__busy_timeout_ms(void)
{
	const char *v = getenv(PROF_BUSY_TIMEOUT_ENV);
	char *end;
	long ms;

	if (!v || !*v)
		return PROF_BUSY_TIMEOUT_MS_DEFAULT;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno || *end || ms < 0 || ms > PROF_BUSY_TIMEOUT_MS_MAX)
		return PROF_BUSY_TIMEOUT_MS_DEFAULT;
	return (int)ms;
}

static int locked(const struct prof_store *s, struct prof_error *err)
{
	return prof_error__set(err, PROF_E_LOCKED,
			       "%s is locked by another process (a capture still being written?); "
			       "waited %g s", s->path, s->busy_timeout_ms / 1000.0);
}

/* ---- damage met while reading ------------------------------------------- */

/* Results that say the file is not what SQLite expects to read (as opposed
 * to a statement SQLite refuses, or want of memory). */
static bool says_damaged(int rc)
{
	switch (rc & 0xFF) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_IOERR:
		return true;
	default:
		return false;
	}
}

/* SQLite's file change counter, big-endian in header bytes 24-27. */
#define HEADER_CHANGES_AT 24

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The size and change counter of the file s has open, through SQLite's own
 * descriptor: the file read, even when its path now names another. */
static bool opened_file(const struct prof_store *s, int64_t *bytes, uint32_t *changes)
{
	sqlite3_file *f = NULL;
	sqlite3_int64 size;
	unsigned char h[4];

	if (!s->from_file ||
	    sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    !f || !f->pMethods || f->pMethods->xFileSize(f, &size) != SQLITE_OK)
		return false;
	*bytes = (int64_t)size;
	*changes = 0;
	if (size >= HEADER_CHANGES_AT + 4 &&
	    f->pMethods->xRead(f, h, sizeof h, HEADER_CHANGES_AT) == SQLITE_OK)
		*changes = be32(h);
	return true;
}

/* The file is shorter than when it was opened: another process has
 * truncated it. (A live capture only grows.) */
static bool shrunk(const struct prof_store *s, int64_t *bytes_now)
{
	uint32_t changes;

	return opened_file(s, bytes_now, &changes) && *bytes_now < s->bytes_at_open;
}

static int truncated_while_read(const struct prof_store *s, int64_t bytes_now,
				struct prof_error *err)
{
	return prof_error__set(err, PROF_E_TRUNCATED,
			       "%s: truncated while being read (%lld bytes, %lld when opened)",
			       s->path, (long long)bytes_now, (long long)s->bytes_at_open);
}

int store__read_error(struct prof_store *s, int rc, const char *what, struct prof_error *err)
{
	struct prof_error e;
	int64_t bytes_now;
	int code;

	/* SQLite waited the busy timeout for the lock and gave up: no answer
	 * read after that can be trusted, even one its caller took for "no" */
	if ((rc & 0xFF) == SQLITE_BUSY) {
		code = locked(s, &e);
		if (!s->fault.code)
			s->fault = e;
	} else {
		code = store__sqlite_error(&e, s->path, s->db, rc, what);
		if (says_damaged(rc)) {
			if (shrunk(s, &bytes_now))
				code = truncated_while_read(s, bytes_now, &e);
			if (!s->fault.code)
				s->fault = e;
		}
	}
	if (err)
		*err = e;
	return code;
}

/* PRAGMA data_version: it moves whenever another connection commits into
 * the file, in WAL mode too, where the header's change counter does not. */
static int data_version(struct prof_store *s, int64_t *v, struct prof_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store__read_error(s, rc, "read", err);
}

int store__note_opened(struct prof_store *s, struct prof_error *err)
{
	s->from_file = true;
	if (!opened_file(s, &s->bytes_at_open, &s->changes_at_open)) {
		s->from_file = false;
		return 0;
	}
	return data_version(s, &s->data_version_at_open, err);
}

int prof_file__changed(const char *path, struct prof_error *err)
{
	return prof_error__set(err, PROF_E_CHANGED, "%s changed while it was read; run again", path);
}

int prof_store__check_read(struct prof_store *s, struct prof_error *err)
{
	int64_t bytes_now, version;
	uint32_t changes;
	int rc;

	(void)store__join_whole_check(s);
	if (s->fault.code) {
		if (err)
			*err = s->fault;
		return s->fault.code;
	}
	if (!opened_file(s, &bytes_now, &changes))
		return 0;
	if (bytes_now < s->bytes_at_open)
		return truncated_while_read(s, bytes_now, err);
	if (!s->check_unchanged)
		return 0;
	rc = data_version(s, &version, err);
	if (rc)
		return rc;
	if (bytes_now != s->bytes_at_open || changes != s->changes_at_open ||
	    version != s->data_version_at_open)
		return prof_file__changed(s->path, err);
	return 0;
}

int prof_file_state__read(const char *path, struct prof_file_state *st, struct prof_error *err)
{
	unsigned char h[4] = { 0 };
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return prof_error__set(err, PROF_E_IO, "%s: %s", path, strerror(e));
	}
	st->dev = (uint64_t)sb.st_dev;
	st->ino = (uint64_t)sb.st_ino;
	st->bytes = (int64_t)sb.st_size;
	st->changes = pread(fd, h, sizeof h, HEADER_CHANGES_AT) == (ssize_t)sizeof h ? be32(h) : 0;
	close(fd);
	return 0;
}

bool prof_file_state__same(const struct prof_file_state *a, const struct prof_file_state *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->bytes == b->bytes && a->changes == b->changes;
}

/* ---- the whole file ----------------------------------------------------------- */

/* SQLite's quick_check names the database before its first finding
 * ("*** in database main ***\nPage 12: ..."): the finding alone. */
static const char *finding(const char *row)
{
	const char *nl = strrchr(row, '\n');

	return nl ? nl + 1 : row;
}

int prof_store__check_whole(struct prof_store *s, struct prof_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* every page read and every b-tree's structure checked, but not the
	 * index entries against their rows (integrity_check): on a capture of
	 * 392 MB it took 1.0 s of CPU, where the default report takes 4.8 s */
	rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);

		rc = 0;
		if (row && strcmp(row, "ok")) {
			struct prof_error e;
			int64_t bytes_now;

			/* damage found in a file that shrank since it was opened is
			 * that truncation's, and said as such */
			if (shrunk(s, &bytes_now))
				rc = truncated_while_read(s, bytes_now, &e);
			else
				rc = prof_error__set(&e, PROF_E_CORRUPT, "%s: corrupt database (%s)",
						     s->path, finding(row));
			if (!s->fault.code)
				s->fault = e;
			if (err)
				*err = e;
		}
	} else {
		rc = store__read_error(s, rc, "check", err);
	}
	sqlite3_finalize(st);
	return rc;
}

/* ---- the whole file, on a thread of its own ---------------------------------- */

struct store_whole_check {
	pthread_t thread;
	struct prof_store *other; /* a second connection to the file */
	struct prof_error err;
	int rc;
	atomic_bool done; /* the check has returned */
};

/* Linux's nice of this one thread: the check is wanted only by the end of
 * the command, and took a third of two cores while the timeline exports'
 * GPU side, which the first event waits for, had to share them (at 10M
 * kernels the side's passes ran 6.3 s where alone they take 2.9). At 10
 * it has about a tenth of a core another thread wants, and any core left
 * free. */
#define CHECK_NICE 10

static void *check_whole_apart(void *arg)
{
	struct store_whole_check *c = arg;

	/* a thread id names one thread here; failing costs only the order */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CHECK_NICE);
	c->rc = prof_store__check_whole(c->other, &c->err);
	atomic_store(&c->done, true);
	return NULL;
}

int prof_store__check_whole_apart(struct prof_store *s, struct prof_error *err)
{
	struct prof_error ignored = { 0 };
	struct store_whole_check *c;

	if (s->whole_check)
		return 0;
	c = calloc(1, sizeof *c);
	/* a capture that cannot be opened again (in memory, being written)
	 * is checked in place */
	if (c && prof_store__reopen(s, &c->other, &ignored) == 0) {
		if (pthread_create(&c->thread, NULL, check_whole_apart, c) == 0) {
			s->whole_check = c;
			return 0;
		}
		prof_store__close(c->other);
	}
	free(c);
	return prof_store__check_whole(s, err);
}

int prof_store__check_whole_later(struct prof_store *s)
{
	s->whole_check_later = true;
	return 0;
}

int prof_store__check_whole_now(struct prof_store *s)
{
	struct prof_error e;
	int rc;

	if (!s->whole_check_later)
		return 0;
	s->whole_check_later = false;
	rc = prof_store__check_whole(s, &e);
	/* the damage it found comes before any other fault, as it would have
	 * come before any read */
	if (rc < 0)
		s->fault = e;
	s->whole_check_later_rc = rc;
	return rc;
}

int store__join_whole_check(struct prof_store *s)
{
	struct store_whole_check *c = s->whole_check;
	int rc;

	if (s->whole_check_later)
		return prof_store__check_whole_now(s);
	if (!c)
		return 0;
	pthread_join(c->thread, NULL);
	s->whole_check = NULL;
	rc = c->rc;
	/* the damage it found comes before any other fault, as it would have
	 * come before any read */
	if (rc < 0)
		s->fault = c->err;
	prof_store__close(c->other);
	free(c);
	return rc;
}

void store__drop_whole_check(struct prof_store *s)
{
	struct store_whole_check *c = s->whole_check;

	s->whole_check_later = false;
	if (!c)
		return;
	/* nobody reads its answer: SQLite stops the check (an interrupt is
	 * safe from another thread) instead of the close waiting for the
	 * whole file to be read (at 10M kernels a refused -o waited 9.6 s).
	 * Asked again until the check returns: an interrupt that comes before
	 * its statement starts is forgotten as it starts. */
	while (!atomic_load(&c->done)) {
		sqlite3_interrupt(c->other->db);
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	/* the interrupt's failure becomes a fault of a store being closed */
	(void)store__join_whole_check(s);
}

int prof_store__whole_check_failed(struct prof_store *s, struct prof_error *err)
{
	int rc = store__join_whole_check(s);

	if (rc == 0)
		rc = s->whole_check_later_rc;
	if (rc < 0 && err)
		*err = s->fault;
	return rc;
}
