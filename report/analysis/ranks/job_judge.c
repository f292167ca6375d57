/* job_judge.c - the pure decisions of a job's rules (job_judge.h). */
#include "job_judge.h"
#include "prof/saturate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int job_judge__waits(const int64_t *start, const int64_t *dur, int n, int64_t *wait)
{
	int last = -1;

	for (int i = 0; i < n; i++)
		if (last < 0 || start[i] > start[last])
			last = i;
	for (int i = 0; i < n; i++) {
		int64_t by_start = prof_span_saturated(start[i], start[last]);
		int64_t by_time = prof_span_saturated(dur[last], dur[i]);
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
		all = prof_add_saturated(all, v[i].late_wait_ns);
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

static int config_cmp(const struct job_kernel *x, const struct job_kernel *y)
{
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	for (int d = 0; d < 3; d++) {
		if (x->grid[d] != y->grid[d])
			return x->grid[d] < y->grid[d] ? -1 : 1;
		if (x->block[d] != y->block[d])
			return x->block[d] < y->block[d] ? -1 : 1;
	}
	return 0;
}

/* By configuration, then time. */
static int by_config(const void *a, const void *b)
{
	const struct job_kernel *x = a, *y = b;
	int c = config_cmp(x, y);

	return c ? c : (x->dur_ns > y->dur_ns) - (x->dur_ns < y->dur_ns);
}

int64_t job_judge__contention_ns(struct job_kernel *v, int n)
{
	int64_t sum = 0;

	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, by_config);
	for (int i = 0, end; i < n; i = end) {
		int alone = 0, k = 0;
		int64_t median = 0;

		for (end = i; end < n && config_cmp(&v[i], &v[end]) == 0; end++)
			alone += !v[end].beside_comm;
		if (alone == 0)
			continue;
		/* the median by nearest rank of the times run alone, in time order */
		for (int j = i, want = (alone + 1) / 2; j < end; j++)
			if (!v[j].beside_comm && ++k == want) {
				median = v[j].dur_ns;
				break;
			}
		for (int j = i; j < end; j++)
			if (v[j].beside_comm && v[j].dur_ns > median)
				sum = prof_add_saturated(sum, v[j].dur_ns - median);
	}
	return sum;
}

void job_gap__add(struct job_gap *sum, const struct job_gap *one)
{
	sum->gap_ns += one->gap_ns;
	sum->compute_ns += one->compute_ns;
	sum->copies_ns += one->copies_ns;
	sum->host_ns += one->host_ns;
	sum->calls_ns += one->calls_ns;
	sum->kernels += one->kernels;
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
	int64_t alone = prof_span_saturated(hidden_ns, compute_ns);

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
