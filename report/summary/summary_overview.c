/* summary_overview.c - the overview as a report: read from the store and
 * printed as the read model's overview (model/overview.c) holds it. */
#include "summary.h"

#include "model/overview.h"

int summary__overview(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	struct sum_overview o;
	int rc = sum_overview__load(s, &o, err);

	if (rc < 0)
		return rc;
	rc = sum_overview__emit(&o, sink, err);
	sum_overview__exit(&o);
	return rc;
}
