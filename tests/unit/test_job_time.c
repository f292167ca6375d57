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

/* Ends of n collectives on three hosts: host 1's clock 5 us behind host
 * 0's, host 2 (two ranks) 12.345 us ahead; each end off the collective's
 * true end by a deterministic jitter of at most j ns. */
static size_t make_obs(struct job_end_obs *obs, int n, int j)
{
	size_t k = 0;
	unsigned x = 12345;

	for (int c = 0; c < n; c++) {
		int64_t t = RT0 + (int64_t)c * 1000003;
		const int64_t lag[4] = { 0, -5000, 12345, 12345 };
		const int group[4] = { 0, 1, 2, 2 };

		for (int r = 0; r < 4; r++) {
			x = x * 1103515245u + 12345u;
			obs[k++] = (struct job_end_obs){ .key_hash = 0xA11 + (uint64_t)(c % 3),
							 .key_ordinal = c / 3, .group = group[r],
							 .end_ns = t + lag[r] + (int)(x >> 16) % (2 * j + 1) - j };
		}
	}
	return k;
}

START_TEST(job_time_collectives_bring_hosts_together)
{
	struct job_end_obs obs[4 * 300];
	size_t n = make_obs(obs, 300, 1500);
	double off[3], rms;
	int matched;

	ck_assert_int_eq(job_time__fit_collectives(obs, n, 3, off, &rms, &matched), 0);
	ck_assert_int_eq(matched, 300);
	ck_assert(off[0] == 0);
	/* the jitter is uniform in +-1.5 us: its mean over 300 is well under 0.3 us */
	ck_assert_msg(fabs(off[1] - 5000) < 300, "host 1 offset %f", off[1]);
	ck_assert_msg(fabs(off[2] + 12345) < 300, "host 2 offset %f", off[2]);
	/* the spread of aligned ends is the jitter's: sd of U(-1.5, 1.5) us is 866 ns */
	ck_assert_msg(rms > 700 && rms < 1000, "rms %f", rms);
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
	double off[3], rms;
	int matched;

	/* make_obs's first two collectives: one group's end far off */
	obs[1].end_ns += 22000000;
	obs[5].end_ns -= 760000;
	ck_assert_int_eq(job_time__fit_collectives(obs, n, 3, off, &rms, &matched), 0);
	ck_assert_int_eq(matched, 98);
	ck_assert_msg(fabs(off[1] - 5000) < 300, "host 1 offset %f", off[1]);
	ck_assert_msg(fabs(off[2] + 12345) < 300, "host 2 offset %f", off[2]);
	ck_assert_msg(rms < 1000, "rms %f", rms);
}
END_TEST

START_TEST(job_time_collectives_leave_an_unjoined_host)
{
	struct job_end_obs obs[4 * 20];
	size_t n = make_obs(obs, 20, 100);
	double off[4], rms;
	int matched;

	/* a fourth host that no collective reaches */
	ck_assert_int_eq(job_time__fit_collectives(obs, n, 4, off, &rms, &matched), 0);
	ck_assert(rms < 0);
	ck_assert(off[1] == 0 && off[2] == 0);
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
	tcase_add_test(tc, job_time_collectives_leave_an_unjoined_host);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
