/* diagnose_save.c - `perfkit diagnose --save`: the findings of a diagnosis
 * as the capture's PERFKIT_FINDINGS rows, ranked as they are printed. */
#include "diagnose.h"

#include <stdlib.h>

#include "prof/analysis_tables.h"

int diag_report__save(const struct diag_report *r, const char *capture, struct prof_error *err)
{
	struct prof_finding *rows = NULL;
	int rc;

	if (r->nfindings > 0) {
		rows = calloc((size_t)r->nfindings, sizeof *rows);
		if (!rows)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		rows[i] = (struct prof_finding){
			.rank = i + 1,
			.rule = f->rule_id,
			.title = f->title,
			.severity = diag_severity__name(f->severity),
			.share = f->share,
			.time_ns = f->time_ns,
			.evidence = f->evidence,
			.change = f->change,
		};
	}
	rc = prof_analysis__store_findings(capture, rows, r->nfindings, err);
	free(rows);
	return rc;
}
