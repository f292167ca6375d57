/* run_signals.h - SIGINT and SIGTERM while a program runs under perfkit
 * (`perfkit run`, `perfkit top -- PROGRAM`, and `perfkit top FILE`, which
 * only remembers them): the program sees each such signal once, however it
 * was sent. run_signals.c says how. */
#ifndef PERFKIT_RUN_SIGNALS_H
#define PERFKIT_RUN_SIGNALS_H

#include <stdbool.h>
#include <sys/types.h>

/* How long a signal perfkit received waits for its process group to show
 * it too before it is passed on to the program; also how long after the
 * group got a signal perfkit's further copies count as the same one. */
#define RUN_SIGNALS_PASS_ON_MS 100

/* Catch SIGINT and SIGTERM: remembered for run_signals__take, and passed
 * on to the program once one runs (which starts with the dispositions
 * perfkit found: one ignored, as a background job's SIGINT, stays so).
 * Calls nest; the last restore puts the previous handlers back. */
void run_signals__catch(void);
void run_signals__restore(void);
/* The last signal caught since the previous call, or 0. */
int run_signals__take(void);

/* In the program's process between fork and exec: the dispositions perfkit
 * found, so the program starts as it would have without perfkit. */
void run_signals__child_reset(void);
/* Pass the signals perfkit receives on to program, from now until
 * run_signals__stop. Call right after the program is forked. */
void run_signals__pass_on_to(pid_t program);
void run_signals__stop(void);
/* waitpid(program, status, ...) while passing signals on: the program's
 * pid once it has ended, 0 while it runs (only when block is false), -1
 * on an error (errno set). */
pid_t run_signals__wait(pid_t program, int *status, bool block);

#endif
