/* ahead.c - the passes of a diagnosis that read the GPU tables and nothing
 * else, made on a thread of their own through a second connection while
 * the diagnosis reads the calls: the program's model as its GPU work tells
 * it and the window's busy union, which the context needs next, then the
 * launch rules' pass by stream and the kernel groups, which the rules
 * take later. A diagnosis of a million kernels spends a tenth of its time
 * in the first two and a tenth in the last two (1.3 s each of 12.5 s on
 * the 2-core VM), where nothing else of it runs on the second core, or on
 * the HTML page's thread once its sections are done. Each pass is the same
 * statement and code as in place, on a copy of the diagnosis's window and
 * settings, so what a step takes is what it would have read itself. */
#include "ahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model/threads.h"
#include "prof/store.h"

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
	pthread_cond_t done;
	struct diag_ahead_pass passes[DIAG_AHEAD_PIECES];
	/* what the copy reads of the diagnosis's report: its window and
	 * whether the program is PyTorch's */
	struct diag_report report;
	struct diag_context ctx; /* a copy of the diagnosis's on the thread's connection */
	struct piece pieces[DIAG_AHEAD_PIECES];
};

static void *make_pieces(void *arg)
{
	struct diag_ahead *a = arg;

	/* The thread takes a core only where no other work of the reader
	 * wants it: beside the HTML page's own thread and its diagnosis it
	 * would slow whichever of them is the page's longest (a Python
	 * capture's sections, 8% on py_hf_gpt2_train); once one of them waits
	 * or ends, it runs as fast as any. Raising its nice value needs no
	 * privilege; where it fails the thread runs as the others do. */
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
	struct prof_store *store = NULL;
	struct diag_ahead *a;

	if (!ctx->has_kernel || threads__count() < 2)
		return NULL;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++)
		a->passes[i] = passes[i];
	/* its rules are skipped under kernel replay */
	if (ctx->replayed)
		a->pieces[DIAG_AHEAD_LAUNCH_SCAN].state = PIECE_CALLERS;
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
	if (prof_store__reopen(ctx->store, &store, &ignored) != 0) {
		free(a);
		return NULL;
	}
	a->ctx.store = store;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->done, NULL);
	if (pthread_create(&a->thread, NULL, make_pieces, a) != 0) {
		pthread_cond_destroy(&a->done);
		pthread_mutex_destroy(&a->lock);
		prof_store__close(store);
		free(a);
		return NULL;
	}
	return a;
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

void diag_ahead__wait(struct diag_ahead *a)
{
	if (a && !a->joined) {
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
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	prof_store__close(a->ctx.store);
	free(a);
}
