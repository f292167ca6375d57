/* test_symbol_shorten.c - the short forms text tables show for kernel names
 * (sink/symbol.h), on names taken from real captures with the sqlite3 CLI:
 * tests/data/torch_train.sqlite (PyTorch, cuBLAS, CUTLASS) and the Nsight
 * Systems export of CloverLeaf (tests/data/nsys: an older demangler's
 * lambdas); and, over every kernel name of real captures, that the forms
 * shown in one table tell the names apart. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "prof/tables.h"
#include "sink/symbol.h"
#include "testutil.h"

#define TORCH_CLAMP                                                                               \
	"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"     \
	"launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::"       \
	"detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::" \
	"{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::"       \
	"launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::"       \
	"detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::" \
	"{lambda(float)#1}, std::array<char*, 2ul>)"
#define TORCH_FILL                                                                                \
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "         \
	"std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
#define TORCH_THRESHOLD                                                                           \
	"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, " \
	"float, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::"                \
	"TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, std::array<char*, 3ul> >"     \
	"(int, at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::"   \
	"threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, "       \
	"float)#1}>, std::array<char*, 3ul>)"
#define TORCH_REDUCE(A, B)                                                                        \
	"void at::native::reduce_kernel<" A ", " B ", at::native::ReduceOp<float, at::native::"      \
	"func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::"        \
	"TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::"     \
	"ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "   \
	"float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, "  \
	"4, 4>)"
#define TORCH_SOFTMAX                                                                             \
	"void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>"      \
	"(float*, float const*, int, int, int, bool const*, int, bool)"
#define TORCH_SPLITK                                                                              \
	"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, float, " \
	"float, float, true, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, " \
	"float const*, float*, float*, float const*, float const*, float const*, float const*, "     \
	"float*, void*, long, float*, int*, float*, float*, float const*, float const*, float "      \
	"const*, float const*, float const*)"
#define CUBLAS_GEMM                                                                               \
	"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_"  \
	"alignc4_execute_kernel__5x_cublas"
#define CUTLASS(CFG) "void cutlass::Kernel2<" CFG ">(" CFG "::Params)"
#define CLOVER_CHUNK(N)                                                                           \
	"void clover::par_ranged2d_kernel<generate_chunk(int, global_variables &)::[lambda("        \
	"unsigned long, unsigned long) (instance " N ")]>(clover::Range2d, T1)"
#define CLOVER_FIELD(N)                                                                           \
	"void clover::par_ranged1d_kernel<build_field(global_variables &)::[lambda(int) (instance " \
	N ")]>(clover::Range1d, T1)"

static char out[1024];

static const char *brief(const char *name)
{
	rpt_symbol__shorten(name, RPT_SYMBOL_SHORT, out, sizeof out);
	return out;
}

static const char *with_args(const char *name)
{
	rpt_symbol__shorten(name, RPT_SYMBOL_ARGS, out, sizeof out);
	return out;
}

static const char *shown(struct rpt_symbols *t, const char *name)
{
	rpt_symbols__show(t, name, out, sizeof out);
	return out;
}

START_TEST(symbol_keeps_the_qualified_name_and_elides_template_arguments_and_parameters)
{
	ck_assert_str_eq(brief(TORCH_FILL), "at::native::vectorized_elementwise_kernel<...>");
	ck_assert_str_eq(brief(TORCH_CLAMP), "at::native::vectorized_elementwise_kernel<...>");
	ck_assert_str_eq(brief(TORCH_SPLITK), "cublasLt::splitKreduce_kernel<...>");
	ck_assert_str_eq(brief(CUTLASS("cutlass_80_simt_sgemm_64x64_8x5_tn_align1")),
			 "cutlass::Kernel2<...>");
}
END_TEST

START_TEST(symbol_anonymous_namespace_is_part_of_the_name)
{
	ck_assert_str_eq(brief(TORCH_SOFTMAX), "(anonymous namespace)::softmax_warp_forward<...>");
}
END_TEST

START_TEST(symbol_argument_form_keeps_the_functions_own_arguments_in_short)
{
	ck_assert_str_eq(with_args(TORCH_FILL),
			 "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>, "
			 "std::array<...>>");
	ck_assert_str_eq(with_args(TORCH_REDUCE("256", "2")),
			 "at::native::reduce_kernel<256, 2, at::native::ReduceOp<...>>");
	ck_assert_str_eq(with_args(CUTLASS("cutlass_80_simt_sgemm_64x64_8x5_tn_align1")),
			 "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>");
	/* an older demangler's lambda keeps its name, the function's parameters go */
	ck_assert_str_eq(with_args(CLOVER_FIELD("3")),
			 "clover::par_ranged1d_kernel<build_field(...)::[lambda(int) (instance 3)]>");
}
END_TEST

