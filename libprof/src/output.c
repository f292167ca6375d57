/* output.c - writing a file the user named through a temporary file beside
 * it (see prof/output.h for the rule). */
#define _GNU_SOURCE /* mkostemp */
#include "prof/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prof/temp_files.h"
#include "write_behind.h"

#define TEMP_SUFFIX ".perfkit-XXXXXX"

/* SQLite's companions of a database file, removed with the temporary file. */
static const char *const side_suffixes[] = { "-journal", "-wal", "-shm" };
#define NSIDES (sizeof side_suffixes / sizeof side_suffixes[0])

struct prof_output {
	char *path;
	char *temp;
	FILE *stream;
	int fd;                  /* the stream's (a written-behind one has no fileno) */
	struct write_behind *wb; /* PROF_OUTPUT_WRITE_BEHIND's writer */
	unsigned flags;
	bool committed;
	/* the file at path when opened, the only one the commit replaces */
	bool existed;
	dev_t dev;
	ino_t ino;
};

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/* check, and what it found at path: *st valid when *found. */
static int check_path(const char *path, unsigned flags, const struct prof_output_spared *spared,
		      struct stat *st, bool *found, struct prof_error *err)
{
	struct stat sp;

	*found = false;
	if (!path || !*path)
		return prof_error__set(err, PROF_E_USAGE, "no output file given");
	if (lstat(path, st) != 0) {
		if (errno == ENOENT)
			return 0;
		return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", path, strerror(errno));
	}
	*found = true;
	if (S_ISLNK(st->st_mode))
		return prof_error__set(err, PROF_E_USAGE,
				       "%s is a symbolic link; perfkit does not write through one "
				       "(name the file itself, or remove the link)", path);
	if (S_ISDIR(st->st_mode))
		return prof_error__set(err, PROF_E_USAGE, "%s is a directory, not a file", path);
	if (!S_ISREG(st->st_mode))
		return prof_error__set(err, PROF_E_USAGE,
				       "%s is %s, not a regular file; perfkit writes only regular files",
				       path, kind_of(st->st_mode));
	if (spared && spared->path && stat(spared->path, &sp) == 0 && sp.st_dev == st->st_dev &&
	    sp.st_ino == st->st_ino)
		return prof_error__set(err, PROF_E_USAGE, "%s is %s; perfkit does not replace it",
				       path, spared->what ? spared->what : "a file to keep");
	if (!(flags & PROF_OUTPUT_REPLACE))
		return prof_error__set(err, PROF_E_EXISTS, "%s exists; use %s to overwrite it", path,
				       flags & PROF_OUTPUT_FORCE_IS_LONG ? "--force" : "-f");
	return 0;
}

int prof_output__check(const char *path, unsigned flags, const struct prof_output_spared *spared,
		       struct prof_error *err)
{
	struct stat st;
	bool found;

	return check_path(path, flags, spared, &st, &found, err);
}

/* dir/.NAME.perfkit-XXXXXX for path dir/NAME, NAME shortened to keep the
 * whole within NAME_MAX. */
static char *temp_template(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dir_len = (size_t)(base - path), base_len = strlen(base);
	size_t room = NAME_MAX - 1 - strlen(TEMP_SUFFIX);
	char *t;

	if (base_len > room)
		base_len = room;
	t = malloc(dir_len + 1 + base_len + sizeof TEMP_SUFFIX);
	if (t)
		sprintf(t, "%.*s.%.*s%s", (int)dir_len, path, (int)base_len, base, TEMP_SUFFIX);
	return t;
}

