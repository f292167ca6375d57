/* threads.h - how many threads a reader runs its independent work on. */
#ifndef REPORT_MODEL_THREADS_H
#define REPORT_MODEL_THREADS_H

#include <stdatomic.h>

#include "prof/error.h"

/* PERFKIT_THREADS where it is a positive number, else one a core online;
 * at most 256. */
int threads__count(void);

/* fn(arg of the thread, i, err) for each i in [0, n) on up to nthreads
 * threads (parallel.c): 0, or the failure of the first i that failed, in
 * index order (pieces after it may not have run), that i in *failed (-1:
 * none; 0 where none could run; failed may be NULL). The first thread's
 * arg is arg; another's is for_thread(arg), ended by end_thread after it,
 * where for_thread is set (a thread it gives NULL does not start; a
 * connection of the thread's own, say), else arg. */
int threads__each(int n, int nthreads, int (*fn)(void *arg, int i, struct prof_error *err), void *arg,
		  void *(*for_thread)(void *arg), void (*end_thread)(void *thread_arg), int *failed,
		  struct prof_error *err);

/* A thread that will have nothing to do for a while helps the work
 * threads__each spreads meanwhile, where pieces are left over for its
 * threads (PERFKIT_THREADS=1: every piece after the first): said first
 * (threads__help_coming), so that such work keeps a place for it with
 * fn's arg made as for a thread of its own; then, its own work done,
 * threads__help takes pieces from that place until *stop is true and
 * threads__help_wake has been called since (the piece at hand finished
 * first), or threads__help_not_coming where it will not come after all.
 * A page whose own sections are done takes ranks of the diagnosis it
 * waits for (html_apart.c). */
void threads__help_coming(void);
void threads__help(const atomic_bool *stop);
void threads__help_not_coming(void);
void threads__help_wake(void);

#endif
