/* test_api_names.c - an API call's name without CUPTI's version suffix,
 * the same in C (sum_api_name_len) and in SQL (SUM_API_NAME), so that what
 * a reader groups by is what it shows. Names from the real captures in
 * tests/data (read out with the sqlite3 CLI) and edge cases. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "prof/store.h"
#include "model/names.h"
#include "testutil.h"

static const char *const names[] = {
	/* from torch_train.sqlite and the nsys exports */
	"cudaMemcpy_v3020", "cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
	"cudaGetDeviceProperties_v12000", "cuDeviceTotalMem_v2", "cuLibraryLoadData",
	"cudaMemcpy", "cuModuleGetLoadingMode",
	/* per-thread default stream entry points keep their suffix */
	"cudaLaunchKernel_ptsz_v7000", "cudaMemcpyAsync_ptsz",
	/* not a version suffix */
	"f_v", "_v2", "x_v12a", "a_v2", "v2", "", "cudaFoo_v3020_v2",
};

static const char *c_form(const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.*s", (int)sum_api_name_len(name), name);
	return buf;
}

START_TEST(api_name_drops_only_the_version_suffix)
{
	char buf[64];

	ck_assert_str_eq(c_form("cudaMemcpy_v3020", buf, sizeof buf), "cudaMemcpy");
	ck_assert_str_eq(c_form("cuDeviceTotalMem_v2", buf, sizeof buf), "cuDeviceTotalMem");
	ck_assert_str_eq(c_form("cudaLaunchKernel_ptsz_v7000", buf, sizeof buf), "cudaLaunchKernel_ptsz");
	ck_assert_str_eq(c_form("cudaMemcpy", buf, sizeof buf), "cudaMemcpy");
	ck_assert_str_eq(c_form("x_v12a", buf, sizeof buf), "x_v12a");
	ck_assert_str_eq(c_form("_v2", buf, sizeof buf), "_v2");
	ck_assert_str_eq(c_form("cudaFoo_v3020_v2", buf, sizeof buf), "cudaFoo_v3020");
}
END_TEST

START_TEST(api_name_sql_agrees_with_c)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(testutil_data_path("gpu_work.sqlite"), &s, &err) == 0, "%s",
		      err.msg);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct prof_cursor *c = NULL;
		char buf[64];

		ck_assert_int_eq(prof_cursor__open(s, "SELECT " SUM_API_NAME("CAST(?1 AS TEXT)"), &c,
						   &err), 0);
		ck_assert_int_eq(prof_cursor__bind_text(c, 1, names[i]), 0);
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		ck_assert_msg(strcmp(prof_cursor__text(c, 0), c_form(names[i], buf, sizeof buf)) == 0,
			      "'%s': SQL '%s', C '%s'", names[i], prof_cursor__text(c, 0), buf);
		prof_cursor__close(c);
	}
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("api_names");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, api_name_drops_only_the_version_suffix);
	tcase_add_test(tc, api_name_sql_agrees_with_c);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
