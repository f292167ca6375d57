/* temp_files.h - the temporary files and folders perfkit has made and not
 * yet put in place or removed, so that SIGINT, SIGTERM or SIGHUP ending the
 * process leaves none of them behind.
 *
 * An output is written to a temporary file beside its path (prof/output.h),
 * and the HTML report draws its plots in a temporary folder. Each is
 * registered here while it exists. The first registration installs a
 * handler for those three signals (where their disposition is the default:
 * an ignored SIGINT stays ignored, a handler someone installed stays); the
 * handler kills and reaps the helper process that writes into the folders
 * (gnuplot), removes what is registered, newest first, with unlink and
 * rmdir only, then restores the default action and raises the signal again,
 * so that the process ends as the signal would have ended it.
 *
 * Registration blocks those signals while it changes the list, so the
 * handler never sees it half changed. */
#ifndef PROF_TEMP_FILES_H
#define PROF_TEMP_FILES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "prof/error.h"

enum prof_temp_kind {
	PROF_TEMP_FILE, /* removed with unlink */
	PROF_TEMP_DIR,  /* removed with rmdir, after what was registered inside it */
};

/* Remember path until prof_temp__forget. Register a file before creating it
 * only where nobody else can create one of that name (inside a private
 * folder); elsewhere create it first with the signals held
 * (prof_temp__hold_signals), so a signal cannot remove another's file of
 * the same name nor leave this one behind. 0 or PROF_E_NOMEM. */
int prof_temp__add(const char *path, enum prof_temp_kind kind);
/* Forget path (renamed into place, or removed by its owner). */
void prof_temp__forget(const char *path);
/* Forget dir and everything registered beneath it. */
void prof_temp__forget_tree(const char *dir);
/* The process writing into the registered folders, killed (SIGKILL) and
 * reaped before they are removed; 0: none. */
void prof_temp__set_helper(pid_t pid);

/* In a child forked with the signals held, before it lets them through:
 * the registry's handler is the parent's (its files are the parent's to
 * remove), so the child gets the default action back; a signal it was
 * ignoring stays ignored. */
void prof_temp__child_defaults(void);

/* Hold SIGINT, SIGTERM and SIGHUP back (saved: the mask before), and let
 * them through again. */
void prof_temp__hold_signals(sigset_t *saved);
void prof_temp__release_signals(const sigset_t *saved);

/* A private folder $TMPDIR/PREFIX-XXXXXX (/tmp without TMPDIR), made and
 * registered; path receives its name. PROF_E_IO with a message naming the
 * temporary directory when it cannot be made. */
int prof_temp_dir__create(const char *prefix, char *path, size_t cap, struct prof_error *err);
/* The same folder, made but not registered: for one whose owner removes it
 * in its own signal handling (`perfkit run`'s process files, which the
 * traced program writes into until it ends). errno says why on failure. */
int prof_temp_dir__make(const char *prefix, char *path, size_t cap, struct prof_error *err);

#endif
