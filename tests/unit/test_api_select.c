/* test_api_select.c - the API calls `--trace=api` keeps (prof/api_select.h):
 * every call a rule or report queries, in every version CUPTI names, from
 * real captures; and none of the queries frameworks make around each op. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "prof/api_select.h"
#include "prof/store.h"
#include "testutil.h"

/* The families the rules query (report/analysis: launches, memsets,
 * synchronisation, allocation) and the copies the transfer reports join: a
 * statement of what the analysis reads, kept apart from the list under test. */
static const char *const read_by_rules[] = {
	"cudaLaunchKernel", "cudaLaunchKernelExC", "__cudaLaunchKernel", "cuLaunchKernel",
	"cuLaunchKernelEx", "cudaMemsetAsync", "cudaMemset", "cuMemsetD8", "cuMemsetD32Async",
	"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
	"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cudaMalloc",
	"cudaMallocHost", "cudaMallocAsync", "cudaFree", "cudaFreeHost", "cudaFreeAsync",
	"cudaHostAlloc", "cuMemAlloc", "cuMemAllocAsync", "cuMemFree", "cuMemFreeAsync",
	"cuMemHostAlloc", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cuMemcpyHtoD",
	"cuMemcpyDtoHAsync", "cudaEventRecord", "cudaStreamWaitEvent", "cudaGraphLaunch",
	"cuGraphLaunch",
};

/* Device queries, error checks, attributes: most of a framework's calls. */
static const char *const not_read[] = {
	"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaStreamIsCapturing_v10000",
	"cudaDeviceGetAttribute_v5000", "cudaPeekAtLastError_v3020", "cudaFuncGetAttributes_v3020",
	"cudaOccupancyMaxActiveClusters_v11070", "cuCtxGetCurrent", "cuKernelGetFunction",
	"cuDevicePrimaryCtxRetain", "cudaStreamQuery_v3020", "cudaEventQuery_v3020",
	"cudaGetDriverEntryPointByVersion_v12050", "cudaMallocator", "cudaFreedom",
};

START_TEST(api_select_keeps_every_family_the_rules_read_in_every_version)
{
	static const char *const suffixes[] = { "", "_v3020", "_ptsz_v7000", "_v2", "_v13000" };
	char name[128];

	for (size_t i = 0; i < sizeof read_by_rules / sizeof read_by_rules[0]; i++)
		for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
			snprintf(name, sizeof name, "%s%s", read_by_rules[i], suffixes[k]);
			ck_assert_msg(prof_api_select__wanted(name), "%s not selected", name);
		}
}
END_TEST

START_TEST(api_select_leaves_out_queries_and_look_alike_names)
{
	for (size_t i = 0; i < sizeof not_read / sizeof not_read[0]; i++)
		ck_assert_msg(!prof_api_select__wanted(not_read[i]), "%s selected", not_read[i]);
	ck_assert(!prof_api_select__wanted(NULL));
	ck_assert(!prof_api_select__wanted(""));
}
END_TEST

/* On a real PyTorch capture: every call the rules' families cover is kept,
 * and the calls left out are most of the rows. */
START_TEST(api_select_on_a_pytorch_capture)
{
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err;
	long long kept = 0, all = 0;

	ck_assert_int_eq(prof_store__open(testutil_data_path("torch_train.sqlite"), &s, &err), 0);
	ck_assert_int_eq(prof_cursor__open(s,
					   "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
					   " JOIN StringIds s ON s.id = r.nameId GROUP BY s.value",
					   &c, &err),
			 0);
	while (prof_cursor__next(c, &err) == 1) {
		const char *name = prof_cursor__text(c, 0);
		long long n = prof_cursor__int64(c, 1);
		bool family = false;

		for (size_t i = 0; i < sizeof read_by_rules / sizeof read_by_rules[0]; i++) {
			size_t len = strlen(read_by_rules[i]);

			if (!strncmp(name, read_by_rules[i], len) && name[len] == '_')
				family = true;
		}
		if (family)
			ck_assert_msg(prof_api_select__wanted(name), "%s dropped", name);
		all += n;
		kept += prof_api_select__wanted(name) ? n : 0;
	}
	prof_cursor__close(c);
	prof_store__close(s);
	ck_assert_int_gt(kept, 0);
	/* cudaGetDevice alone is most of this program's calls */
	ck_assert_msg(kept * 4 < all, "kept %lld of %lld runtime calls", kept, all);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api_select");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, api_select_keeps_every_family_the_rules_read_in_every_version);
	tcase_add_test(tc, api_select_leaves_out_queries_and_look_alike_names);
	tcase_add_test(tc, api_select_on_a_pytorch_capture);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
