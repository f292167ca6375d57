/* sticky_errors.h - the CUDA errors after which a context is unusable (an
 * illegal address, an assert, a kernel exception...): every later call
 * fails too, so the first call that returned one is where the context
 * failed (sticky_errors.c). The context's failure (context_failure.c)
 * names them; the calls' census (call_census.c) counts them. */
#ifndef REPORT_MODEL_STICKY_ERRORS_H
#define REPORT_MODEL_STICKY_ERRORS_H

#include <stdint.h>

struct sum_sticky_error {
	int code; /* cudaError_t and CUresult share it */
	const char *runtime_name, *driver_name, *what;
};

/* The codes as SQL's list, for a statement's IN (...): those of
 * sum_sticky_error's table. */
#define SUM_STICKY_CODES "700, 702, 710, 714, 715, 716, 717, 718, 719"

/* code's error, NULL where it is not sticky. */
const struct sum_sticky_error *sum_sticky_error(int64_t code);

#endif
