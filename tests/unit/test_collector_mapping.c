/* test_collector_mapping.c - the collector's pure conversions: CUPTI's
 * numbering to the store's, kernel short names, the PM samples a gap
 * between samples lost, a PM sampler's typeId, and --trace parsing.
 *
 * The collector is only built where CUPTI exists, so its CUPTI-free files
 * are compiled into this test directly. CUPTI's numbers are spelled out from
 * cupti_activity.h (CUDA 13.0) because CI has no CUDA headers. */
#include <check.h>
#include <stdlib.h>

#include "../../collectors/mapping.c"
#include "prof/trace_opts.h"
#include "testutil.h"

/* CUpti_ActivityMemoryKind */
enum { CUPTI_MEM_UNKNOWN = 0, CUPTI_MEM_PAGEABLE = 1, CUPTI_MEM_PINNED = 2,
       CUPTI_MEM_DEVICE = 3, CUPTI_MEM_ARRAY = 4, CUPTI_MEM_MANAGED = 5,
       CUPTI_MEM_DEVICE_STATIC = 6, CUPTI_MEM_MANAGED_STATIC = 7 };

START_TEST(collector_mem_kind_maps_each_cupti_kind_to_the_nsys_kind)
{
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_PAGEABLE), PROF_MEM_PAGEABLE);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_PINNED), PROF_MEM_PINNED);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_DEVICE), PROF_MEM_DEVICE);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_ARRAY), PROF_MEM_ARRAY);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_MANAGED), PROF_MEM_MANAGED);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_DEVICE_STATIC), PROF_MEM_DEVICE_STATIC);
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_MANAGED_STATIC), PROF_MEM_MANAGED_STATIC);
}
END_TEST

START_TEST(collector_mem_kind_unknown_and_future_kinds_map_to_unknown)
{
	ck_assert_int_eq(mapping__mem_kind(CUPTI_MEM_UNKNOWN), PROF_MEM_UNKNOWN);
	ck_assert_int_eq(mapping__mem_kind(8), PROF_MEM_UNKNOWN);
}
END_TEST

START_TEST(collector_copy_kind_keeps_directions_and_drops_unknown_numbers)
{
	/* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP. */
	ck_assert_int_eq(mapping__copy_kind(1), PROF_COPY_HTOD);
	ck_assert_int_eq(mapping__copy_kind(2), PROF_COPY_DTOH);
	ck_assert_int_eq(mapping__copy_kind(8), PROF_COPY_DTOD);
	ck_assert_int_eq(mapping__copy_kind(10), PROF_COPY_PTOP);
	ck_assert_int_eq(mapping__copy_kind(11), PROF_COPY_UNKNOWN);
}
END_TEST

START_TEST(collector_um_copy_kind_maps_migrations_only)
{
	/* CUpti_ActivityUnifiedMemoryCounterKind: 1 HtoD, 2 DtoH bytes, 3 CPU
	 * fault, 4 GPU fault, 5 thrashing, 6 throttling, 7 remote map, 8 DtoD. */
	ck_assert_int_eq(mapping__um_copy_kind(1), PROF_COPY_UVM_HTOD);
	ck_assert_int_eq(mapping__um_copy_kind(2), PROF_COPY_UVM_DTOH);
	ck_assert_int_eq(mapping__um_copy_kind(8), PROF_COPY_UVM_DTOD);
	for (uint32_t k = 3; k <= 7; k++)
		ck_assert_int_eq(mapping__um_copy_kind(k), -1);
	ck_assert_int_eq(mapping__um_copy_kind(0), -1);
	ck_assert_int_eq(mapping__um_copy_kind(9), -1);
}
END_TEST

START_TEST(collector_memory_operation_maps_allocation_and_release)
{
	/* CUpti_ActivityMemoryOperationType: 1 allocation, 2 release. */
	ck_assert_int_eq(mapping__memory_operation(1), 0);
	ck_assert_int_eq(mapping__memory_operation(2), 1);
	ck_assert_int_eq(mapping__memory_operation(0), -1);
}
END_TEST

static const char *short_name(const char *demangled)
{
	static char buf[256];

	mapping__short_name(demangled, buf, sizeof(buf));
	return buf;
}

