/* capture_tables.h - the PERFKIT_ tables of the analysis: per-launch hardware
 * metrics, measured peaks and saved findings. They are added to a finished
 * capture (CREATE TABLE IF NOT EXISTS), so the core writer needs no change
 * and a capture without them stays valid.
 *
 *   PERFKIT_KERNEL_METRICS(globalPid, correlationId, deviceId, durationNs,
 *       flopsF64, flopsF32, flopsF16, tensorInst, dramReadBytes,
 *       dramWriteBytes, l2Bytes)         one row per profiled kernel launch
 *   PERFKIT_PEAKS(key TEXT PRIMARY KEY, value REAL, text TEXT)
 *   PERFKIT_FINDINGS(rank, rule, title, severity, share, timeNs, evidence, change) */
#ifndef REPORT_CAPTURE_TABLES_H
#define REPORT_CAPTURE_TABLES_H

#include <stddef.h>

#include "prof/error.h"

struct diag_report;

/* Import every metrics-<pid>.tsv file of the collector's output folder into
 * the capture (a no-op when there is none). Lines: pid, correlationId,
 * deviceId, durationNs, flopsF64, flopsF32, flopsF16, tensorInst,
 * dramReadBytes, dramWriteBytes, l2Bytes, tab-separated. Returns the number
 * of rows imported or a negative error. */
int ctab__import_metrics_dir(const char *capture, const char *dir, struct prof_error *err);
/* The peaks cache of a GPU: ~/.cache/perfkit/peaks-<uuid>.json
 * ($XDG_CACHE_HOME honoured). */
int ctab__peaks_cache_path(char *buf, size_t cap, const char *uuid);
/* Store a peaks JSON document ({"gpu_name","gpu_uuid","peaks":{key:value}})
 * into PERFKIT_PEAKS, replacing what was there. */
int ctab__store_peaks_json(const char *capture, const char *json_text, struct prof_error *err);
/* If the cache holds peaks for the capture's GPU (TARGET_INFO_GPU.uuid),
 * store them. Returns 1 when stored, 0 when no cache matched, < 0 on error. */
int ctab__store_cached_peaks(const char *capture, struct prof_error *err);
int ctab__store_findings(const char *capture, const struct diag_report *r, struct prof_error *err);

#endif
