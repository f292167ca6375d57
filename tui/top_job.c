/* top_job.c - a finished job's straggler for perfkit top (top_job.h). */
#include "top_job.h"

#include <string.h>

#include <stdio.h>

#include "analysis/analysis.h"
#include "prof/store.h"
#include "prof/units.h"

/* The straggler finding's rank and the wait it costs per step. */
static void take_straggler(const struct diag_report *r, struct top_late_rank *out)
{
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		if (strcmp(f->rule_id, "straggler") != 0 || f->nranks < 1)
			continue;
		out->rank = f->ranks[0].rank;
		out->wait_per_step_ns = f->saves_ns;
		return;
	}
}

void top_late_rank__say(const struct top_late_rank *l, char *buf, size_t cap)
{
	char wait[32];

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (!l->judged || l->rank < 0 || l->wait_per_step_ns <= 0)
		return;
	prof_units__duration(wait, sizeof wait, l->wait_per_step_ns, PROF_UNITS_COMPACT);
	snprintf(buf, cap, "rank %d is late: the others wait %s%s per step for it", l->rank,
		 l->ranks > 2 ? "up to " : "", wait);
}

int top_job__judge(const char *path, struct top_late_rank *out, struct prof_error *err)
{
	struct diag_settings settings = { 0 };
	struct diag_report *report = NULL;
	struct prof_store *s = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	out->rank = -1;
	rc = prof_store__open_capture(path, &s, err);
	if (rc)
		goto out;
	if (diag_settings__init(&settings)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = diag__run_if_job(s, &settings, &report, err);
	if (rc)
		goto out;
	out->judged = true;
	if (report) {
		out->ranks = report->nranks;
		take_straggler(report, out);
	}
out:
	diag_report__delete(report);
	diag_settings__exit(&settings);
	if (s)
		prof_store__close(s);
	return rc;
}
