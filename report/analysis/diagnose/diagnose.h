/* diagnose.h - report/analysis/diagnose, the model of `perfkit diagnose`:
 * rules read a capture and say what is slow, why, how much of the run it
 * touches and what to change. This folder holds what the rules write into
 * and read through, not the rules (rules/) nor the engine that runs them
 * (analysis/diagnose_run.c):
 *
 *   findings.h  the findings, the skipped rules, the report and its
 *               printers and `--save`
 *   settings.h  the thresholds, with documented defaults (docs/diagnose.md)
 *   context.h   what every rule sees: the analysis scope, the settings,
 *               the report; the rule API (diag__add, diag__skip, diag__get)
 *   tally.h     a small group-by for a finding's offenders
 *   pytorch.h   the PyTorch sentences of changes
 *   diag_job.h  a job's ranks and collectives as the job's rules read them
 *
 * What the folder may use: analysis/core, analysis/ranks (the job's ranks
 * and collectives, job_judge's pure decisions), summary/, model/, sink/ and
 * libprof. rules/, timeline/ and the engine above may
 * use it. */
#ifndef REPORT_DIAGNOSE_H
#define REPORT_DIAGNOSE_H

#include "analysis/core/intervals.h"
#include "analysis/core/kernel_name_sql.h"
#include "analysis/core/scope.h"
#include "analysis/core/text.h"
#include "context.h"
#include "findings.h"
#include "pytorch.h"
#include "settings.h"
#include "tally.h"

#endif
