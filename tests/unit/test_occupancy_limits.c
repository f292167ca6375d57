/* test_occupancy_limits.c - theoretical occupancy and its limiter on the
 * H100's per-SM limits (64 warps, 32 blocks, 64K registers, 228 KiB shared).
 * Expected values are worked out by hand in each test from those limits. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>

#include "analysis/kernel_metrics/occupancy.h"
#include "testutil.h"

static struct occ_gpu h100(void)
{
	struct occ_gpu g;
	ck_assert_int_eq(occ_gpu__defaults(&g, 9, 0), 0);
	return g;
}

START_TEST(occupancy_full_for_256_threads_and_32_registers)
{
	struct occ_gpu g = h100();
	struct occ_launch l = { .threads_per_block = 256, .registers_per_thread = 32 };
	struct occ_result r;

	ck_assert_int_eq(occ__compute(&g, &l, &r), 0);
	/* 32 regs x 32 threads = 1024 per warp; 16K per partition = 16 warps x 4 = 64 */
	ck_assert_double_eq_tol(r.occupancy, 1.0, 1e-12);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_NONE);
}
END_TEST

START_TEST(occupancy_128_registers_limit_to_a_quarter)
{
	struct occ_gpu g = h100();
	struct occ_launch l = { .threads_per_block = 256, .registers_per_thread = 128 };
	struct occ_result r;

	ck_assert_int_eq(occ__compute(&g, &l, &r), 0);
	/* 4096 regs per warp: 4 warps per partition, 16 per SM = 2 blocks of 8 warps */
	ck_assert_int_eq(r.active_blocks, 2);
	ck_assert_double_eq_tol(r.occupancy, 16.0 / 64.0, 1e-12);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_REGISTERS);
}
END_TEST

START_TEST(occupancy_shared_memory_limits_large_tiles)
{
	struct occ_gpu g = h100();
	struct occ_launch l = { .threads_per_block = 128, .registers_per_thread = 32,
				.shared_per_block_bytes = 100 * 1024 };
	struct occ_result r;

	ck_assert_int_eq(occ__compute(&g, &l, &r), 0);
	/* (100 KiB + 1 KiB reserved) per block: 233472 / 103424 = 2 blocks of 4 warps */
	ck_assert_int_eq(r.active_blocks, 2);
	ck_assert_double_eq_tol(r.occupancy, 8.0 / 64.0, 1e-12);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_SHARED);
}
END_TEST

START_TEST(occupancy_tiny_blocks_hit_the_block_slots)
{
	struct occ_gpu g = h100();
	struct occ_launch l = { .threads_per_block = 32, .registers_per_thread = 16 };
	struct occ_result r;

	ck_assert_int_eq(occ__compute(&g, &l, &r), 0);
	/* one warp per block, 32 blocks per SM: 32 of 64 warps */
	ck_assert_double_eq_tol(r.occupancy, 0.5, 1e-12);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_BLOCKS);
}
END_TEST

START_TEST(occupancy_uses_the_recorded_shared_carveout)
{
	struct occ_gpu g = h100();
	struct occ_launch l = { .threads_per_block = 256, .registers_per_thread = 32,
				.shared_per_block_bytes = 15 * 1024, .shared_config_bytes = 32 * 1024 };
	struct occ_result r;

	ck_assert_int_eq(occ__compute(&g, &l, &r), 0);
	/* a 32 KiB carve-out holds two blocks of 16 KiB (15 + 1 reserved) */
	ck_assert_int_eq(r.active_blocks, 2);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_SHARED);
}
END_TEST

START_TEST(occupancy_unknown_architecture_is_refused)
{
	struct occ_gpu g;
	ck_assert_int_lt(occ_gpu__defaults(&g, 4, 2), 0);
	/* a capture's own numbers: none can overflow into a known one */
	ck_assert_int_lt(occ_gpu__defaults(&g, INT_MAX, 0), 0);
	ck_assert_int_lt(occ_gpu__defaults(&g, 9, INT_MAX), 0);
	ck_assert_int_lt(occ_gpu__defaults(&g, -1, 0), 0);
	ck_assert_int_lt(occ_gpu__defaults(&g, 8, 10), 0);
}
END_TEST

START_TEST(occupancy_launches_no_gpu_could_run_do_not_fit)
{
	struct occ_gpu g = h100();
	struct occ_launch huge_block = { .threads_per_block = INT_MAX, .registers_per_thread = 32 };
	struct occ_launch huge_shared = { .threads_per_block = 128, .shared_per_block_bytes = INT64_MAX };
	struct occ_result r;

	/* a capture is outside input: a block of 67M warps and a block asking
	 * for all of memory as shared memory do not fit, and do not overflow */
	ck_assert_int_eq(occ__compute(&g, &huge_block, &r), 0);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_INVALID);
	ck_assert_int_eq(occ__compute(&g, &huge_shared, &r), 0);
	ck_assert_int_eq(r.limiter, OCC_LIMIT_INVALID);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("occupancy");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, occupancy_full_for_256_threads_and_32_registers);
	tcase_add_test(tc, occupancy_128_registers_limit_to_a_quarter);
	tcase_add_test(tc, occupancy_shared_memory_limits_large_tiles);
	tcase_add_test(tc, occupancy_tiny_blocks_hit_the_block_slots);
	tcase_add_test(tc, occupancy_uses_the_recorded_shared_carveout);
	tcase_add_test(tc, occupancy_unknown_architecture_is_refused);
	tcase_add_test(tc, occupancy_launches_no_gpu_could_run_do_not_fit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
