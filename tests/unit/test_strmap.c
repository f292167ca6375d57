/* test_strmap.c - libprof's string map: what was added is found with its
 * value through growth, keys are counted bytes (a prefix is another key),
 * and the map owns its copies. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "prof/strmap.h"
#include "testutil.h"

static bool find(const struct prof_strmap *m, const char *key, int64_t *value)
{
	size_t len = strlen(key);

	return prof_strmap__find(m, key, len, prof_strmap__hash(key, len), value);
}

static int add(struct prof_strmap *m, const char *key, int64_t value)
{
	size_t len = strlen(key);

	return prof_strmap__add(m, key, len, prof_strmap__hash(key, len), value);
}

START_TEST(strmap_finds_every_key_added_through_growth)
{
	struct prof_strmap m;
	char key[32];
	int64_t v;

	prof_strmap__init(&m);
	ck_assert(!find(&m, "absent", &v));
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "kernel_%d", i);
		ck_assert_int_eq(add(&m, key, i * 3), 0);
	}
	ck_assert_uint_eq(m.used, 5000);
	ck_assert_uint_le(m.used * 2, m.cap);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "kernel_%d", i);
		v = -1;
		ck_assert(find(&m, key, &v));
		ck_assert_int_eq(v, i * 3);
	}
	ck_assert(!find(&m, "kernel_5000", NULL));
	prof_strmap__exit(&m);
	ck_assert_uint_eq(m.cap, 0);
	ck_assert(!find(&m, "kernel_1", NULL));
}
END_TEST

START_TEST(strmap_keys_are_counted_bytes)
{
	struct prof_strmap m;
	const char *text = "gemm_kernel";
	int64_t v = 0;

	prof_strmap__init(&m);
	/* "gemm" out of a longer text, without a NUL after it */
	ck_assert_int_eq(prof_strmap__add(&m, text, 4, prof_strmap__hash(text, 4), 1), 0);
	ck_assert(find(&m, "gemm", &v));
	ck_assert_int_eq(v, 1);
	ck_assert(!find(&m, "gemm_kernel", NULL));
	ck_assert(!find(&m, "gem", NULL));
	ck_assert(prof_strmap__find(&m, text, 4, prof_strmap__hash(text, 4), NULL));
	ck_assert(find(&m, "gemm", NULL));
	/* the empty text is a key like any other */
	ck_assert(!find(&m, "", NULL));
	ck_assert_int_eq(add(&m, "", 9), 0);
	ck_assert(find(&m, "", &v));
	ck_assert_int_eq(v, 9);
	prof_strmap__exit(&m);
}
END_TEST

START_TEST(strmap_owns_copies_of_its_keys)
{
	struct prof_strmap m;
	char key[] = "nvtx:step";
	int64_t v = 0;

	prof_strmap__init(&m);
	ck_assert_int_eq(add(&m, key, 7), 0);
	memset(key, 'x', sizeof key - 1);
	ck_assert(find(&m, "nvtx:step", &v));
	ck_assert_int_eq(v, 7);
	ck_assert(!find(&m, key, NULL));
	prof_strmap__exit(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, strmap_finds_every_key_added_through_growth);
	tcase_add_test(tc, strmap_keys_are_counted_bytes);
	tcase_add_test(tc, strmap_owns_copies_of_its_keys);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
