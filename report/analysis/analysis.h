/* analysis.h - report/analysis, the answers: `perfkit diagnose` (the engine
 * that finds the steady-state window, its settings, and one rules_<family>.c
 * per family of rules: diagnose.h), the roofline against measured peaks
 * (roofline.h), theoretical occupancy (occupancy.h), and the analysis tables
 * a capture gains afterwards: hardware metrics, peaks, findings
 * (capture_tables.h).
 *
 * This is what cli/ includes. What the folder may use: summary/ (report rows
 * and the shared query helpers), sink/ and libprof. export/ may use it;
 * summary/, sink/ and compare/ may not. */
#ifndef REPORT_ANALYSIS_H
#define REPORT_ANALYSIS_H

#include "capture_tables.h"
#include "diagnose.h"
#include "occupancy.h"
#include "roofline.h"

#endif
