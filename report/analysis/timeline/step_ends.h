/* step_ends.h - the latest end of the GPU work each step of an NVTX loop
 * launched (step_ends.c). NVTX steps are host time: a loop that runs
 * ahead of its GPU ends a step's range before the work it launched ends.
 * The idle attribution reads every launch of the window in its pass and
 * keeps these on the way; the critical path reads them there rather than
 * joining the window's work to its calls once more. */
#ifndef REPORT_STEP_ENDS_H
#define REPORT_STEP_ENDS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/window.h"

struct step_ends {
	int64_t *end;   /* per step: the latest end, INT64_MIN where it launched nothing */
	int64_t before; /* that of the work launched before the first step */
	int n;
	bool known;     /* every launch of the window was added */
};

/* For n steps (sorted by start); 0 or PROF_E_NOMEM. */
int step_ends__init(struct step_ends *e, int n);
/* Work launched at launch_ns, ending at end_ns (clipped to the window). */
void step_ends__add(struct step_ends *e, const struct sum_step *steps, int64_t launch_ns, int64_t end_ns);
void step_ends__exit(struct step_ends *e);

#endif
