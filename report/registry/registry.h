/* registry.h - report/registry, every report `perfkit report` knows, by
 * name: the tables each folder exports of the reports it defines
 * (summary/, analysis/timeline/, analysis/ranks/, analysis/gpu_metrics/)
 * put together in the order `perfkit report` lists them.
 *
 * This is what cli/, tui/ and fuzz/ include to run a report by name.
 * What the folder may use: summary/, analysis/, sink/ and libprof. It sits
 * above the folders whose reports it lists, so none of them names
 * another's reports; export/ and job/ may use it (the HTML report runs
 * reports by name). */
#ifndef REPORT_REGISTRY_H
#define REPORT_REGISTRY_H

#include <stddef.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"

/* Run the report called name ("cuda_gpu_kern_sum", ...; "overview" is the
 * overview). Returns 0, PROF_E_USAGE for an unknown name, or another negative
 * PROF_E_* code with err filled. */
int registry__run(const char *name, struct prof_store *s, struct rpt_sink *sink,
		  struct prof_error *err);
/* The report names registry__run knows, in the order `perfkit report` lists
 * them; *n receives the count. "overview" is last. */
const char *const *registry__names(size_t *n);
/* The human title of a report, or NULL for an unknown name. */
const char *registry__title(const char *name);

#endif