START_TEST(collector_short_name_drops_return_type_scope_templates_and_parameters)
{
	ck_assert_str_eq(short_name("void ns::inner::saxpy<float, 4>(float*, float const*, int)"),
			 "saxpy");
}
END_TEST

START_TEST(collector_short_name_keeps_an_extern_c_name)
{
	ck_assert_str_eq(short_name("empty_kernel"), "empty_kernel");
}
END_TEST

START_TEST(collector_short_name_ignores_scopes_inside_template_arguments)
{
	ck_assert_str_eq(short_name("void at::native::vectorized_elementwise_kernel<4, "
				    "at::native::FillFunctor<float>, std::array<char*, 1ul> >"
				    "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
			 "vectorized_elementwise_kernel");
}
END_TEST

START_TEST(collector_short_name_truncates_to_the_buffer)
{
	char buf[4];

	mapping__short_name("void kernel_name(int)", buf, sizeof(buf));
	ck_assert_str_eq(buf, "ker");
}
END_TEST

START_TEST(collector_trace_empty_list_selects_the_default)
{
	ck_assert_int_eq(prof_trace_opts__parse(NULL, NULL), PROF_TRACE_DEFAULT);
	ck_assert_int_eq(prof_trace_opts__parse("", NULL), PROF_TRACE_DEFAULT);
	ck_assert_int_eq(prof_trace_opts__parse("all", NULL), PROF_TRACE_ALL);
}
END_TEST

START_TEST(collector_trace_api_all_includes_the_selected_calls)
{
	ck_assert_int_eq(prof_trace_opts__parse("api-all", NULL), PROF_TRACE_API | PROF_TRACE_API_ALL);
	ck_assert_int_eq(prof_trace_opts__parse("api", NULL) & PROF_TRACE_API_ALL, 0);
}
END_TEST

/* Unified memory is recorded by default and can be left out by naming the
 * other groups (its cost falls on programs whose managed memory moves). */
START_TEST(collector_trace_um_is_a_default_group_of_its_own)
{
	ck_assert_int_eq(prof_trace_opts__parse("um", NULL), PROF_TRACE_UM);
	ck_assert(prof_trace_opts__parse(NULL, NULL) & PROF_TRACE_UM);
	ck_assert(prof_trace_opts__parse("all", NULL) & PROF_TRACE_UM);
	ck_assert_int_eq(prof_trace_opts__parse("cuda,nvtx,memory,api", NULL) & PROF_TRACE_UM, 0);
}
END_TEST

START_TEST(collector_trace_list_selects_only_the_named_groups)
{
	ck_assert_int_eq(prof_trace_opts__parse("cuda,api", NULL), PROF_TRACE_CUDA | PROF_TRACE_API);
	ck_assert_int_eq(prof_trace_opts__parse("nvtx", NULL), PROF_TRACE_NVTX);
}
END_TEST

/* `cuda` is its four parts, each a word of its own (what each costs is
 * measured alone), and `graphs` (a graph's launch whole) is no default. */
START_TEST(collector_trace_cuda_is_its_four_parts)
{
	ck_assert_int_eq(prof_trace_opts__parse("kernels,copies,sync,overhead", NULL), PROF_TRACE_CUDA);
	ck_assert_int_eq(prof_trace_opts__parse("kernels", NULL), PROF_TRACE_KERNELS);
	ck_assert_int_eq(prof_trace_opts__parse("sync", NULL) & PROF_TRACE_KERNELS, 0);
	ck_assert_int_eq(prof_trace_opts__parse("kernels,graphs", NULL),
			 PROF_TRACE_KERNELS | PROF_TRACE_GRAPH_LEVEL);
	ck_assert_int_eq(prof_trace_opts__parse(NULL, NULL) & PROF_TRACE_GRAPH_LEVEL, 0);
	ck_assert_int_eq(prof_trace_opts__parse("all", NULL) & PROF_TRACE_GRAPH_LEVEL, 0);
	ck_assert_int_eq(prof_trace_opts__parse(PROF_TRACE_DEFAULT_LIST, NULL), PROF_TRACE_DEFAULT);
}
END_TEST

START_TEST(collector_trace_unknown_word_is_refused_with_its_offset)
{
	size_t bad_at = 0;

	ck_assert_int_eq(prof_trace_opts__parse("cuda,bogus", &bad_at), -1);
	ck_assert_uint_eq(bad_at, 5);
	ck_assert_int_eq(prof_trace_opts__parse("cud", NULL), -1);
}
END_TEST

/* The H100 fixtures' periods at 10 kHz run 99,969 to 100,034 ns
 * (tests/data/gpu_metrics): such jitter loses nothing; a gap of k whole
 * intervals lost k - 1 samples. */
START_TEST(collector_samples_dropped_counts_the_intervals_a_gap_skips)
{
	const uint64_t t = 1795443872566956229ull, iv = 100000;

	ck_assert_int_eq(mapping__samples_dropped(0, t, iv), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 100034, iv), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 99969, iv), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 149999, iv), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 150000, iv), 1);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 199990, iv), 1);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 1000002, iv), 9);
	/* 1.5 s lost at 100 kHz, a buffer's worth */
	ck_assert_int_eq(mapping__samples_dropped(t, t + 1500000000ull, 10000), 149999);
}
END_TEST

