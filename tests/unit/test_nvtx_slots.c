/* test_nvtx_slots.c - collectors/nvtx_slots.c against NVTX's own
 * implementation: the NVTX v3 of the CUDA toolkit, compiled into this test
 * as into any program. A handler written into an instance's slots, as
 * CUPTI writes its own when it is NVTX's injection, runs until the slots
 * are emptied and not after (the detach after a capture window); an
 * extension's function slot is disabled and its state slots stay. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "collector.h"
#include "testutil.h"

static int pushes;

static int NVTX_API counting_push(const char *message)
{
	(void)message;
	return ++pushes;
}

START_TEST(emptied_slots_silence_the_handler)
{
	const void *(NVTX_API *get)(uint32_t) = NVTX_VERSIONED_IDENTIFIER(nvtxGetExportTable);
	const NvtxExportTableCallbacks *cb;
	NvtxFunctionTable core = NULL;
	unsigned n = 0;

	/* no injection: NVTX makes every slot empty */
	unsetenv("NVTX_INJECTION64_PATH");
	nvtxInitialize(NULL);
	ck_assert_int_eq(nvtxRangePushA("before"), NVTX_NO_PUSH_POP_TRACKING);
	cb = get(NVTX_ETID_CALLBACKS);
	ck_assert_ptr_nonnull(cb);
	ck_assert(cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n));
	ck_assert_uint_ge(n, NVTX_CBID_CORE_RangePushA);
	*core[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)counting_push;

	nvtx_slots__record((void *)get);
	ck_assert_int_eq(nvtxRangePushA("attached"), 1);
	ck_assert_int_eq(pushes, 1);
	nvtx_slots__empty();
	ck_assert_ptr_null(*core[NVTX_CBID_CORE_RangePushA]);
	ck_assert_int_eq(nvtxRangePushA("detached"), NVTX_NO_PUSH_POP_TRACKING);
	ck_assert_int_eq(pushes, 1);
}
END_TEST

START_TEST(extension_functions_disabled_states_kept)
{
	/* a module's state (3: loaded), a function, a disabled slot (1) */
	intptr_t slots[3] = { 3, (intptr_t)counting_push, 1 };
	nvtxExtModuleSegment_t segment = { .segmentId = 0, .slotCount = 3, .functionSlots = slots };
	nvtxExtModuleInfo_t info = { .segmentsCount = 1, .segments = &segment };

	nvtx_slots__record_extension(&info);
	nvtx_slots__empty();
	ck_assert_int_eq(slots[0], 3);
	ck_assert_int_eq(slots[1], 1);
	ck_assert_int_eq(slots[2], 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nvtx_slots");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, emptied_slots_silence_the_handler);
	tcase_add_test(tc, extension_functions_disabled_states_kept);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
