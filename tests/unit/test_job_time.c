/* test_job_time.c - the time base of a job from clock pairs, on values: a
 * host whose capture clock runs a known offset (and rate) from its realtime
 * clock lands on the first host's time base. */
#include <check.h>
#include <math.h>

#include "job/job_impl.h"
#include "testutil.h"

/* Realtime 2026-11 in ns, and a capture clock of its own (CUPTI's) read
 * beside it. */
#define RT0 1795381882436228048LL

static struct job_host_clock host(int64_t rt_start, int64_t ts_start, int64_t rt_end,
				  int64_t ts_end)
{
	return (struct job_host_clock){
		.start = { rt_start, ts_start }, .end = { rt_end, ts_end },
		.has_start = true, .has_end = rt_end != 0,
	};
}

START_TEST(job_time_moves_another_hosts_clock_by_its_offset)
{
	/* ref: timestamps are realtime; h: timestamps 3.7 s behind realtime */
	struct job_host_clock ref = host(RT0, RT0, RT0 + 10000000000LL, RT0 + 10000000000LL);
	struct job_host_clock h = host(RT0 + 5, RT0 + 5 - 3700000000LL, RT0 + 9000000005LL,
				       RT0 + 9000000005LL - 3700000000LL);
	struct prof_merge_map m;

	ck_assert(job_time__clock_map(&ref, &h, 9000000000LL, &m));
	ck_assert_int_eq(m.shift_ns, 3700000000LL);
	ck_assert(m.rate == 0);
	/* h's event at its timestamp t happened at realtime t + 3.7 s: ref's t */
	ck_assert_int_eq(job_time__apply(&m, RT0 - 3700000000LL + 1234567), RT0 + 1234567);
}
END_TEST

START_TEST(job_time_follows_a_drifting_clock_between_its_pairs)
{
	/* h's capture clock gains 20 us over 10 s (2 ppm) against realtime */
	int64_t span = 10000000000LL, gain = 20000;
	struct job_host_clock ref = host(RT0, RT0, RT0 + span, RT0 + span);
	struct job_host_clock h = host(RT0, RT0 - 500, RT0 + span, RT0 - 500 + span + gain);
	struct prof_merge_map m;

	ck_assert(job_time__clock_map(&ref, &h, span, &m));
	ck_assert_int_eq(m.shift_ns, 500);
	/* per ns of its own clock */
	ck_assert(fabs(m.rate - (double)-gain / (double)(span + gain)) < 1e-15);
	/* its end pair's timestamp is ref's realtime of that instant */
	ck_assert_int_eq(job_time__apply(&m, RT0 - 500 + span + gain), RT0 + span);
	ck_assert_int_eq(job_time__apply(&m, RT0 - 500 + (span + gain) / 2), RT0 + span / 2);
}
END_TEST

START_TEST(job_time_leaves_out_a_rate_that_moves_nothing)
{
	/* 1 ns over 10 s gained, in a capture of 0.1 s: under half a ns */
	struct job_host_clock ref = host(RT0, RT0, RT0 + 10000000000LL, RT0 + 10000000000LL);
	struct job_host_clock h = host(RT0, RT0 + 77, RT0 + 10000000000LL, RT0 + 10000000078LL);
	struct prof_merge_map m;

	ck_assert(job_time__clock_map(&ref, &h, 100000000LL, &m));
	ck_assert_int_eq(m.shift_ns, -77);
	ck_assert(m.rate == 0);
}
END_TEST

START_TEST(job_time_refuses_a_host_without_pairs)
{
	struct job_host_clock ref = host(RT0, RT0, 0, 0), none = { 0 };
	struct prof_merge_map m = { .shift_ns = 5 };

	ck_assert(!job_time__clock_map(&ref, &none, 1000, &m));
	ck_assert_int_eq(m.shift_ns, 0);
	ck_assert(!job_time__clock_map(&none, &ref, 1000, &m));
}
END_TEST

START_TEST(job_time_host_clock_keeps_earliest_start_and_latest_end)
{
	struct job_capture a = { .has_clock_start = true, .clock_start = { 10, 100 },
				 .has_clock_end = true, .clock_end = { 50, 500 } };
	struct job_capture b = { .has_clock_start = true, .clock_start = { 5, 90 },
				 .has_clock_end = true, .clock_end = { 40, 400 } };
	struct job_host_clock h = { 0 };

	job_host_clock__add(&h, &a);
	job_host_clock__add(&h, &b);
	ck_assert_int_eq(h.start.timestamp_ns, 90);
	ck_assert_int_eq(h.end.timestamp_ns, 500);
}
END_TEST

