/* nvtx_groups.c - the groups of nvtx_sum: time per NVTX range name and
 * style, whole or as runs (groups.h). */
#include "model/groups.h"
#include "model/rows.h"
#include "model/sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/error.h"

/* Push/pop and start/end ranges (event.h, enum prof_nvtx_type); marks have
 * no duration. A range's name is coalesce(StringIds.value via textId, text),
 * as in nsys. */
/* The ranges, by name and style (as nsys: PushPop, StartEnd). */
#define RANGES(NAME, JOIN)                                                         \
	"SELECT " NAME " AS l1, CASE n.eventType WHEN " PROF_SQL_NVTX_PUSHPOP             \
	" THEN 'PushPop' ELSE 'StartEnd' END AS l2, 0 AS k, n.end - n.start AS v, "     \
	SUM_BAD_SPAN("n.") " AS bad FROM " PROF_T_NVTX " AS n " JOIN                     \
	"WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.end IS NOT NULL"

static const char ranges_sql[] =
	RANGES("coalesce(s.value, n.text)", "LEFT JOIN " PROF_T_STRINGS " AS s ON s.id = n.textId ");

int sum_nvtx_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	int rc;

	rc = sum_groups__collect(gs, s, ranges_sql, err);
	if (rc >= 0)
		sum_groups__sort_by_total(gs);
	return rc;
}

int sum_nvtx_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink, struct prof_error *err)
{
	return sum_groups__emit_time(gs, sink, "nvtx_sum", "NVTX Range Summary", "Instances", "Style", "Range",
				     RPT_TEXT, 0, err);
}

int sum_nvtx_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err)
{
	return sum_groups__runs(s, ranges_sql, w, err);
}
