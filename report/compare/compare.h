/* compare.h - report/compare, captures against captures: `perfkit diff`
 * (diff.h: one profile per capture, matched key by key, per iteration of the
 * capture's loop and per launch), `perfkit baseline save` (baseline.h:
 * repeated captures summarised as a JSON file) and `perfkit gate` (gate.h:
 * new captures against that file, a pass or fail).
 *
 * This is what cli/ includes. What the folder may use: summary/, model/, sink/,
 * analysis/core and analysis/ranks (a job's collectives and its straggler,
 * by diagnose's rule: diff_job.c) and libprof. Nothing else in report/ uses
 * compare/. */
#ifndef REPORT_COMPARE_H
#define REPORT_COMPARE_H

#include "baseline.h"
#include "diff.h"
#include "gate.h"

#endif
