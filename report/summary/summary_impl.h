/* summary_impl.h - internals of the summary reports: the read model's
 * grouped statistics (model/groups.h) and the helpers that turn them into
 * a sink's rows (model/rows.h), with the reports' own face. Only
 * report/summary includes it. */
#ifndef REPORT_SUMMARY_IMPL_H
#define REPORT_SUMMARY_IMPL_H

#include "model/groups.h"
#include "model/rows.h"
#include "summary.h"

#endif
