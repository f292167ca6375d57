/* ahead.c - passes of a diagnosis that need none of the table of calls
 * it builds, made on a thread of their own through a second connection
 * while the diagnosis reads the calls: the window's busy union and the
 * program's model as its GPU work tells it, which the context needs next
 * (the thread makes the union while the diagnosis makes the model in
 * place, a piece not begun being the caller's), then the launch rules'
 * pass by stream, the kernel groups and the window's calls by name, which
 * the rules take later. A diagnosis of a million kernels spends a tenth
 * of its time in the first two and a tenth in the next two (1.3 s each of
 * 12.5 s on the 2-core VM), where nothing else of it runs on the second
 * core, or on the HTML page's thread once its sections are done. Each
 * pass is the same statement and code as in place, on a copy of the
 * diagnosis's window and settings, so what a step takes is what it would
 * have read itself.
 *
 * The thread starts before the window is known, as the diagnosis begins
 * its table of calls (1.5 s at a million kernels), and meanwhile takes
 * answers of the whole file the diagnosis asks for later, which the
 * file's connections share (prof_store__shared_take): whether the driver
 * table holds a call twice, which the table of calls asks right after the
 * runtime's (0.27 s at a million kernels, while the diagnosis asks the
 * runtime's), the capture's extent, which finding the window begins with,
 * the context's failure, which it looks for next, the rows of a bad span,
 * which its header counts at the end (0.46, 0.18 and 0.28 s, on the
 * diagnosis's own thread before), what the kernel names say, the first
 * pass of the program's model (0.16 s, which the diagnosis waited for
 * once the thread made the model), and what the calls' names say (0.49
 * s from the API tables; 0.34 s from the table of calls once the window
 * was found, on the diagnosis's thread). */
#include "ahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analysis/core/program.h"
#include "model/context_failure.h"
#include "model/sql.h"
#include "model/threads.h"
#include "model/window.h"
#include "prof/store.h"
#include "prof/tables.h"

/* A piece is made by whichever thread comes to it first: the thread
 * ahead, or the diagnosis, which then makes it in place rather than wait
 * for a thread that has not begun it. The caller's: one the diagnosis
 * makes (not begun, or never wanted) or has taken. */
enum piece_state { PIECE_PENDING, PIECE_MAKING, PIECE_DONE, PIECE_CALLERS };

struct piece {
	enum piece_state state;
	void *made;
	int rc;
	struct prof_error err;
};

struct diag_ahead {
	pthread_t thread;
	bool joined;
	pthread_mutex_t lock;
	pthread_cond_t done, told;
	/* told: the window is known and the pieces may be made (go), or the
	 * diagnosis ended before it was (stop) */
	bool go, stop;
	struct prof_store *store; /* the thread's connection */
	struct diag_ahead_pass passes[DIAG_AHEAD_PIECES];
	/* what the copy reads of the diagnosis's report: its window and
	 * whether the program is PyTorch's */
	struct diag_report report;
	struct diag_context ctx; /* a copy of the diagnosis's on the thread's connection */
	struct piece pieces[DIAG_AHEAD_PIECES];
};

/* The answers of the whole file taken before the window is known: a
 * failure here is the diagnosis's to meet when it asks itself. */
static void take_file_answers(struct prof_store *s)
{
	struct prof_error ignored = { 0 };
	struct sum_context_failure failure;
	struct sum_capture_time t;
	struct prog_model by_calls;
	bool repeated;
	int64_t rows;

	/* the diagnosis makes its table of calls meanwhile, and asks after */
	(void)sum_calls__repeated(s, PROF_T_DRIVER, &repeated, &ignored);
	(void)sum_calls__repeated(s, PROF_T_RUNTIME, &repeated, &ignored);
	(void)sum_capture__time(s, &t, &ignored);
	(void)sum_context_failure__find(s, &failure, &ignored);
	(void)sum_bad_spans__count(s, &rows, &ignored);
	(void)prog_model__take_kernel_names(s, &ignored);
	(void)prog_model__take_call_names(s, false, &by_calls, &ignored);
}

