/* window_impl.h - the parts of the loop search (window.c) that live in
 * their own files: the loop from NVTX ranges (window_nvtx.c) and from the
 * period of the kernel launches (window_kernels.c). Only report/model's
 * window files include it. */
#ifndef REPORT_MODEL_WINDOW_IMPL_H
#define REPORT_MODEL_WINDOW_IMPL_H

#include "model/window.h"

/* The instances of the NVTX ranges a step may be marked by, as the SQL
 * "WITH ..., r AS (...)" whose r has the columns id (the row), name (the
 * range's name; an XLA program's runs under one name: window_nvtx.c), tid
 * (the thread), start, end, and k (1 for the first instance of its name on
 * its thread, the warm-up). Ranges in the domains that libraries create
 * for their own calls are left out. Written into buf; 0, or PROF_E_SQL
 * when cap is too small (a bug). */
int window__nvtx_instances_sql(char *buf, size_t cap, struct prof_error *err);
/* A condition on an instance r of that SQL: its process recorded it (a
 * capture window of the process overlaps it); "" in a capture without
 * windows. */
const char *window__nvtx_recorded_sql(struct prof_store *store);

/* The loop from NVTX ranges (marked NULL: the search; else only that
 * name's ranges): w's start, end, host end, iterations, source and mark
 * set, the end extended to the GPU work the ranges' calls launched. w is
 * left as it was when no range marks a loop. */
int window__from_nvtx(struct prof_store *s, const struct sum_loop_options *o, const char *marked,
		      struct sum_window *w, struct prof_error *err);

/* The loop from the period of the kernel launches, likewise. */
int window__from_kernels(struct prof_store *s, const struct sum_loop_options *o, const char *marked,
			 struct sum_window *w, struct prof_error *err);

#endif
