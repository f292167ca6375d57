/* python.h - where in a Python program diagnose's evidence points
 * (diagnose_python.c), for captures made with --python-sampling,
 * --python-backtrace=cuda or --pytorch=modules: the lines that hold the
 * host outside CUDA calls (cpu_bound), the line whose calls synchronise
 * (sync_api) or allocate (alloc_churn) and the module that launches the
 * most kernels (launch_bound).
 * Each gives nothing (NULL) for a capture without those rows, so that a
 * rule's words stay as they were. */
#ifndef REPORT_DIAG_PYTHON_H
#define REPORT_DIAG_PYTHON_H

#include "context.h"

/* A line of the program as the findings name it. */
struct diag_py_line {
	char text[1024]; /* "file.py:line (function)", with " from file.py:line
			  * (function)" where a library's line was called by the
			  * program's; braces made parentheses (a change's
			  * clauses are braces) */
	double share;    /* of the window */
};

/* cpu_bound: the sampled lines of the threads that make CUDA calls, by
 * their samples outside CUDA calls (running Python), in the window's host
 * side. *evidence: a sentence naming the top lines with their shares (NULL
 * without samples); *top: the first of them (text empty without). */
int diag_python__host_lines(struct diag_context *ctx, char **evidence, struct diag_py_line *top,
			    struct prof_error *err);
/* sync_api, alloc_churn: the line whose calls of a kind (names_where:
 * SQL over the call's name s.value; synchronisations, allocations) take
 * the most time, from the calls' Python stacks, else from the samples
 * taken inside them. *evidence NULL and top->text empty when neither names
 * one. */
int diag_python__calling_line(struct diag_context *ctx, const char *names_where, char **evidence,
			      struct diag_py_line *top, struct prof_error *err);
/* launch_bound: the module (and direction) whose own ranges launch the most
 * kernels in the window, with their number per step and mean time. NULL
 * without module ranges. */
int diag_python__busiest_module(struct diag_context *ctx, char **evidence, struct prof_error *err);

#endif
