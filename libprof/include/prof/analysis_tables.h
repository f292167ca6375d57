/* analysis_tables.h - the PERFKIT_ tables a finished capture gains after the
 * run: per-launch hardware metrics, measured peaks and saved findings
 * (columns in libprof/src/schema.c).
 *
 * Each call opens the capture read-write, creates the analysis tables where
 * they are missing (a capture without them stays valid) and adds its rows in
 * one transaction, so the writer of the capture needs no change. A failure
 * leaves the rows as they were; the message names the file. */
#ifndef PROF_ANALYSIS_TABLES_H
#define PROF_ANALYSIS_TABLES_H

#include <stdint.h>

#include "prof/error.h"

/* One PERFKIT_PEAKS row: a number (text NULL) or a text (value not stored). */
struct prof_peak {
	const char *key;
	double value;
	const char *text;
};

/* One PERFKIT_FINDINGS row. */
struct prof_finding {
	int rank;              /* 1 for the finding that can gain the most */
	const char *rule;      /* the rule's id */
	const char *title;
	const char *severity;  /* its name: "info", "low", ... */
	double share;          /* 0..1 of the analysis window */
	int64_t time_ns;       /* the time the finding touches */
	const char *evidence;
	const char *change;
};

/* Import every metrics-<pid>.tsv file of the collector's output folder into
 * PERFKIT_KERNEL_METRICS (a no-op when there is none). Lines: pid,
 * correlationId, deviceId, durationNs, flopsF64, flopsF32, flopsF16,
 * tensorInst, dramReadBytes, dramWriteBytes, l2Bytes, tab-separated ("-":
 * not measured); a line that also describes the launch rebuilds the kernel
 * row the profiler's replay left out; the access counters and then the
 * tensor-core FLOPs by precision (F16, BF16, TF32, F64, F8) may follow. Returns the number of rows imported
 * or a negative error. */
int prof_analysis__import_metrics_dir(const char *capture, const char *dir,
				      struct prof_error *err);
/* Replace PERFKIT_PEAKS with these rows, in this order. */
int prof_analysis__store_peaks(const char *capture, const struct prof_peak *peaks, int n,
			       struct prof_error *err);
/* Replace PERFKIT_FINDINGS with these rows, in this order. */
int prof_analysis__store_findings(const char *capture, const struct prof_finding *findings,
				  int n, struct prof_error *err);

#endif
