/* diagnose_run.h - `perfkit diagnose` of a capture (diagnose_run.c): one
 * process's rules (rules/rules.h), or a job rank by rank (diagnose_job.c).
 * Above the rules (rules/) and the diagnosis model (diagnose/). */
#ifndef REPORT_DIAGNOSE_RUN_H
#define REPORT_DIAGNOSE_RUN_H

#include "analysis/diagnose/diagnose.h"
#include "model/ranks.h"

/* Run every rule; the report's findings come sorted by share, largest first.
 * A job of several ranks (--rank's choice of them) is diagnosed rank by
 * rank, each in its own window (every rank of a small job, else the ranks
 * diag_job__choose picks), the findings merged (one finding said once when
 * every rank has it), and the job's rules added, which read every rank. */
int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err);
/* diag__run of a job of several ranks; for any other capture *out is NULL
 * and 0 returned, a capture of one process known without reading its GPU
 * work (perfkit top asks it of every finished capture it shows). */
int diag__run_if_job(struct prof_store *store, const struct diag_settings *settings,
		     struct diag_report **out, struct prof_error *err);
/* A job of several chosen ranks of store (diagnose_job.c). */
int diag__run_job(struct prof_store *store, const struct diag_settings *settings,
		  const struct sum_ranks *ranks, struct diag_report **out, struct prof_error *err);
/* A job of the ranks of j (diag_job.h: their time and collectives, the
 * source of their own rows), named path: the rules of one process on the
 * ranks diag_job__choose picks, their findings merged, the job's rules on
 * every rank. store: the capture that holds the whole job, or NULL for a
 * job of many captures read by map and reduce (report/job). */
struct diag_job;
int diag__run_job_of(struct diag_job *j, const struct diag_settings *settings, const char *path,
		     struct prof_store *store, struct diag_report **out, struct prof_error *err);

#endif
