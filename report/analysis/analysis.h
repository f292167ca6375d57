/* analysis.h - report/analysis, the answers: `perfkit diagnose` (the engine
 * that finds the steady-state window, its settings, and one rules_<family>.c
 * per family of rules: diagnose.h), the roofline against measured peaks
 * (roofline.h), theoretical occupancy (occupancy.h), access efficiency
 * (access.h), runs of one GEMM and their dependence (gemm_runs.h), the
 * sampled GPU metrics and their averages per kernel and range
 * (gpu_metrics.h), and
 * what fills the analysis tables a capture gains afterwards: the peaks
 * document (peaks_doc.h), the findings (diag_report__save) and, from
 * libprof, which holds those tables, the hardware metrics import
 * (prof/analysis_tables.h).
 *
 * This is what cli/ includes, and tui/ for the metric names. What the folder may use: summary/ (report rows),
 * model/ (the read model: the shared query helpers), sink/ and libprof.
 * export/, job/ and the registry may use it; summary/, model/, sink/ and
 * compare/ may not. */
#ifndef REPORT_ANALYSIS_H
#define REPORT_ANALYSIS_H

#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose_run.h"
#include "analysis/gpu_metrics/gpu_metrics.h"
#include "analysis/kernel_metrics/access.h"
#include "analysis/kernel_metrics/gemm_runs.h"
#include "analysis/kernel_metrics/occupancy.h"
#include "analysis/kernel_metrics/peaks_doc.h"
#include "analysis/kernel_metrics/roofline.h"
#include "analysis/ranks/nccl.h"
#include "prof/analysis_tables.h"

#endif
