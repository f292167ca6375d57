/* timeline_reports.h - the reports analysis/timeline/ defines, and their
 * table, which registry/ lists by name with every folder's. */
#ifndef REPORT_TIMELINE_REPORTS_H
#define REPORT_TIMELINE_REPORTS_H

#include <stddef.h>

#include "sink/table.h"

/* Why each GPU is idle in the diagnosis window (per cause, per step, the
 * longest stretches, streams held by event waits) and the critical path of
 * the median step (idle_report.c). They need the window `perfkit diagnose`
 * finds, so this folder computes them. */
int summary__gpu_idle_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
int summary__critical_path(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err);
/* The same rows from the analyses memo holds (timeline_units.h), those it
 * lacks made and added to it: a reader that also diagnosed the capture
 * (the HTML report) hands over what the diagnosis kept. */
struct timeline_units;
int timeline__gpu_idle_sum(struct prof_store *s, struct timeline_units *memo, struct rpt_sink *sink,
			   struct prof_error *err);
int timeline__critical_path(struct prof_store *s, struct timeline_units *memo, struct rpt_sink *sink,
			    struct prof_error *err);
/* What need asks (timeline_units.h) of each process the reports show
 * (each chosen rank of a job, or the capture), made into memo where it
 * lacks it: a reader of both reports makes a process's analyses in one
 * context rather than one a report. */
int timeline_units__analyse(struct prof_store *s, struct timeline_units *memo, int need, struct prof_error *err);

const struct rpt_report *timeline__reports(size_t *n);

#endif
