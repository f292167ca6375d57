/* test_access_efficiency.c - how a kernel's access counters are judged:
 * sectors per request against the ideal for the access width, bytes moved in
 * sectors per byte used, and the verdict against access.max_overfetch. The
 * strided figures are those measured on an H100 for a gather whose threads
 * read addresses 33 floats apart (4,194,304 sectors for 131,072 requests);
 * the others are worked out from 32-byte sectors and 32-thread warps. */
#include <check.h>

#include "analysis/kernel_metrics/access.h"
#include "testutil.h"

/* 131,072 warp requests of 32 threads x 4 bytes: 16 MiB asked for. */
#define REQUESTS 131072.0
#define BYTES_4B (REQUESTS * 32 * 4)

static struct access_kernel kernel(double ld_sectors, double ld_bytes, double st_sectors, double st_bytes)
{
	struct access_kernel k = {
		.name = "k", .launches = 1, .measured = 1,
		.ld = { .sectors = ld_sectors, .requests = REQUESTS, .bytes_requested = ld_bytes },
		.st = { .sectors = st_sectors, .requests = REQUESTS, .bytes_requested = st_bytes },
		.l1_hit_pct = -1, .l2_hit_pct = -1,
	};
	return k;
}

START_TEST(access_strided_gather_touches_32_sectors_per_request_where_4_would_do)
{
	struct access_kernel k = kernel(4194304, BYTES_4B, 4 * REQUESTS, BYTES_4B);

	ck_assert_double_eq_tol(access__sectors_per_request(&k.ld), 32.0, 1e-12);
	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.ld), 4.0, 1e-12);
	ck_assert_int_eq(access__word_bytes(&k.ld), 4);
	/* loads: 128 MiB of sectors for 16 MiB; stores 16 for 16: 144 / 32 */
	ck_assert_double_eq_tol(access__overfetch(&k), 144.0 / 32.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_WASTEFUL);
}
END_TEST

START_TEST(access_contiguous_gather_moves_what_it_uses)
{
	struct access_kernel k = kernel(4 * REQUESTS, BYTES_4B, 4 * REQUESTS, BYTES_4B);

	ck_assert_double_eq_tol(access__sectors_per_request(&k.ld), 4.0, 1e-12);
	ck_assert_double_eq_tol(access__overfetch(&k), 1.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_EFFICIENT);
}
END_TEST

/* float2 loads: 256 bytes per request, 8 sectors at best; 8 is no waste. */
START_TEST(access_ideal_follows_the_access_width)
{
	struct access_kernel k = kernel(8 * REQUESTS, 2 * BYTES_4B, 0, 0);

	k.st.requests = 0;
	ck_assert_int_eq(access__word_bytes(&k.ld), 8);
	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.ld), 8.0, 1e-12);
	ck_assert_double_eq_tol(access__overfetch(&k), 1.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_EFFICIENT);
}
END_TEST

/* Without the bytes asked for, 4 sectors per request is the yardstick. */
START_TEST(access_without_requested_bytes_is_judged_against_4_sectors)
{
	struct access_kernel k = kernel(32 * REQUESTS, -1, 4 * REQUESTS, -1);

	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.ld), 4.0, 1e-12);
	ck_assert_int_eq(access__word_bytes(&k.ld), 0);
	ck_assert_double_eq_tol(access__overfetch(&k), 36.0 / 8.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_WASTEFUL);
}
END_TEST

/* Requests of 8 active threads (tail warps) ask for 32 bytes each, a byte
 * per thread of the warp, and touch one sector: a request costs at least a
 * whole sector, which is no waste. */
START_TEST(access_small_requests_cost_at_least_one_sector)
{
	struct access_kernel k = kernel(REQUESTS, REQUESTS * 32, 0, 0);

	k.st.requests = 0;
	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.ld), 1.0, 1e-12);
	ck_assert_double_eq_tol(access__overfetch(&k), 1.0, 1e-12);
}
END_TEST

/* cuBLAS's sm80_xmma SGEMM on an H100 (tests/data/cases/
 * case_gemm_chain_memory.sqlite, 16 measured launches): its tiles come in
 * through cp.async copies to shared memory, whose requests and sectors the
 * load counters hold but whose bytes they do not (0 bytes for 2,097,152
 * requests; ncu counts 128 bytes a request under _op_ldgsts). The bytes
 * cannot give the ideal, so the widest copy, 16 sectors a request, is
 * assumed: 4 sectors a request is no waste. Its 16-byte stores were
 * measured. */
START_TEST(access_cp_async_loads_without_bytes_are_not_taken_for_waste)
{
	struct access_kernel k = {
		.name = "sm80_xmma_gemm", .launches = 32, .measured = 16,
		.ld = { .sectors = 8388608, .requests = 2097152, .bytes_requested = 0 },
		.st = { .sectors = 2097152, .requests = 131072, .bytes_requested = 67108864 },
		.l1_hit_pct = -1, .l2_hit_pct = -1,
	};

	ck_assert(access__bytes_left_out(&k.ld));
	ck_assert(!access__bytes_left_out(&k.st));
	ck_assert_double_eq_tol(access__bytes_asked(&k.ld), -1, 1e-12);
	ck_assert_int_eq(access__word_bytes(&k.ld), 0);
	ck_assert_double_eq_tol(access__sectors_per_request(&k.ld), 4.0, 1e-12);
	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.ld), 16.0, 1e-12);
	ck_assert_int_eq(access__word_bytes(&k.st), 16);
	ck_assert_double_eq_tol(access__ideal_sectors_per_request(&k.st), 16.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_EFFICIENT);
}
END_TEST

/* The same copies 33 floats apart would touch 32 sectors a request: twice
 * what 16-byte copies would, waste even against the widest width. */
START_TEST(access_scattered_cp_async_loads_are_still_waste)
{
	struct access_kernel k = kernel(32 * REQUESTS, 0, 0, 0);

	k.st.requests = 0;
	ck_assert(access__bytes_left_out(&k.ld));
	ck_assert_double_eq_tol(access__overfetch(&k), 2.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_WASTEFUL);
}
END_TEST

START_TEST(access_threshold_decides_the_verdict)
{
	/* stride 2: every other word, 2 bytes moved per byte used */
	struct access_kernel k = kernel(8 * REQUESTS, BYTES_4B, 0, 0);

	k.st.requests = 0;
	ck_assert_double_eq_tol(access__overfetch(&k), 2.0, 1e-12);
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_WASTEFUL);
	ck_assert_int_eq(access__judge(&k, 2.0), ACCESS_EFFICIENT);
}
END_TEST

START_TEST(access_nothing_measured_is_unknown)
{
	struct access_kernel k = kernel(0, 0, 0, 0);

	k.measured = 0;
	ck_assert_int_eq(access__judge(&k, 1.5), ACCESS_UNKNOWN);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("access_efficiency");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, access_strided_gather_touches_32_sectors_per_request_where_4_would_do);
	tcase_add_test(tc, access_contiguous_gather_moves_what_it_uses);
	tcase_add_test(tc, access_ideal_follows_the_access_width);
	tcase_add_test(tc, access_without_requested_bytes_is_judged_against_4_sectors);
	tcase_add_test(tc, access_small_requests_cost_at_least_one_sector);
	tcase_add_test(tc, access_cp_async_loads_without_bytes_are_not_taken_for_waste);
	tcase_add_test(tc, access_scattered_cp_async_loads_are_still_waste);
	tcase_add_test(tc, access_threshold_decides_the_verdict);
	tcase_add_test(tc, access_nothing_measured_is_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