START_TEST(collector_samples_dropped_is_zero_for_time_that_does_not_move_on)
{
	const uint64_t t = 1795443872566956229ull;

	ck_assert_int_eq(mapping__samples_dropped(t, t, 100000), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t - 500000, 100000), 0);
	ck_assert_int_eq(mapping__samples_dropped(t, t + 500000, 0), 0);
	ck_assert_int_eq(mapping__samples_dropped(1, UINT64_MAX, 1), INT64_MAX);
}
END_TEST

/* A device's sampler opened again (a context made after its last one went)
 * is a sampler of its own, whose device readers still find in the low 8
 * bits (typeId & 0xFF). */
START_TEST(collector_sampler_type_id_is_new_each_time_a_device_is_opened)
{
	ck_assert_int_eq(mapping__sampler_type_id(0, 0), 0);
	ck_assert_int_eq(mapping__sampler_type_id(3, 0), 3);
	ck_assert_int_ne(mapping__sampler_type_id(3, 1), mapping__sampler_type_id(3, 0));
	ck_assert_int_ne(mapping__sampler_type_id(3, 2), mapping__sampler_type_id(3, 1));
	ck_assert_int_eq(mapping__sampler_type_id(3, 1) & 0xFF, 3);
	ck_assert_int_eq(mapping__sampler_type_id(63, 1000) & 0xFF, 63);
	ck_assert_int_ne(mapping__sampler_type_id(1, 1), mapping__sampler_type_id(0, 1));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("collector_mapping");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, collector_mem_kind_maps_each_cupti_kind_to_the_nsys_kind);
	tcase_add_test(tc, collector_mem_kind_unknown_and_future_kinds_map_to_unknown);
	tcase_add_test(tc, collector_copy_kind_keeps_directions_and_drops_unknown_numbers);
	tcase_add_test(tc, collector_um_copy_kind_maps_migrations_only);
	tcase_add_test(tc, collector_memory_operation_maps_allocation_and_release);
	tcase_add_test(tc, collector_short_name_drops_return_type_scope_templates_and_parameters);
	tcase_add_test(tc, collector_short_name_keeps_an_extern_c_name);
	tcase_add_test(tc, collector_short_name_ignores_scopes_inside_template_arguments);
	tcase_add_test(tc, collector_short_name_truncates_to_the_buffer);
	tcase_add_test(tc, collector_trace_empty_list_selects_the_default);
	tcase_add_test(tc, collector_trace_api_all_includes_the_selected_calls);
	tcase_add_test(tc, collector_trace_um_is_a_default_group_of_its_own);
	tcase_add_test(tc, collector_trace_list_selects_only_the_named_groups);
	tcase_add_test(tc, collector_trace_cuda_is_its_four_parts);
	tcase_add_test(tc, collector_trace_unknown_word_is_refused_with_its_offset);
	tcase_add_test(tc, collector_samples_dropped_counts_the_intervals_a_gap_skips);
	tcase_add_test(tc, collector_samples_dropped_is_zero_for_time_that_does_not_move_on);
	tcase_add_test(tc, collector_sampler_type_id_is_new_each_time_a_device_is_opened);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
