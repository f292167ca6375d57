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

#include "model/threads.h"
#include "prof/store.h"

struct piece {
	bool wanted, done, taken;
	void *made;
	int rc;
	struct prof_error err;
};

struct diag_ahead {
	pthread_t thread;
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

	for (int i = 0; i < DIAG_AHEAD_PIECES; i++) {
		struct piece *p = &a->pieces[i];
		void *made = NULL;
		struct prof_error err = { 0 };
		int rc = p->wanted ? a->passes[i].make(&a->ctx, &made, &err) : 0;

		pthread_mutex_lock(&a->lock);
		p->made = made;
		p->rc = rc;
		p->err = err;
		p->done = true;
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
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++) {
		a->passes[i] = passes[i];
		a->pieces[i].wanted = true;
	}
	a->pieces[DIAG_AHEAD_LAUNCH_SCAN].wanted = !ctx->replayed;
	a->report.window = *ctx->w;
	a->report.pytorch = ctx->report->pytorch;
	/* the copy reads the window and the settings alone: what the
	 * diagnosis goes on to make or change stays its own */
	a->ctx = (struct diag_context){
		.settings = ctx->settings,
		.report = &a->report,
	};
	a->ctx.scope = (struct diag_scope){
		.w = &a->report.window,
		.has_kernel = ctx->has_kernel,
		.has_memcpy = ctx->has_memcpy,
		.has_memset = ctx->has_memset,
		.has_sync_table = ctx->has_sync_table,
		.has_memory_events = ctx->has_memory_events,
		.has_graph_trace = ctx->has_graph_trace,
		.has_api_calls = ctx->has_api_calls,
		.replayed = ctx->replayed,
	};
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
	struct piece *p;
	int rc;

	*made = NULL;
	if (!a || piece < 0 || piece >= DIAG_AHEAD_PIECES || !a->pieces[piece].wanted || a->pieces[piece].taken)
		return DIAG_AHEAD_NOT_MADE;
	p = &a->pieces[piece];
	pthread_mutex_lock(&a->lock);
	while (!p->done)
		pthread_cond_wait(&a->done, &a->lock);
	pthread_mutex_unlock(&a->lock);
	p->taken = true;
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

void diag_ahead__finish(struct diag_ahead *a)
{
	if (!a)
		return;
	pthread_join(a->thread, NULL);
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++)
		if (a->pieces[i].made)
			a->passes[i].free(a->pieces[i].made);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	prof_store__close(a->ctx.store);
	free(a);
}
