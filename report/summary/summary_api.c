/* summary_api.c - cuda_api_sum: time spent in CUDA runtime and driver API
 * calls, per function, as `nsys stats --report cuda_api_sum` shows it. */
#include "summary_impl.h"

#include <stdlib.h>

#include "prof/tables.h"

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	static const char *const parts[] = {
		"SELECT NULL AS l1, NULL AS l2, nameId AS k, end - start AS v "
		"FROM " PROF_T_RUNTIME,
		"SELECT NULL AS l1, NULL AS l2, nameId AS k, end - start AS v "
		"FROM " PROF_T_DRIVER,
	};
	struct sum_groups gs = { 0 };
	char *src;
	int rc;

	src = sum_union(s, tables, parts, 2, &rc, err);
	if (rc < 0)
		return rc;
	if (src) {
		rc = sum_groups__collect(&gs, s, src, err);
		if (rc >= 0)
			rc = sum_groups__label_from_strings(&gs, s, true, err);
		if (rc < 0)
			goto out;
	}
	sum_groups__sort_by_total(&gs);
	rc = sum_groups__emit_time(&gs, sink, "cuda_api_sum", "CUDA API Summary", "Num Calls",
				   NULL, "Name", 0, err);
out:
	free(src);
	sum_groups__exit(&gs);
	return rc;
}
