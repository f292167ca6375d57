/* tally.h - a small group-by in C for a finding's offenders
 * (diagnose_tally.c). */
#ifndef REPORT_DIAG_TALLY_H
#define REPORT_DIAG_TALLY_H

#include <stdint.h>

#include "context.h"

struct diag_tally_entry {
	char *key;
	int64_t count, time_ns, bytes;
	double aux; /* rule-specific (e.g. a duration sum for a median) */
};
struct diag_tally {
	struct diag_tally_entry *e;
	int n, cap;
};
/* Returns the entry for key (created with zeros), or NULL when out of memory. */
struct diag_tally_entry *diag_tally__get(struct diag_tally *t, const char *key);
void diag_tally__sort_by_time(struct diag_tally *t);
/* The first DIAG_MAX_OFFENDERS entries as offenders of f. */
void diag_tally__offenders(const struct diag_tally *t, struct diag_finding *f);
void diag_tally__exit(struct diag_tally *t);

/* diag__add for a finding whose offenders are a tally's: the tally is
 * sorted by time and its first entries become the finding's top; time_ns
 * gives the share as well. */
struct diag_finding *diag__add_ranked(struct diag_context *ctx, struct diag_tally *t,
				      const char *rule_id, const char *title, int64_t time_ns,
				      enum diag_severity max_severity, char *evidence, char *change);

#endif
