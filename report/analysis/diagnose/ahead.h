/* ahead.h - the passes of a diagnosis that need none of its table of
 * calls, made ahead on a thread of their own (ahead.c) while the diagnosis
 * builds that table and reads it, for the steps that take them later. */
#ifndef REPORT_DIAG_AHEAD_H
#define REPORT_DIAG_AHEAD_H

#include "analysis/diagnose/context.h"

/* What is made ahead, in the order the thread makes it: the busy union
 * first, which the diagnosis takes after the program's model and the
 * host's time before the uploads, so that it makes the model in place
 * meanwhile (a piece not begun is the caller's), then the rules' three. */
enum diag_ahead_piece {
	DIAG_AHEAD_BUSY,          /* the window's busy union and devices (diag_busy__make) */
	DIAG_AHEAD_PROGRAM,       /* the program's model as its GPU work tells it (diag_program__make) */
	DIAG_AHEAD_LAUNCH_SCAN,   /* rules_launch.c's pass over each stream's kernels */
	DIAG_AHEAD_KERNEL_GROUPS, /* kernel_groups.c's names and launch shapes */
	DIAG_AHEAD_API_GROUPS,    /* api_groups.c's window calls by name (they read the API
				   * tables, as the thread's file answers do) */
	DIAG_AHEAD_PIECES
};

/* Returned by diag_ahead__take for a piece not made ahead. */
#define DIAG_AHEAD_NOT_MADE 1

/* A piece's pass over a context: 0 and *out (freed by free), or an error. */
struct diag_ahead_pass {
	int (*make)(struct diag_context *ctx, void **out, struct prof_error *err);
	void (*free)(void *made);
};

struct diag_ahead;

/* Starts the thread for ctx's diagnosis, before its window is known, with
 * passes (one a piece), through a second connection to ctx's store: NULL
 * where that cannot be (a capture in memory or narrowed by --rank or
 * --window, one thread allowed by PERFKIT_THREADS, no kernels, no
 * thread), and each piece is made in place as before. Until
 * diag_ahead__go it takes the file's answers the diagnosis asks for
 * later (its extent, its rows of a bad span). ctx's settings must outlive
 * it. */
struct diag_ahead *diag_ahead__start(const struct diag_context *ctx,
				     const struct diag_ahead_pass passes[DIAG_AHEAD_PIECES]);
/* The window is ctx's: the thread makes the pieces of that window that the
 * diagnosis will take (not the launch scan and the calls by name under
 * kernel replay, where their rules are skipped). */
void diag_ahead__go(struct diag_ahead *a, const struct diag_context *ctx);
/* ctx's piece: 0 and *made (the caller's to free), or the error its pass
 * ended with, where the thread made it, waiting for it where the thread
 * is making it; DIAG_AHEAD_NOT_MADE where it was not made ahead for ctx's
 * window (no thread, a piece the thread had not begun, one taken before, a
 * window changed since) and the caller makes it in place. */
int diag_ahead__take(struct diag_context *ctx, enum diag_ahead_piece piece, void **made, struct prof_error *err);
/* ctx's piece as diag_ahead__take gives it, or made in place by make
 * where the thread did not make it: 0 and *made (the caller's), or an
 * error. */
int diag_ahead__take_or_make(struct diag_context *ctx, enum diag_ahead_piece piece,
			     int (*make)(struct diag_context *ctx, void **out, struct prof_error *err), void **made,
			     struct prof_error *err);
/* The diagnosis will not take piece (another pass makes what it holds):
 * where the thread has not begun it, it never will. */
void diag_ahead__leave(struct diag_context *ctx, enum diag_ahead_piece piece);
/* Waits until the thread has come to every piece (made it, or left it to
 * the diagnosis, which took it first), or, never told the window, has
 * ended. */
void diag_ahead__wait(struct diag_ahead *a);
/* Waits for the thread and frees what was not taken. */
void diag_ahead__finish(struct diag_ahead *a);

/* The context's own pieces (diagnose.c): the model of the program as
 * prog_model__read_gpu reads it (freed with free), and the busy union as
 * diag_scope__load_busy makes it, in a scope of its own. */
int diag_program__make(struct diag_context *ctx, void **out, struct prof_error *err);
int diag_busy__make(struct diag_context *ctx, void **out, struct prof_error *err);
void diag_busy__free(void *busy);

#endif
