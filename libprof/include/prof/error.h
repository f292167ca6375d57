/* error.h - one error record carried out of every libprof call that can fail.
 *
 * Functions return 0 or a negative PROF_E_* code and fill a struct prof_error
 * with a one-line, human-readable message that already names the file. The
 * command line prints that message as it is; nothing else formats errors. */
#ifndef PROF_ERROR_H
#define PROF_ERROR_H

enum prof_error_code {
	PROF_OK = 0,
	PROF_E_IO = -1,           /* cannot open, read or write the file */
	PROF_E_NOT_SQLITE = -2,   /* the file is not an SQLite database */
	PROF_E_NOT_CAPTURE = -3,  /* SQLite, but neither a perfkit capture nor an nsys export */
	PROF_E_NEWER_SCHEMA = -4, /* written by a newer perfkit than this one */
	PROF_E_TRUNCATED = -5,    /* the file ends before the database does */
	PROF_E_CORRUPT = -6,      /* SQLite reports a malformed database */
	PROF_E_EXISTS = -7,       /* refusing to overwrite an existing file */
	PROF_E_NOMEM = -8,
	PROF_E_SQL = -9,          /* an SQL statement failed (a bug or a broken file) */
	PROF_E_USAGE = -10,       /* a caller passed something meaningless */
	PROF_E_UNFINISHED = -11,  /* a capture perfkit run has not finished (yet) */
	PROF_E_FULL = -12,        /* no room left to write: the disk is full, or the file size limit */
	PROF_E_NOT_PLACED = -13,  /* a finished capture that could not be put at its path */
	PROF_E_LOCKED = -14,      /* another process held the file's lock past the busy timeout */
	PROF_E_CHANGED = -15,     /* the file changed while it was read: what was read is a mix */
};

#define PROF_ERROR_MSG_MAX 512

struct prof_error {
	int code;
	char msg[PROF_ERROR_MSG_MAX];
};

/* Set code and message (printf-style). Returns code, so `return prof_error__set(...)`. */
int prof_error__set(struct prof_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void prof_error__clear(struct prof_error *err);

#endif
