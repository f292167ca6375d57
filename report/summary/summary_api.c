/* summary_api.c - cuda_api_sum: time spent in CUDA runtime and driver API
 * calls, per function, as `nsys stats --report cuda_api_sum` shows it. */
#include "summary_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "model/sql.h"
#include "prof/error.h"
#include "prof/tables.h"

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	/* Grouped by the name shown, so that two versions of one call
	 * ("cudaStreamSynchronize", "cudaStreamSynchronize_v3020") are one row. */
	static const char fmt[] =
		"SELECT " SUM_API_NAME("n.value") " AS l1, NULL AS l2, 0 AS k, a.end - a.start AS v, "
		SUM_BAD_SPAN("a.") " AS bad FROM (%s) AS a LEFT JOIN " PROF_T_STRINGS " AS n "
		"ON n.id = a.nameId";
	struct sum_groups gs = { 0 };
	char *calls, *src = NULL;
	int rc;

	calls = sum_api_calls(s, &rc, err);
	if (rc < 0)
		return rc;
	if (calls) {
		size_t len = sizeof fmt + strlen(calls);

		src = malloc(len);
		if (!src) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		snprintf(src, len, fmt, calls);
		rc = sum_groups__collect(&gs, s, src, err);
		if (rc < 0)
			goto out;
	}
	sum_groups__sort_by_total(&gs);
	rc = sum_groups__emit_time(&gs, sink, "cuda_api_sum", "CUDA API Summary", "Num Calls",
				   NULL, "Name", RPT_TEXT, 0, err);
out:
	free(src);
	free(calls);
	sum_groups__exit(&gs);
	return rc;
}
