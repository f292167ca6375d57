/* timeline_units.h - the idle attribution (gpu_idle.h) and the critical
 * path (critical_path.h) of each process a capture's timeline is analysed
 * as: each rank of a job in its own views and window, or the capture as
 * one. A reader that shows both (the HTML report: its findings, its step,
 * its gpu_idle_sum and critical_path tables) makes them once: the
 * diagnosis keeps those its rules made (diagnose/context.h's keep), and
 * what is missing is made on first need with a context of its own. */
#ifndef REPORT_TIMELINE_UNITS_H
#define REPORT_TIMELINE_UNITS_H

#include <stdbool.h>
#include <stdint.h>

#include "critical_path.h"
#include "gpu_idle.h"

struct diag_context;
struct prof_store;

/* One process's analyses. */
struct timeline_unit {
	int rank;                     /* -1: the capture is no job */
	bool analysed;                /* has_gpu_work and replayed are known */
	bool has_gpu_work, replayed;
	struct gpu_idle_result *idle; /* NULL: not made yet */
	struct critical_path *cp;     /* NULL: not made yet */
	struct cp_step_rows rows;     /* the rows of the step cp walked */
};

struct timeline_units {
	struct timeline_unit *v;
	int n, cap;
	/* what the reports of them show besides (idle_report.c), read once */
	bool have_base;
	int64_t origin_ns;     /* the capture's start */
	int64_t rows_left_out; /* rows with a bad span */
};

/* What a caller needs of a unit. */
enum {
	TIMELINE_IDLE = 1,
	TIMELINE_PATH = 2, /* the critical path with its step's rows */
};

/* The unit of rank (-1: no job), added empty where u has none; NULL when
 * out of memory. */
struct timeline_unit *timeline_units__get(struct timeline_units *u, int rank);
/* What x says besides its analyses (analysed, has_gpu_work, replayed),
 * from the context that makes them. */
void timeline_unit__note(struct timeline_unit *x, const struct diag_context *ctx);
/* Whether x holds what need asks for. */
bool timeline_unit__has(const struct timeline_unit *x, int need);
/* The unit of rank of the process the store's views show now, with what
 * need asks for made where it is missing (one analysis context for all of
 * it, with the default settings, as the diagnosis uses). */
int timeline_units__need(struct prof_store *s, struct timeline_units *u, int rank, int need,
			 struct timeline_unit **out, struct prof_error *err);
void timeline_units__exit(struct timeline_units *u);

#endif
