/* threads.h - how many threads a reader runs its independent work on. */
#ifndef REPORT_MODEL_THREADS_H
#define REPORT_MODEL_THREADS_H

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

#endif
