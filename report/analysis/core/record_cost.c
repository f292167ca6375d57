/* record_cost.c - perfkit's own cost per recorded call, from PERFKIT_PEAKS.
 * See record_cost.h. */
#include "record_cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/text.h"
#include "prof/tables.h"
#include "model/names.h"

int record_cost__load(struct prof_store *s, struct record_cost *c, struct prof_error *err)
{
	struct prof_cursor *cur;
	char *version = prof_store__meta(s, "schema_version");
	bool have_launch = false, have_call = false, have_alloc = false, have_copy = false;
	int rc;

	memset(c, 0, sizeof *c);
	c->perfkit_capture = version != NULL;
	free(version);
	rc = prof_cursor__open(s,
			       "SELECT key, value FROM " PROF_T_PEAKS
			       " WHERE key IN ('record_launch_ns', 'record_api_call_ns', 'record_alloc_ns',"
			       " 'record_copy_ns') AND value >= 0",
			       &cur, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(cur, err)) == 1) {
		const char *key = prof_cursor__text(cur, 0);
		double v = prof_cursor__double(cur, 1);

		if (key && !strcmp(key, "record_launch_ns"))
			c->launch_ns = v, have_launch = true;
		else if (key && !strcmp(key, "record_alloc_ns"))
			c->alloc_ns = v, have_alloc = true;
		else if (key && !strcmp(key, "record_copy_ns"))
			c->copy_ns = v, have_copy = true;
		else if (key)
			c->api_call_ns = v, have_call = true;
	}
	if (!have_alloc)
		c->alloc_ns = c->api_call_ns;
	if (!have_copy)
		c->copy_ns = c->api_call_ns;
	prof_cursor__close(cur);
	c->measured = have_launch && have_call;
	return rc < 0 ? rc : 0;
}

void record_cost__launch_sentence(const struct record_cost *c, int64_t calls, int64_t total_ns, char *buf,
				  size_t cap)
{
	char measured[32], without[32], cost[32];
	int64_t per_call = calls > 0 ? total_ns / calls : 0;

	buf[0] = 0;
	if (calls <= 0)
		return;
	diag__ns(measured, sizeof measured, per_call);
	if (!c->perfkit_capture) {
		snprintf(buf, cap, " Each launch call costs the host %s.", measured);
	} else if (!c->measured) {
		snprintf(buf, cap,
			 " Each launch call costs the host %s as measured, perfkit's own recording cost included "
			 "(not measured for this capture: `perfkit peaks --refresh` measures it).",
			 measured);
	} else {
		double left = (double)per_call - c->launch_ns;

		diag__ns(without, sizeof without, left > 0 ? (int64_t)left : 0);
		diag__ns(cost, sizeof cost, (int64_t)c->launch_ns);
		snprintf(buf, cap,
			 " Each launch call costs the host %s as measured, %s without perfkit's recording "
			 "(%s per launch, measured by `perfkit peaks`).",
			 measured, without, cost);
	}
}

int64_t record_cost__of_calls(const struct record_cost *c, int64_t launches, int64_t other_calls,
			      int64_t in_calls_ns)
{
	double cost;

	if (!c->measured || in_calls_ns <= 0)
		return 0;
	cost = (double)launches * c->launch_ns + (double)other_calls * c->api_call_ns;
	return cost >= (double)in_calls_ns ? in_calls_ns : (int64_t)cost;
}

int record_cost__idle_calls(const struct diag_scope *s, int64_t *launches, int64_t *other_calls,
			    struct prof_error *err)
{
	const char *sql =
		"SELECT r.start, s.value LIKE '%LaunchKernel%' OR s.value LIKE 'cuLaunch%'"
		" FROM " DIAG_API_CALLS " r JOIN " SUM_API_NAMES " s ON s.id = r.nameId"
		" WHERE r.start >= ?1 AND r.start < ?2 ORDER BY r.rowid"; /* by start */
	struct prof_cursor *c;
	int busy = 0, rc;

	*launches = *other_calls = 0;
	if (!s->has_api_calls)
		return 0;
	rc = diag_scope__open_window(s, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t start = prof_cursor__int64(c, 0);

		while (busy < s->nbusy && s->busy[busy].end_ns <= start)
			busy++;
		if (busy < s->nbusy && s->busy[busy].start_ns <= start)
			continue;
		if (prof_cursor__int64(c, 1))
			(*launches)++;
		else
			(*other_calls)++;
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

void record_cost__idle_sentence(const struct record_cost *c, int64_t in_calls_ns, int64_t launches,
				int64_t other_calls, char *buf, size_t cap)
{
	char measured[32], without[32];

	buf[0] = 0;
	if (!c->perfkit_capture || in_calls_ns <= 0)
		return;
	diag__ns(measured, sizeof measured, in_calls_ns);
	if (!c->measured) {
		snprintf(buf, cap,
			 " Of the idle time, %s is spent in CUDA calls as measured, perfkit's own recording cost "
			 "included (not measured for this capture: `perfkit peaks --refresh` measures it).",
			 measured);
		return;
	}
	diag__ns(without, sizeof without,
		 in_calls_ns - record_cost__of_calls(c, launches, other_calls, in_calls_ns));
	snprintf(buf, cap,
		 " Of the idle time, %s is spent in CUDA calls as measured, about %s without perfkit's "
		 "recording (%lld launches and %lld other calls at the cost `perfkit peaks` measured).",
		 measured, without, (long long)launches, (long long)other_calls);
}