/* Where group g's time t (ns) moves by under the fit's line. */
static double offset_at(const struct job_time_fit *f, int g, int64_t t)
{
	return f->lines[g].offset_ns + f->lines[g].rate * (double)(t - f->pivot_ns);
}

/* Ends of n collectives, 1 ms apart, on three hosts: host 1's clock 5 us
 * behind host 0's at the first, host 2 (two ranks) 12.345 us ahead, each
 * host's clock running ppm[group] ppm against host 0's; each end off the
 * collective's true end by a deterministic jitter of at most j ns. */
static size_t make_drifting_obs(struct job_end_obs *obs, int n, int j, const double *ppm)
{
	size_t k = 0;
	unsigned x = 12345;

	for (int c = 0; c < n; c++) {
		int64_t t = RT0 + (int64_t)c * 1000003;
		const int64_t lag[4] = { 0, -5000, 12345, 12345 };
		const int group[4] = { 0, 1, 2, 2 };

		for (int r = 0; r < 4; r++) {
			int64_t drift = llround(ppm[group[r]] * 1e-6 * (double)(t - RT0));

			x = x * 1103515245u + 12345u;
			obs[k++] = (struct job_end_obs){ .key = { 0xA11 + (uint64_t)(c % 3), c / 3,
								  JOB_KEY_NAME },
							 .group = group[r],
							 .end_ns = t + lag[r] + drift +
								   (int)(x >> 16) % (2 * j + 1) - j };
		}
	}
	return k;
}

static size_t make_obs(struct job_end_obs *obs, int n, int j)
{
	static const double none[3] = { 0, 0, 0 };

	return make_drifting_obs(obs, n, j, none);
}

START_TEST(job_time_collectives_bring_hosts_together)
{
	struct job_end_obs obs[4 * 300];
	size_t n = make_obs(obs, 300, 1500);
	struct job_time_line l[3];
	struct job_time_fit f = { .lines = l };

	ck_assert_int_eq(job_time__fit_collectives(obs, n, 3, &f), 0);
	ck_assert_int_eq(f.matched, 300);
	ck_assert(l[0].offset_ns == 0 && l[0].rate == 0);
	/* the jitter is uniform in +-1.5 us: its mean over 300 is well under 0.3 us */
	ck_assert_msg(fabs(offset_at(&f, 1, RT0) - 5000) < 300, "host 1 offset %f",
		      offset_at(&f, 1, RT0));
	ck_assert_msg(fabs(offset_at(&f, 2, RT0) + 12345) < 300, "host 2 offset %f",
		      offset_at(&f, 2, RT0));
	/* no host drifts: no rate stands clear of the jitter */
	ck_assert_msg(l[1].rate == 0 && l[2].rate == 0, "rates %g %g", l[1].rate, l[2].rate);
	/* the spread of aligned ends is the jitter's: sd of U(-1.5, 1.5) us is 866 ns */
	ck_assert_msg(f.error_ns > 700 && f.error_ns < 1000, "rms %f", f.error_ns);
}
END_TEST

/* Collectives whose ends do not meet (a broadcast's root done 22 ms before
 * its receiver, a first collective slowed by setup) are left out of the
 * fit, however far off they lie: two such among 100 would otherwise move
 * the offset by about half a millisecond. */
START_TEST(job_time_collectives_leave_out_ends_that_do_not_meet)
{
	struct job_end_obs obs[4 * 100];
	size_t n = make_obs(obs, 100, 1000);
	struct job_time_line l[3];
	struct job_time_fit f = { .lines = l };

	/* make_obs's first two collectives: one group's end far off */
	obs[1].end_ns += 22000000;
	obs[5].end_ns -= 760000;
	ck_assert_int_eq(job_time__fit_collectives(obs, n, 3, &f), 0);
	ck_assert_int_eq(f.matched, 98);
	ck_assert_msg(fabs(offset_at(&f, 1, RT0) - 5000) < 300, "host 1 offset %f",
		      offset_at(&f, 1, RT0));
	ck_assert_msg(fabs(offset_at(&f, 2, RT0) + 12345) < 300, "host 2 offset %f",
		      offset_at(&f, 2, RT0));
	ck_assert_msg(f.error_ns < 1000, "rms %f", f.error_ns);
}
END_TEST

/* Hosts whose clocks drift apart (50 ppm, -20 ppm: 15 and 6 us over the
 * 0.3 s the collectives span, more further out), which the clock pairs
 * cannot see when each host's realtime clock drifts with its capture
 * clock: the fit finds each host's rate as well as its offset, so that
 * its ends land within the jitter everywhere, and the spread it states is
 * the jitter's, not the drift's. */