START_TEST(symbol_names_without_templates_or_parameters_are_kept)
{
	ck_assert_str_eq(brief(CUBLAS_GEMM), CUBLAS_GEMM);
	ck_assert_str_eq(brief("[CUDA memcpy Host-to-Device]"), "[CUDA memcpy Host-to-Device]");
	ck_assert_str_eq(brief("saxpy"), "saxpy");
	ck_assert_str_eq(brief(""), "");
	ck_assert_str_eq(brief(NULL), "");
}
END_TEST

START_TEST(symbol_text_after_the_declaration_is_kept)
{
	/* diagnose's offender lines: a kernel name, then what the rule says */
	ck_assert_str_eq(brief(CUTLASS("cutlass_80_simt_sgemm_128x128_8x4_tn_align1")
			       ": 12% (128 threads, 202 regs, 32768 B shared; limited by registers)"),
			 "cutlass::Kernel2<...>: 12% (128 threads, 202 regs, 32768 B shared; "
			 "limited by registers)");
	ck_assert_str_eq(brief(CUBLAS_GEMM ": 38% (64 threads, 80 regs)"),
			 CUBLAS_GEMM ": 38% (64 threads, 80 regs)");
}
END_TEST

START_TEST(symbol_length_is_returned_whole_and_output_cut_to_the_buffer)
{
	char small[8];
	size_t len = rpt_symbol__shorten(TORCH_FILL, RPT_SYMBOL_SHORT, small, sizeof small);

	ck_assert_uint_eq(len, strlen("at::native::vectorized_elementwise_kernel<...>"));
	ck_assert_str_eq(small, "at::nat");
	ck_assert_uint_eq(rpt_symbol__shorten(TORCH_FILL, RPT_SYMBOL_SHORT, NULL, 0), len);
}
END_TEST

START_TEST(symbol_unbalanced_names_end_inside_their_group)
{
	ck_assert_str_eq(brief("void k<4, std::array<int"), "k<...");
	ck_assert_str_eq(with_args("void k<4, std::array<int"), "k<4, std::array<......");
	ck_assert_str_eq(brief("void k>>>(int"), "k>>>");
	ck_assert_str_eq(brief("(x)"), "(x)");
}
END_TEST

START_TEST(symbols_tell_apart_by_template_arguments_when_short)
{
	struct rpt_symbols *t = rpt_symbols__new();

	ck_assert_int_eq(rpt_symbols__add(t, TORCH_CLAMP), 0);
	ck_assert_int_eq(rpt_symbols__add(t, TORCH_FILL), 0);
	ck_assert_int_eq(rpt_symbols__add(t, TORCH_THRESHOLD), 0);
	ck_assert_int_eq(rpt_symbols__add(t, TORCH_REDUCE("256", "2")), 0);
	ck_assert_int_eq(rpt_symbols__add(t, TORCH_REDUCE("128", "4")), 0);
	ck_assert_int_eq(rpt_symbols__add(t, TORCH_SOFTMAX), 0);
	/* the clamp's lambda makes its argument form too long: the other two
	 * show theirs, so its short form is left to it alone */
	ck_assert_str_eq(shown(t, TORCH_CLAMP), "at::native::vectorized_elementwise_kernel<...>");
	ck_assert_str_eq(shown(t, TORCH_FILL),
			 "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>, "
			 "std::array<...>>");
	ck_assert_str_eq(shown(t, TORCH_THRESHOLD),
			 "at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<...>, "
			 "std::array<...>>");
	ck_assert_str_eq(shown(t, TORCH_REDUCE("128", "4")),
			 "at::native::reduce_kernel<128, 4, at::native::ReduceOp<...>>");
	ck_assert_str_eq(shown(t, TORCH_SOFTMAX), "(anonymous namespace)::softmax_warp_forward<...>");
	/* the same name shows the same way again */
	ck_assert_str_eq(shown(t, TORCH_CLAMP), "at::native::vectorized_elementwise_kernel<...>");
	rpt_symbols__delete(t);
}
END_TEST

START_TEST(symbols_number_names_whose_arguments_do_not_tell_them_apart)
{
	struct rpt_symbols *t = rpt_symbols__new();

	rpt_symbols__add(t, CLOVER_CHUNK("1"));
	rpt_symbols__add(t, CLOVER_CHUNK("2"));
	ck_assert_str_eq(shown(t, CLOVER_CHUNK("2")), "clover::par_ranged2d_kernel<...>#2");
	ck_assert_str_eq(shown(t, CLOVER_CHUNK("1")), "clover::par_ranged2d_kernel<...>#1");
	rpt_symbols__delete(t);
}
END_TEST

