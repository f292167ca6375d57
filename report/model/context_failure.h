/* context_failure.h - where a program's CUDA context failed
 * (context_failure.c): the overview's warning and diagnose's header. */
#ifndef REPORT_MODEL_CONTEXT_FAILURE_H
#define REPORT_MODEL_CONTEXT_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* The first CUDA call that returned an error after which the context is
 * unusable (an illegal address, an assert, a kernel exception), and the
 * kernels and copies CUPTI recorded without GPU times (context_failure.c). */
struct sum_context_failure {
	bool failed;
	int64_t at_ns;              /* the failing call's start */
	int code;
	const char *error_name;     /* "cudaErrorIllegalAddress" (static) */
	const char *what;           /* "an illegal memory access" (static) */
	char call[96];              /* "cudaDeviceSynchronize" */
	int64_t run_start_ns;       /* what at_ns is said from: the capture's zero
				     * (sum_capture__time) */
	int64_t incomplete_kernels, incomplete_copies;
};

int sum_context_failure__find(struct prof_store *s, struct sum_context_failure *f,
			      struct prof_error *err);
/* The failure in one sentence ("" when none), its time from the run's
 * start; and the work without GPU times in another ("" when none). */
void sum_context_failure__say(const struct sum_context_failure *f, char *buf, size_t cap);
void sum_context_failure__say_untimed(const struct sum_context_failure *f, char *buf, size_t cap);

#endif
