/* diagnose_save.c - `perfkit diagnose --save`: the findings of a diagnosis
 * as the capture's PERFKIT_FINDINGS rows, ranked as they are printed. */
#include "diagnose.h"

#include <stdlib.h>

#include "prof/analysis_tables.h"

int diag_report__save(const struct diag_report *r, const char *capture, struct prof_error *err)
{
	struct prof_finding *rows = NULL;
	char **evidence = NULL;
	int rc = 0;

	if (r->nfindings > 0) {
		rows = calloc((size_t)r->nfindings, sizeof *rows);
		evidence = calloc((size_t)r->nfindings, sizeof *evidence);
		if (!rows || !evidence) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
	}
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];
		char ranks[256];

		/* the table has no column for a job's ranks: the evidence names them */
		if (r->nranks > 0) {
			diag_finding__rank_list(f, ranks, sizeof ranks);
			evidence[i] = diag__fmt("Ranks: %s. %s", ranks, f->evidence);
			if (!evidence[i]) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				goto out;
			}
		}

		rows[i] = (struct prof_finding){
			.rank = i + 1,
			.rule = f->rule_id,
			.title = f->title,
			.severity = diag_severity__name(f->severity),
			.share = f->share,
			.time_ns = f->time_ns,
			.evidence = evidence && evidence[i] ? evidence[i] : f->evidence,
			.change = f->change,
		};
	}
	rc = prof_analysis__store_findings(capture, rows, r->nfindings, err);
out:
	for (int i = 0; evidence && i < r->nfindings; i++)
		free(evidence[i]);
	free(evidence);
	free(rows);
	return rc;
}
