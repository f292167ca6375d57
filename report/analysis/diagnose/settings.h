/* settings.h - diagnose's thresholds (diagnose_settings.c): one table with
 * documented defaults (docs/diagnose.md lists every key); `--set key=value`
 * and a JSON file override them. */
#ifndef REPORT_DIAG_SETTINGS_H
#define REPORT_DIAG_SETTINGS_H

#include "prof/error.h"

struct diag_setting_def {
	const char *key;
	double value; /* the default */
	const char *doc;
};

struct diag_busy_source; /* analysis/core/scope.h */

struct diag_settings {
	double *values; /* one per entry of diag_setting_defs, same order */
	/* lent by the caller, NULL for none: the busy union made from it */
	const struct diag_busy_source *busy;
};

extern const struct diag_setting_def diag_setting_defs[];
extern const int diag_nsetting_defs;

int diag_settings__init(struct diag_settings *s);
void diag_settings__exit(struct diag_settings *s);
/* "key=value"; PROF_E_USAGE with a message for an unknown key or a bad value. */
int diag_settings__parse(struct diag_settings *s, const char *assignment, struct prof_error *err);
/* A JSON object {"key": number, ...}. */
int diag_settings__load_json(struct diag_settings *s, const char *path, struct prof_error *err);
/* The value of a known key; aborts on an unknown key (a programming error). */
double diag_settings__get(const struct diag_settings *s, const char *key);

#endif
