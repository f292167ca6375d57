/* job_judge.c - the pure decisions of a job's rules (job_judge.h). */
#include "job_judge.h"

#include <stdio.h>
#include <string.h>

#include "summary/query.h"

int job_judge__waits(const int64_t *start, const int64_t *dur, int n, int64_t *wait)
{
	int last = -1;

	for (int i = 0; i < n; i++)
		if (last < 0 || start[i] > start[last])
			last = i;
	for (int i = 0; i < n; i++) {
		int64_t by_start = sum_span_saturated(start[i], start[last]);
		int64_t by_time = sum_span_saturated(dur[last], dur[i]);
		int64_t w = by_start < by_time ? by_start : by_time;

		wait[i] = w > 0 ? w : 0;
	}
	return last;
}

int job_judge__straggler(const struct job_lateness *v, int n, int64_t min_count, double min_fraction)
{
	int64_t all = 0;
	int best = -1;

	for (int i = 0; i < n; i++) {
		all = sum_add_saturated(all, v[i].late_wait_ns);
		if (v[i].late_wait_ns > 0 && (best < 0 || v[i].late_wait_ns > v[best].late_wait_ns))
			best = i;
	}
	if (best < 0 || v[best].late_count < min_count || v[best].late_count < 1)
		return -1;
	return (double)v[best].late_wait_ns >= min_fraction * (double)all ? best : -1;
}

double job_judge__imbalance(const double *v, int n, int *hi, int *lo)
{
	*hi = *lo = -1;
	if (n < 2)
		return 0;
	*hi = *lo = 0;
	for (int i = 1; i < n; i++) {
		if (v[i] > v[*hi])
			*hi = i;
		if (v[i] < v[*lo])
			*lo = i;
	}
	if (!(v[*hi] > 0)) {
		*hi = *lo = -1;
		return 0;
	}
	return (v[*hi] - v[*lo]) / v[*hi];
}

enum job_cause job_judge__cause(const struct job_gap *s, const struct job_gap *w, double *extra_ns)
{
	const double host = s->host_ns - w->host_ns, gpu = s->compute_ns - w->compute_ns;
	const double copies = s->copies_ns - w->copies_ns, calls = s->calls_ns - w->calls_ns;
	enum job_cause cause = JOB_CAUSE_NONE;
	double best = 0;

	if (host > best)
		best = host, cause = JOB_CAUSE_HOST;
	if (gpu > best)
		best = gpu, cause = s->kernels > 1.1 * w->kernels ? JOB_CAUSE_MORE_GPU : JOB_CAUSE_SLOW_GPU;
	if (copies > best)
		best = copies, cause = JOB_CAUSE_COPIES;
	if (calls > best)
		best = calls, cause = JOB_CAUSE_CALLS;
	*extra_ns = best;
	return cause;
}

bool job_judge__overlap_can_hide(int64_t exposed_ns, int64_t compute_ns, int64_t hidden_ns)
{
	int64_t alone = sum_span_saturated(hidden_ns, compute_ns);

	return exposed_ns > 0 && alone >= exposed_ns / 2 + exposed_ns % 2;
}

void job_judge__rank_list(const int *ranks, int n, char *buf, size_t cap)
{
	size_t len;

	if (cap == 0)
		return;
	buf[0] = 0;
	if (n <= 0)
		return;
	len = (size_t)snprintf(buf, cap, "%s", n == 1 ? "rank" : "ranks");
	for (int i = 0; i < n && len < cap;) {
		int j = i;

		while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
			j++;
		if (j - i >= 2) {
			len += (size_t)snprintf(buf + len, cap - len, "%s %d-%d", i ? "," : "", ranks[i], ranks[j]);
			i = j + 1;
		} else {
			len += (size_t)snprintf(buf + len, cap - len, "%s %d", i ? "," : "", ranks[i]);
			i++;
		}
	}
	if (len >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
}