START_TEST(symbols_a_clash_found_after_showing_numbers_the_newcomer_from_2)
{
	struct rpt_symbols *t = rpt_symbols__new();

	ck_assert_str_eq(shown(t, CLOVER_CHUNK("1")), "clover::par_ranged2d_kernel<...>");
	ck_assert_str_eq(shown(t, CLOVER_CHUNK("2")), "clover::par_ranged2d_kernel<...>#2");
	ck_assert_str_eq(shown(t, CLOVER_CHUNK("1")), "clover::par_ranged2d_kernel<...>");
	rpt_symbols__delete(t);
}
END_TEST

START_TEST(symbols_keep_each_offenders_own_text)
{
	struct rpt_symbols *t = rpt_symbols__new();
	const char *a = CUTLASS("cutlass_80_simt_sgemm_128x128_8x4_tn_align1") ": 12% (128 threads)";
	const char *b = CUTLASS("cutlass_80_simt_sgemm_128x64_8x5_nn_align1") ": 25% (128 threads)";

	rpt_symbols__add(t, a);
	rpt_symbols__add(t, b);
	ck_assert_str_eq(shown(t, a),
			 "cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_tn_align1>: 12% (128 threads)");
	ck_assert_str_eq(shown(t, b),
			 "cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>: 25% (128 threads)");
	rpt_symbols__delete(t);
}
END_TEST

/* Every kernel name of a real capture, as one table would show them all:
 * different names never show the same way, and no form is longer than
 * the name. */
static void check_capture_names(const char *file)
{
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	struct rpt_symbols *t = rpt_symbols__new();
	char **names = NULL, **forms;
	size_t n = 0;

	ck_assert_msg(prof_store__open(testutil_data_path(file), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT DISTINCT v.value FROM " PROF_T_KERNEL " k JOIN "
					   PROF_T_STRINGS " v ON v.id = coalesce(k.demangledName, "
					   "k.shortName)", &c, &err), 0);
	while (prof_cursor__next(c, &err) > 0) {
		names = realloc(names, (n + 1) * sizeof *names);
		names[n] = strdup(prof_cursor__text(c, 0));
		ck_assert_int_eq(rpt_symbols__add(t, names[n]), 0);
		n++;
	}
	ck_assert_msg(n > 1, "%s: kernel names", file);
	forms = calloc(n, sizeof *forms);
	for (size_t i = 0; i < n; i++) {
		forms[i] = strdup(shown(t, names[i]));
		ck_assert_msg(strlen(forms[i]) <= strlen(names[i]), "%s longer than %s", forms[i],
			      names[i]);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(strcmp(forms[i], forms[j]) != 0, "%s: '%s' and '%s' both show as '%s'",
				      file, names[i], names[j], forms[i]);
	}
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		free(forms[i]);
	}
	free(names);
	free(forms);
	rpt_symbols__delete(t);
	prof_cursor__close(c);
	prof_store__close(s);
}

START_TEST(symbols_of_real_captures_are_unique_in_a_table)
{
	check_capture_names("torch_train.sqlite");
	check_capture_names("transformer_naive.sqlite");
	check_capture_names("nsys/cloverleaf-cuda.sqlite");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("symbol_shorten");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, symbol_keeps_the_qualified_name_and_elides_template_arguments_and_parameters);
	tcase_add_test(tc, symbol_anonymous_namespace_is_part_of_the_name);
	tcase_add_test(tc, symbol_argument_form_keeps_the_functions_own_arguments_in_short);
	tcase_add_test(tc, symbol_names_without_templates_or_parameters_are_kept);
	tcase_add_test(tc, symbol_text_after_the_declaration_is_kept);
	tcase_add_test(tc, symbol_length_is_returned_whole_and_output_cut_to_the_buffer);
	tcase_add_test(tc, symbol_unbalanced_names_end_inside_their_group);
	tcase_add_test(tc, symbols_tell_apart_by_template_arguments_when_short);
	tcase_add_test(tc, symbols_number_names_whose_arguments_do_not_tell_them_apart);
	tcase_add_test(tc, symbols_a_clash_found_after_showing_numbers_the_newcomer_from_2);
	tcase_add_test(tc, symbols_keep_each_offenders_own_text);
	tcase_add_test(tc, symbols_of_real_captures_are_unique_in_a_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
