/* export.h - report/export, whole-capture exports: the Chrome JSON trace
 * (chrome_trace.h) and the native Perfetto trace (perfetto_trace.h), both
 * fed by the merge of trace_merge.h; folded stacks and the SVG flame graph
 * (folded.h); the self-contained HTML report with its gnuplot plots (html_report.h), and the
 * part of a capture an export covers (export_window.h).
 *
 * This is what cli/ includes. What the folder may use: summary/ (the report
 * rows), model/ (the shared query helpers), registry/ (reports by name),
 * analysis/ (occupancy for the trace,
 * findings and roofline sections for the HTML report), sink/ and libprof.
 * Nothing in report/ uses export/. */
#ifndef REPORT_EXPORT_H
#define REPORT_EXPORT_H

#include "chrome_trace.h"
#include "export_window.h"
#include "folded.h"
#include "html_report.h"
#include "perfetto_trace.h"

#endif
