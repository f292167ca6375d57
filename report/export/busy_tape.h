/* busy_tape.h - the GPU's busy intervals as the overview's walk met them
 * (sum_busy_tap), kept in a temporary file for the HTML page's utilisation
 * plot.
 *
 * The plot's time axis is the loop the page's diagnosis finds, so it is
 * drawn once the diagnosis is done, on the page's critical path; the same
 * walk over every GPU row sorted by device and start (6.3 s of a 115 s
 * page at 10M kernels) was made again there. The overview's walk, early
 * and beside the diagnosis, writes each interval here (24 bytes); the plot
 * reads them back in the same order. A tape that could not be written, or
 * read, leaves the plot to walk the rows itself, as before. */
#ifndef REPORT_BUSY_TAPE_H
#define REPORT_BUSY_TAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/overview.h"

struct busy_tape;

/* A tape in the folder dir (its file unlinked at once: nothing stays
 * there, however perfkit ends); NULL when it cannot be made. */
struct busy_tape *busy_tape__open(const char *dir);
/* What the overview's walk gives the tape (sum_overview__load_tapped). */
struct sum_busy_tap busy_tape__tap(struct busy_tape *t);
/* The walk is complete: the tape may be read (else it never is). */
void busy_tape__seal(struct busy_tape *t);
/* Each interval, in the walk's order, to interval(): 0, or < 0 (nothing
 * or part told) when the tape is not sealed or cannot be read. Any thread
 * may replay a sealed tape, several at once. */
int busy_tape__replay(struct busy_tape *t,
		      int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
		      void *ctx);
/* busy_tape__replay of a tape lent as a void *: the page's diagnosis
 * makes its busy union from the tape (analysis/core/scope.h's struct
 * diag_busy_source), where it would walk every GPU row again. */
int busy_tape__replay_lent(void *tape,
			   int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
			   void *ctx);
void busy_tape__close(struct busy_tape *t);

#endif