START_TEST(job_time_collectives_find_hosts_drifting_apart)
{
	static const double ppm[3] = { 0, 50, -20 };
	struct job_end_obs obs[4 * 300];
	size_t n = make_drifting_obs(obs, 300, 1500, ppm);
	struct job_time_line l[3];
	struct job_time_fit f = { .lines = l };

	ck_assert_int_eq(job_time__fit_collectives(obs, n, 3, &f), 0);
	ck_assert_int_eq(f.matched, 300);
	/* the rate per ns of the host's own clock: -50e-6 / (1 + 50e-6) */
	ck_assert_msg(fabs(l[1].rate + 50e-6) < 3e-6, "host 1 rate %g", l[1].rate);
	ck_assert_msg(fabs(l[2].rate - 20e-6) < 3e-6, "host 2 rate %g", l[2].rate);
	/* at the first collective, the last, and a second past the last */
	for (int64_t at = 0; at <= 1300000000; at += at ? 1000000000 : 300000000) {
		double want1 = 5000 - 50e-6 * (double)at, want2 = -12345 + 20e-6 * (double)at;

		ck_assert_msg(fabs(offset_at(&f, 1, RT0 + at) - want1) < 1000 + 3e-6 * (double)at,
			      "host 1 at %lld: %f against %f", (long long)at,
			      offset_at(&f, 1, RT0 + at), want1);
		ck_assert_msg(fabs(offset_at(&f, 2, RT0 + at) - want2) < 1000 + 3e-6 * (double)at,
			      "host 2 at %lld: %f against %f", (long long)at,
			      offset_at(&f, 2, RT0 + at), want2);
	}
	ck_assert_msg(f.error_ns > 700 && f.error_ns < 1000, "rms %f", f.error_ns);
}
END_TEST

/* A host's fitted line composed onto its clock mapping moves its times by
 * both, to the ns. */
START_TEST(job_time_refine_composes_the_fitted_line_onto_the_clock_map)
{
	struct prof_merge_map m = { .shift_ns = 3700000000LL, .rate = 2e-6, .pivot_ns = RT0 };
	const struct prof_merge_map clock = m;
	struct job_time_line line = { -2345.5, -50e-6 };
	int64_t pivot = RT0 + 3700000000LL + 500000000LL;

	job_time__refine(&m, &line, pivot, 10000000000LL);
	for (int64_t d = -5000000000LL; d <= 5000000000LL; d += 1250000000LL) {
		int64_t t = RT0 + 500000000LL + d, c = job_time__apply(&clock, t);
		/* the fitted line's move, in a double of small numbers */
		double want = line.offset_ns + line.rate * (double)(c - pivot);

		ck_assert_msg(fabs((double)(job_time__apply(&m, t) - c) - want) <= 1.0,
			      "at %lld: %lld against %f", (long long)d,
			      (long long)(job_time__apply(&m, t) - c), want);
	}
	/* a rate that moves nothing over the span is left out */
	m = clock;
	m.rate = 0;
	line.rate = 1e-12;
	job_time__refine(&m, &line, pivot, 1000000000LL);
	ck_assert(m.rate == 0);
}
END_TEST

START_TEST(job_time_collectives_leave_an_unjoined_host)
{
	struct job_end_obs obs[4 * 20];
	size_t n = make_obs(obs, 20, 100);
	struct job_time_line l[4];
	struct job_time_fit f = { .lines = l };

	/* a fourth host that no collective reaches */
	ck_assert_int_eq(job_time__fit_collectives(obs, n, 4, &f), 0);
	ck_assert(f.error_ns < 0);
	ck_assert(l[1].offset_ns == 0 && l[2].offset_ns == 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("job_time");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, job_time_moves_another_hosts_clock_by_its_offset);
	tcase_add_test(tc, job_time_follows_a_drifting_clock_between_its_pairs);
	tcase_add_test(tc, job_time_leaves_out_a_rate_that_moves_nothing);
	tcase_add_test(tc, job_time_refuses_a_host_without_pairs);
	tcase_add_test(tc, job_time_host_clock_keeps_earliest_start_and_latest_end);
	tcase_add_test(tc, job_time_collectives_bring_hosts_together);
	tcase_add_test(tc, job_time_collectives_leave_out_ends_that_do_not_meet);
	tcase_add_test(tc, job_time_collectives_find_hosts_drifting_apart);
	tcase_add_test(tc, job_time_refine_composes_the_fitted_line_onto_the_clock_map);
	tcase_add_test(tc, job_time_collectives_leave_an_unjoined_host);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
