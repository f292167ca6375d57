/* output.h - the one way perfkit writes a file the user named: a capture
 * (run, top, merge, recover), a report or export (-o), a baseline, JUnit
 * XML, plot data, a program's log.
 *
 * The rule, the same for every writer:
 * - only a regular file is ever replaced: a device, FIFO, socket or
 *   directory at the path is refused, and so is a file that must be spared
 *   whatever -f says (the program `perfkit run` is about to run), compared
 *   by device and inode;
 * - a symbolic link at the path is refused, never written through;
 * - an existing file is replaced only when the caller was told to (-f,
 *   --force); otherwise it is refused with a message naming that option;
 * - the data goes to a temporary file beside the path, .NAME.perfkit-XXXXXX
 *   (hidden, not ending in .sqlite, so no reader takes it for a capture),
 *   which the commit renames into place once it is complete. Until then
 *   what was at the path is untouched: an error, a usage mistake found
 *   late, or a signal leaves it as it was;
 * - the commit replaces only the file that was at the path when the output
 *   was opened: a file that took the name meanwhile (another perfkit given
 *   -f) is left alone and the commit fails; without -f it never replaces
 *   anything (renameat2 RENAME_NOREPLACE, or link and unlink). A database
 *   (PROF_OUTPUT_BY_NAME) takes the place of the old file's -journal, -wal
 *   and -shm too, which SQLite would otherwise apply to it.
 *
 * The temporary file is registered with prof/temp_files.h while it exists,
 * so SIGINT, SIGTERM and SIGHUP remove it (PROF_OUTPUT_KEEP_ON_SIGNAL
 * excepted). */
#ifndef PROF_OUTPUT_H
#define PROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "prof/error.h"

struct prof_output;

enum prof_output_flags {
	/* -f: an existing regular file may be replaced */
	PROF_OUTPUT_REPLACE = 1 << 0,
	/* the refusal of an existing file says "use --force" rather than
	 * "use -f" (both spell it in every command) */
	PROF_OUTPUT_FORCE_IS_LONG = 1 << 1,
	/* no stream: the caller writes the temporary file by its name, as
	 * SQLite does; its -journal, -wal and -shm files go with it */
	PROF_OUTPUT_BY_NAME = 1 << 2,
	/* a signal leaves the temporary file where it is: an unfinished
	 * capture that `perfkit recover` finishes, a program's log */
	PROF_OUTPUT_KEEP_ON_SIGNAL = 1 << 3,
	/* the stream's bytes are written by a thread of its own while the
	 * caller goes on (a large export); the stream then has no file
	 * descriptor (fileno), and a failed write shows at the latest at the
	 * commit */
	PROF_OUTPUT_WRITE_BEHIND = 1 << 4,
};

/* A file no output may replace: its path (followed, as exec follows it)
 * and what it is, for the message ("the program to run"). */
struct prof_output_spared {
	const char *path;
	const char *what;
};

/* Whether the rule lets path be written (flags: PROF_OUTPUT_REPLACE,
 * PROF_OUTPUT_FORCE_IS_LONG; spared may be NULL). 0 when nothing is there
 * or a regular file that may be replaced; PROF_E_EXISTS for an existing
 * file without PROF_OUTPUT_REPLACE; PROF_E_USAGE for what is never
 * written (a link, a device, FIFO, socket or directory, the spared file);
 * PROF_E_IO when the path cannot be looked at. The message names path. */
int prof_output__check(const char *path, unsigned flags, const struct prof_output_spared *spared,
		       struct prof_error *err);
/* prof_output__check, then the temporary file beside path, created with
 * the permissions of the file it replaces (a new one's: 0666 less the
 * umask). */
int prof_output__open(const char *path, unsigned flags, const struct prof_output_spared *spared,
		      struct prof_output **out, struct prof_error *err);
/* The stream to write (NULL with PROF_OUTPUT_BY_NAME). */
FILE *prof_output__stream(struct prof_output *o);
/* The temporary file, for a writer that opens it by its name. */
const char *prof_output__temp_path(const struct prof_output *o);
const char *prof_output__path(const struct prof_output *o);
/* Whether another file has taken the path since o was opened (or one
 * appeared where there was none): the commit would then fail. */
bool prof_output__taken(const struct prof_output *o);
/* Flush, sync and close the stream, and rename the temporary file into
 * place (see the rule above). 0; or PROF_E_IO (a write failed: the disk
 * full) or PROF_E_EXISTS (another file took the name), the message naming
 * the path, the temporary file still there for prof_output__delete (or
 * for the caller to move elsewhere first). */
int prof_output__commit(struct prof_output *o, struct prof_error *err);
/* Free o; the temporary file, unless committed, is removed (an output
 * abandoned: what was at the path stays as it was). NULL is ignored. */
void prof_output__delete(struct prof_output *o);
/* Free o and leave the temporary file where it is, no longer removed by a
 * signal: the caller keeps it there (a finished capture whose place was
 * taken) and says so. */
void prof_output__leave(struct prof_output *o);

#endif