static void *make_pieces(void *arg)
{
	struct diag_ahead *a = arg;
	bool go;

	take_file_answers(a->store);
	pthread_mutex_lock(&a->lock);
	while (!a->go && !a->stop)
		pthread_cond_wait(&a->told, &a->lock);
	go = a->go && !a->stop;
	pthread_mutex_unlock(&a->lock);
	if (!go)
		return NULL;
	/* The thread takes a core only where no other work of the reader
	 * wants it: beside the HTML page's own thread and its diagnosis it
	 * would slow whichever of them is the page's longest (a Python
	 * capture's sections, 8% on py_hf_gpt2_train); once one of them waits
	 * or ends, it runs as fast as any. Raising its nice value needs no
	 * privilege; where it fails the thread runs as the others do. The
	 * file's answers above were at the diagnosis's own priority: another
	 * connection that asks for one waits for this thread's. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++) {
		struct piece *p = &a->pieces[i];
		void *made = NULL;
		struct prof_error err = { 0 };
		bool mine;
		int rc;

		pthread_mutex_lock(&a->lock);
		mine = p->state == PIECE_PENDING;
		if (mine)
			p->state = PIECE_MAKING;
		pthread_mutex_unlock(&a->lock);
		if (!mine)
			continue;
		rc = a->passes[i].make(&a->ctx, &made, &err);
		pthread_mutex_lock(&a->lock);
		p->made = made;
		p->rc = rc;
		p->err = err;
		p->state = PIECE_DONE;
		pthread_cond_broadcast(&a->done);
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

struct diag_ahead *diag_ahead__start(const struct diag_context *ctx,
				     const struct diag_ahead_pass passes[DIAG_AHEAD_PIECES])
{
	struct prof_error ignored = { 0 };
	struct diag_ahead *a;

	if (!ctx->has_kernel || threads__count() < 2)
		return NULL;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++)
		a->passes[i] = passes[i];
	if (prof_store__reopen(ctx->store, &a->store, &ignored) != 0) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->done, NULL);
	pthread_cond_init(&a->told, NULL);
	if (pthread_create(&a->thread, NULL, make_pieces, a) != 0) {
		pthread_cond_destroy(&a->told);
		pthread_cond_destroy(&a->done);
		pthread_mutex_destroy(&a->lock);
		prof_store__close(a->store);
		free(a);
		return NULL;
	}
	return a;
}

void diag_ahead__go(struct diag_ahead *a, const struct diag_context *ctx)
{
	/* the pieces of timing rules, which are skipped under kernel replay */
	static const enum diag_ahead_piece timing[] = { DIAG_AHEAD_LAUNCH_SCAN, DIAG_AHEAD_API_GROUPS };

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; ctx->replayed && i < sizeof timing / sizeof *timing; i++)
		if (a->pieces[timing[i]].state == PIECE_PENDING)
			a->pieces[timing[i]].state = PIECE_CALLERS;
	a->report.window = *ctx->w;
	a->report.pytorch = ctx->report->pytorch;
	/* the copy reads the window and the settings alone: what the
	 * diagnosis goes on to make or change stays its own */
	a->ctx = (struct diag_context){
		.settings = ctx->settings,
		.report = &a->report,
	};
	a->ctx.scope = diag_scope__bare(&ctx->scope);
	a->ctx.w = &a->report.window;
	a->ctx.store = a->store;
	a->go = true;
	pthread_cond_broadcast(&a->told);
	pthread_mutex_unlock(&a->lock);
}

int diag_ahead__take(struct diag_context *ctx, enum diag_ahead_piece piece, void **made, struct prof_error *err)
{
	struct diag_ahead *a = ctx->ahead;
	const struct sum_window *then;
	bool made_ahead;
	struct piece *p;
	int rc;

	*made = NULL;
	if (!a || piece < 0 || piece >= DIAG_AHEAD_PIECES)
		return DIAG_AHEAD_NOT_MADE;
	p = &a->pieces[piece];
	pthread_mutex_lock(&a->lock);
	while (p->state == PIECE_MAKING)
		pthread_cond_wait(&a->done, &a->lock);
	made_ahead = p->state == PIECE_DONE;
	p->state = PIECE_CALLERS; /* not begun (the caller makes it), or handed over */
	pthread_mutex_unlock(&a->lock);
	if (!made_ahead)
		return DIAG_AHEAD_NOT_MADE;
	rc = p->rc;
	if (rc) {
		if (err)
			*err = p->err;
		return rc;
	}
	/* made for the window the diagnosis had when the thread started */
	then = &a->report.window;
	if (then->start_ns != ctx->w->start_ns || then->end_ns != ctx->w->end_ns ||
	    then->host_end_ns != ctx->w->host_end_ns) {
		a->passes[piece].free(p->made);
		p->made = NULL;
		return DIAG_AHEAD_NOT_MADE;
	}
	*made = p->made;
	p->made = NULL;
	return 0;
}

int diag_ahead__take_or_make(struct diag_context *ctx, enum diag_ahead_piece piece,
			     int (*make)(struct diag_context *ctx, void **out, struct prof_error *err), void **made,
			     struct prof_error *err)
{
	int rc = diag_ahead__take(ctx, piece, made, err);

	return rc == DIAG_AHEAD_NOT_MADE ? make(ctx, made, err) : rc;
}

void diag_ahead__leave(struct diag_context *ctx, enum diag_ahead_piece piece)
{
	struct diag_ahead *a = ctx->ahead;

	if (!a || piece < 0 || piece >= DIAG_AHEAD_PIECES)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->pieces[piece].state == PIECE_PENDING)
		a->pieces[piece].state = PIECE_CALLERS;
	pthread_mutex_unlock(&a->lock);
}

void diag_ahead__wait(struct diag_ahead *a)
{
	if (a && !a->joined) {
		/* a thread never told the window ends: nothing was made */
		pthread_mutex_lock(&a->lock);
		a->stop = !a->go;
		pthread_cond_broadcast(&a->told);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		a->joined = true;
	}
}

void diag_ahead__finish(struct diag_ahead *a)
{
	if (!a)
		return;
	diag_ahead__wait(a);
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++)
		if (a->pieces[i].made)
			a->passes[i].free(a->pieces[i].made);
	pthread_cond_destroy(&a->told);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	prof_store__close(a->store);
	free(a);
}
