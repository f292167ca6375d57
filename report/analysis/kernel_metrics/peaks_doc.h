/* peaks_doc.h - the peaks document of `perfkit peaks`
 * ({"gpu_name","gpu_uuid","peaks":{key:value}}): where it is cached for a
 * GPU, and how it becomes the capture's PERFKIT_PEAKS rows (through libprof's
 * prof/analysis_tables.h, which holds the analysis tables). */
#ifndef REPORT_PEAKS_DOC_H
#define REPORT_PEAKS_DOC_H

#include <stddef.h>

#include "prof/error.h"

/* The peaks cache of a GPU: ~/.cache/perfkit/peaks-<uuid>.json
 * ($XDG_CACHE_HOME honoured). */
int peaks_doc__cache_path(char *buf, size_t cap, const char *uuid);
/* Store a peaks document into PERFKIT_PEAKS, replacing what was there. */
int peaks_doc__store(const char *capture, const char *json_text, struct prof_error *err);
/* If the cache holds peaks for the capture's GPU (TARGET_INFO_GPU.uuid),
 * store them. Returns 1 when stored, 0 when no cache matched, < 0 on error. */
int peaks_doc__store_cached(const char *capture, struct prof_error *err);

#endif
