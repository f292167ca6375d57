/* folded_python.h - the Python stacks of a capture's CUDA calls
 * (--python-backtrace=cuda) as folded frames (folded_python.c), so that
 * the folded stacks and the HTML flame graph root a call at the Python
 * that made it: process;thread;outer frame;...;inner frame;API;kernel. */
#ifndef REPORT_FOLDED_PYTHON_H
#define REPORT_FOLDED_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* Every stack a CUDA call names, by (globalPid, stackId). */
struct folded_py {
	struct folded_py_stack {
		int64_t global_pid, stack_id;
		char *frames; /* "function (file:line);..." outermost first, each
			       * frame made safe by the loader's make_frame */
	} *v;
	size_t n, cap; /* sorted by (global_pid, stack_id) */
};

/* Loads the stacks, each frame made safe by make_frame (the folded
 * stacks' folded_frame__sanitize: malloc'd, NULL when out of memory); none
 * (n 0) when the capture recorded no call's stack. Where there are some,
 * makes the connection's table FOLDED_PY_CALLS of each call's first stack,
 * which FOLDED_PY_JOIN joins. */
int folded_py__load(struct prof_store *s, char *(*make_frame)(const char *), struct folded_py *p,
		    struct prof_error *err);
/* The frames of a stack, or NULL when p has no such stack. */
const char *folded_py__frames(const struct folded_py *p, int64_t global_pid, int64_t stack_id);
void folded_py__exit(struct folded_py *p);

/* The columns a call's query adds for its stack, over the call alias a:
 * the stack's process and id (NULL where the call has no stack). */
#define FOLDED_PY_COLUMNS ", y.p, y.k"
/* ... and the join that gives them: each call once, its first stack, from
 * a table made once a walk of the calls (folded_py__load): each walk of an
 * API table joined a GROUP BY of every call's stack, built and indexed
 * again each time (most of the driver walk's time on py_hf_gpt2_train). */
#define FOLDED_PY_CALLS "temp.perfkit_py_call_stacks"
#define FOLDED_PY_JOIN " LEFT JOIN " FOLDED_PY_CALLS " y ON y.t = a.globalTid AND y.c = a.correlationId"

#endif
