/* top_job.h - what perfkit top says of a job of several ranks: the rank
 * the others wait for at the collectives, and how long per step, as
 * `perfkit diagnose` finds it (its straggler rule, rules_ranks.c: top has
 * no detector of its own). Judged once the capture is finished, in the
 * refresh step; the draw step only reads the result. */
#ifndef TUI_TOP_JOB_H
#define TUI_TOP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"

struct top_late_rank {
	bool judged;              /* the capture was diagnosed (a job, finished) */
	int rank;                 /* the straggler's rank; -1: none */
	int ranks;                /* ranks diagnosed */
	int64_t wait_per_step_ns; /* what the rank that waits most for it loses per step */
};

/* Diagnose the finished capture at path when it is a job (a capture of one
 * process is left alone, cheaply) and take its straggler finding into *out
 * (out->judged set either way when no error). 0, or a negative PROF_E_*
 * code with err set. */
int top_job__judge(const char *path, struct top_late_rank *out, struct prof_error *err);

/* "rank 1 is late: the others wait 25.3 ms per step for it" (with more
 * than two ranks, "up to": the figure is the rank that waits most); ""
 * when there is no straggler. */
void top_late_rank__say(const struct top_late_rank *l, char *buf, size_t cap);

#endif
