/* diagnose_run.h - `perfkit diagnose` of a capture (diagnose_run.c): one
 * process's rules (rules/rules.h), or a job rank by rank (diagnose_job.c).
 * Above the rules (rules/) and the diagnosis model (diagnose/). */
#ifndef REPORT_DIAGNOSE_RUN_H
#define REPORT_DIAGNOSE_RUN_H

#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/rank_time.h"
#include "analysis/timeline/timeline_units.h"
#include "model/ranks.h"

/* Run every rule; the report's findings come sorted by share, largest first.
 * A job of several ranks (--rank's choice of them) is diagnosed rank by
 * rank, each in its own window (every rank of a small job, else the ranks
 * diag_job__choose picks), the findings merged (one finding said once when
 * every rank has it), and the job's rules added, which read every rank. */
int diag__run(struct prof_store *store, const struct diag_settings *settings,
	      struct diag_report **out, struct prof_error *err);
/* What a diagnosis leaves for a reader that shows its analyses too (the
 * HTML report), as the gpu_idle_sum, critical_path and rank_sum reports
 * take them: the idle attribution and critical path of each process whose
 * own rules ran, by rank (timeline/timeline_units.h), and a job's ranks'
 * time. Those reports
 * search the loop with the default settings: a keep is for a diagnosis
 * with those. */
struct diag_keep {
	struct timeline_units timeline;
	struct rank_times times; /* have_times false: no job was diagnosed */
	bool have_times;
};
void diag_keep__exit(struct diag_keep *k);
/* diag__run that leaves what it made in keep (zeroed by the caller). */
int diag__run_keeping(struct prof_store *store, const struct diag_settings *settings, struct diag_keep *keep,
		      struct diag_report **out, struct prof_error *err);
/* diag__run of a job of several ranks; for any other capture *out is NULL
 * and 0 returned, a capture of one process known without reading its GPU
 * work (perfkit top asks it of every finished capture it shows). */
int diag__run_if_job(struct prof_store *store, const struct diag_settings *settings,
		     struct diag_report **out, struct prof_error *err);
/* A job of several chosen ranks of store (diagnose_job.c), leaving in keep
 * (NULL: nowhere) what diag__run_keeping leaves. */
int diag__run_job(struct prof_store *store, const struct diag_settings *settings,
		  const struct sum_ranks *ranks, struct diag_keep *keep, struct diag_report **out,
		  struct prof_error *err);
/* A job of the ranks of j (diag_job.h: their time and collectives, the
 * source of their own rows), named path: the rules of one process on the
 * ranks diag_job__choose picks, their findings merged, the job's rules on
 * every rank. store: the capture that holds the whole job, or NULL for a
 * job of many captures read by map and reduce (report/job). */
struct diag_job;
int diag__run_job_of(struct diag_job *j, const struct diag_settings *settings, const char *path,
		     struct prof_store *store, struct diag_report **out, struct prof_error *err);

#endif
