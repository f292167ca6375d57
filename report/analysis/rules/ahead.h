/* ahead.h - the passes of a diagnosis over the window's kernels alone,
 * made ahead on a thread of their own (ahead.c) while the diagnosis
 * reads the calls, for the rules that take them later. */
#ifndef REPORT_DIAG_AHEAD_H
#define REPORT_DIAG_AHEAD_H

#include "analysis/diagnose/context.h"

/* What is made ahead, in the order the rules take it. */
enum diag_ahead_piece {
	DIAG_AHEAD_LAUNCH_SCAN,   /* rules_launch.c's pass over each stream's kernels */
	DIAG_AHEAD_KERNEL_GROUPS, /* kernel_groups.c's names and launch shapes */
	DIAG_AHEAD_PIECES
};

/* Returned by diag_ahead__take for a piece not made ahead. */
#define DIAG_AHEAD_NOT_MADE 1

struct diag_ahead;

/* Starts making the pieces the rules will take of ctx's window (a
 * timing rule's not under kernel replay, where it is skipped), through a
 * second connection to ctx's store: NULL where that cannot be (a capture
 * in memory or narrowed by --rank or --window, one thread allowed by
 * PERFKIT_THREADS, no kernels, no thread), and each is made in place as
 * before. ctx's settings must outlive it. */
struct diag_ahead *diag_ahead__start(const struct diag_context *ctx);
/* Waits for piece and hands it over: 0 and *made (the caller's to free),
 * or the error its pass ended with; DIAG_AHEAD_NOT_MADE where it was not
 * made ahead (a NULL a, a piece taken before) and the caller makes it. */
int diag_ahead__take(struct diag_ahead *a, enum diag_ahead_piece piece, void **made, struct prof_error *err);
/* The piece for ctx's window: the one made ahead (diag_ahead__take) where
 * it was, for this window, else made now; 0 and *made (the caller's), or
 * the error of its pass. */
int diag_ahead__made(struct diag_context *ctx, enum diag_ahead_piece piece, void **made, struct prof_error *err);
/* Waits for the thread and frees what no rule took. */
void diag_ahead__finish(struct diag_ahead *a);

/* The pieces' passes (rules_launch.c, kernel_groups.c), in place or
 * ahead; each frees its own with a NULL-safe free. */
int launch_scan__make(struct diag_context *ctx, void **out, struct prof_error *err);
void launch_scan__free(void *scan);
int kernel_groups__make(struct diag_context *ctx, void **out, struct prof_error *err);
void kernel_groups__free_made(void *groups);

#endif
