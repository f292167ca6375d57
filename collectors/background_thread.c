/* background_thread.c - what the collector's own threads (the writer, the
 * GPU metrics sampler) do first: stay out of the program's way.
 *
 * Asynchronous signals go to the program's threads: the collector's
 * handlers wait for the writer, and a handler run on a thread of ours that
 * holds one of our locks would wait on itself. Faults (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL) stay deliverable: they belong to the thread that caused
 * them.
 *
 * Linux's nice of one thread: 10 gives it about a tenth of the share of a
 * thread at 0 on a core both want, and lets it keep up where cores are
 * free. (A thread cannot raise itself back, so it stays there.) */
#define _GNU_SOURCE
#include "collector.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BACKGROUND_NICE 10

void background_thread__enter(void)
{
	sigset_t mask;

	sigfillset(&mask);
	sigdelset(&mask, SIGSEGV);
	sigdelset(&mask, SIGBUS);
	sigdelset(&mask, SIGFPE);
	sigdelset(&mask, SIGILL);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	/* On Linux a thread id names one thread here; failing is harmless. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BACKGROUND_NICE);
}