static int side_path(char *buf, size_t cap, const char *path, size_t i)
{
	int n = snprintf(buf, cap, "%s%s", path, side_suffixes[i]);

	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Register the temporary file (and a database's companions) for removal by
 * a signal; with the signals held. */
static int register_temp(const struct prof_output *o)
{
	char side[PATH_MAX];

	if (o->flags & PROF_OUTPUT_KEEP_ON_SIGNAL)
		return 0;
	if (prof_temp__add(o->temp, PROF_TEMP_FILE) < 0)
		return PROF_E_NOMEM;
	for (size_t i = 0; (o->flags & PROF_OUTPUT_BY_NAME) && i < NSIDES; i++)
		if (side_path(side, sizeof side, o->temp, i) == 0 && prof_temp__add(side, PROF_TEMP_FILE) < 0)
			return PROF_E_NOMEM;
	return 0;
}

static void remove_temp(struct prof_output *o)
{
	char side[PATH_MAX];

	unlink(o->temp);
	for (size_t i = 0; (o->flags & PROF_OUTPUT_BY_NAME) && i < NSIDES; i++)
		if (side_path(side, sizeof side, o->temp, i) == 0)
			unlink(side);
}

static void forget_temp(const struct prof_output *o)
{
	char side[PATH_MAX];

	prof_temp__forget(o->temp);
	for (size_t i = 0; i < NSIDES; i++)
		if (side_path(side, sizeof side, o->temp, i) == 0)
			prof_temp__forget(side);
}

static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/* The temporary file, created and registered with the signals held, so a
 * signal finds it registered or not made. */
static int create_temp(struct prof_output *o, mode_t mode, struct prof_error *err)
{
	sigset_t saved;
	int fd, rc = 0;

	o->temp = temp_template(o->path);
	if (!o->temp)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	prof_temp__hold_signals(&saved);
	fd = mkostemp(o->temp, O_CLOEXEC);
	if (fd < 0) {
		rc = prof_error__set(err, PROF_E_IO, "cannot write %s: %s", o->path, strerror(errno));
	} else if (register_temp(o) < 0) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	prof_temp__release_signals(&saved);
	if (fd < 0) {
		free(o->temp);
		o->temp = NULL;
		return rc;
	}
	if (!rc && fchmod(fd, mode) != 0)
		rc = prof_error__set(err, PROF_E_IO, "cannot write %s: %s", o->path, strerror(errno));
	if (!rc && !(o->flags & PROF_OUTPUT_BY_NAME)) {
		o->fd = fd;
		o->stream = o->flags & PROF_OUTPUT_WRITE_BEHIND ? write_behind__open(fd, &o->wb)
								 : fdopen(fd, "w");
		if (!o->stream)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	if (!o->stream)
		close(fd);
	return rc;
}

int prof_output__open(const char *path, unsigned flags, const struct prof_output_spared *spared,
		      struct prof_output **out, struct prof_error *err)
{
	struct prof_output *o;
	struct stat st;
	bool found;
	int rc;

	*out = NULL;
	rc = check_path(path, flags, spared, &st, &found, err);
	if (rc)
		return rc;
	o = calloc(1, sizeof *o);
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	o->flags = flags;
	o->existed = found;
	if (found) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	rc = create_temp(o, o->existed ? st.st_mode & 07777 : new_file_mode(), err);
	if (rc) {
		prof_output__delete(o);
		return rc;
	}
	*out = o;
	return 0;
}

FILE *prof_output__stream(struct prof_output *o)
{
	return o->stream;
}

const char *prof_output__temp_path(const struct prof_output *o)
{
	return o->temp;
}

const char *prof_output__path(const struct prof_output *o)
{
	return o->path;
}

/* rename without replacing: EEXIST when something is at to. */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
#endif
	/* a file system without renameat2's flags: a hard link fails on an
	 * existing name as well */
	if (link(from, to) == 0) {
		unlink(from);
		return 0;
	}
	if (errno == EEXIST)
		return -1;
	/* nor hard links: the rename can only be checked before */
	if (access(to, F_OK) == 0 || errno != ENOENT) {
		errno = EEXIST;
		return -1;
	}
	return rename(from, to);
}

bool prof_output__taken(const struct prof_output *o)
{
	struct stat st;

	if (lstat(o->path, &st) != 0)
		return false;
	return !o->existed || !S_ISREG(st.st_mode) || st.st_dev != o->dev || st.st_ino != o->ino;
}

/* The old database's companions: its rollback journal or WAL would be
 * applied to the new file that takes its name. */
static void remove_side_files(const char *path)
{
	char side[PATH_MAX];

	for (size_t i = 0; i < NSIDES; i++)
		if (side_path(side, sizeof side, path, i) == 0)
			unlink(side);
}

static int put_in_place(struct prof_output *o, struct prof_error *err)
{
	struct stat st;

	if (lstat(o->path, &st) == 0) {
		if (!(o->flags & PROF_OUTPUT_REPLACE) || prof_output__taken(o))
			return prof_error__set(err, PROF_E_EXISTS,
					       "%s was created or replaced by another program while "
					       "perfkit wrote it; it is left as it is", o->path);
		if (o->flags & PROF_OUTPUT_BY_NAME)
			remove_side_files(o->path);
		if (rename(o->temp, o->path) != 0)
			return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", o->path,
					       strerror(errno));
		return 0;
	}
	/* a database deleted without its companions leaves them stale */
	if (o->flags & PROF_OUTPUT_BY_NAME)
		remove_side_files(o->path);
	if (rename_noreplace(o->temp, o->path) == 0)
		return 0;
	if (errno == EEXIST)
		return prof_error__set(err, PROF_E_EXISTS,
				       "%s was created by another program while perfkit wrote it; "
				       "it is left as it is", o->path);
	return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", o->path, strerror(errno));
}

int prof_output__commit(struct prof_output *o, struct prof_error *err)
{
	int rc;

	if (o->stream) {
		FILE *f = o->stream;
		bool failed = fflush(f) != 0 || ferror(f) || (o->wb && write_behind__drain(o->wb) != 0) ||
			      fsync(o->fd) != 0;
		int saved = errno;

		o->stream = NULL;
		if (fclose(f) != 0 && !failed) {
			failed = true;
			saved = errno;
		}
		if (failed)
			return prof_error__set(err, PROF_E_IO, "cannot write %s: %s", o->path,
					       strerror(saved));
	}
	rc = put_in_place(o, err);
	if (rc)
		return rc;
	o->committed = true;
	forget_temp(o);
	return 0;
}

void prof_output__delete(struct prof_output *o)
{
	if (!o)
		return;
	if (o->stream)
		fclose(o->stream);
	if (o->temp && !o->committed) {
		sigset_t saved;

		prof_temp__hold_signals(&saved);
		remove_temp(o);
		forget_temp(o);
		prof_temp__release_signals(&saved);
	}
	free(o->temp);
	free(o->path);
	free(o);
}

void prof_output__leave(struct prof_output *o)
{
	if (!o)
		return;
	if (o->stream)
		fclose(o->stream);
	forget_temp(o);
	free(o->temp);
	free(o->path);
	free(o);
}
