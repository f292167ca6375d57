/* test_array.c - libprof's growable array: it holds what is asked, keeps
 * what it held, and refuses a size that does not fit without touching the
 * array. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "prof/array.h"
#include "prof/error.h"
#include "testutil.h"

START_TEST(array_grow_keeps_elements_and_holds_need)
{
	int64_t *v = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < 1000; i++) {
		ck_assert_int_eq(prof_array__grow(&v, &cap, i + 1, sizeof *v), 0);
		ck_assert_uint_ge(cap, i + 1);
		v[i] = (int64_t)i * 7;
	}
	for (size_t i = 0; i < 1000; i++)
		ck_assert_int_eq(v[i], (int64_t)i * 7);
	free(v);
}
END_TEST

START_TEST(array_grow_leaves_room_alone_when_need_fits)
{
	char *v = NULL;
	size_t cap = 0, before;
	char *p;

	ck_assert_int_eq(prof_array__grow(&v, &cap, 5, 1), 0);
	before = cap;
	p = v;
	ck_assert_int_eq(prof_array__grow(&v, &cap, before, 1), 0);
	ck_assert_ptr_eq(v, p);
	ck_assert_uint_eq(cap, before);
	ck_assert_int_eq(prof_array__grow(&v, &cap, 0, 1), 0);
	ck_assert_uint_eq(cap, before);
	free(v);
}
END_TEST

START_TEST(array_grow_refuses_an_overflowing_size_untouched)
{
	int64_t *v = NULL;
	size_t cap = 0;

	ck_assert_int_eq(prof_array__grow(&v, &cap, 3, sizeof *v), 0);
	v[2] = 42;
	/* need * elem_size past SIZE_MAX, and need itself past what doubling reaches */
	ck_assert_int_eq(prof_array__grow(&v, &cap, SIZE_MAX / 4, sizeof *v), PROF_E_NOMEM);
	ck_assert_int_eq(prof_array__grow(&v, &cap, SIZE_MAX, 1), PROF_E_NOMEM);
	ck_assert_uint_eq(cap, 16);
	ck_assert_int_eq(v[2], 42);
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("array");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, array_grow_keeps_elements_and_holds_need);
	tcase_add_test(tc, array_grow_leaves_room_alone_when_need_fits);
	tcase_add_test(tc, array_grow_refuses_an_overflowing_size_untouched);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
