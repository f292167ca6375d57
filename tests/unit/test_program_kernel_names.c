/* test_program_kernel_names.c - what the program's model reads from the
 * kernel names of the whole capture (one pass over the kernels, each name
 * looked up once) is what the GROUP BY statement over every kernel name
 * gives: the FP32 GEMMs' time to the nanosecond and the frameworks told by
 * name (NCCL's kernels, ATen's, Inductor's). On real captures with FP32
 * GEMMs, NCCL, PyTorch eager and compiled, JAX and nsys exports; a
 * foreign file's name that is no id takes the statement's way. The
 * statement, run beside, says what is right. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/program.h"
#include "model/sums.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	"ddp/ddp2_even.sqlite",	      "corpus/hf_gpt2_train.sqlite",
	"corpus/jax_jit_mlp.sqlite",	"corpus/graph_replay.sqlite", "nsys/cloverleaf-cuda.sqlite",
	"python/py_hf_gpt2_train.sqlite", "gpu_metrics/torch_gemm_bf16_fp32.sqlite",
	"rollout_naive.sqlite",		"hash_embedding_naive.sqlite",
};

/* What the statement says: the FP32 GEMMs' time and whether some name
 * starts with each prefix. */
struct said {
	int64_t fp32_gemm_ns;
	bool nccl, aten;
};

static struct said by_statement(struct prof_store *s)
{
	static const char sql[] =
		"SELECT (SELECT value FROM " PROF_T_STRINGS " WHERE id = k.name), k.t FROM (SELECT "
		PROF_SQL_KERNEL_NAME_ID("") " AS name, " SUM_TOTAL_SATURATED("CASE WHEN end >= start THEN end - start END")
		" AS t FROM " PROF_T_KERNEL " GROUP BY 1) k";
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct said said = { 0 };

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	while (prof_cursor__next(c, &err) == 1) {
		const char *name = prof_cursor__text(c, 0);

		if (!name)
			continue;
		if (prog_kernel__is_fp32_gemm(name))
			said.fp32_gemm_ns = prof_add_saturated(said.fp32_gemm_ns, prof_cursor__int64(c, 1));
		said.nccl = said.nccl || !strncmp(name, "ncclDevKernel", 13) || !strncmp(name, "ncclKernel", 10);
		said.aten = said.aten || strstr(name, "at::native::") != NULL;
	}
	prof_cursor__close(c);
	return said;
}

/* The model's kernel names against the statement's; the FP32 GEMMs' time. */
static int64_t check(const char *path, const char *capture)
{
	struct prof_error err = { 0 };
	struct sum_window w = { .start_ns = INT64_MIN, .end_ns = INT64_MAX, .host_end_ns = INT64_MAX };
	struct prog_model m;
	struct prof_store *s;
	struct said said;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(prog_model__read_gpu(s, &w, false, &m, &err) == 0, "%s: %s", capture, err.msg);
	said = by_statement(s);
	ck_assert_msg(m.fp32_gemm_ns == said.fp32_gemm_ns, "%s: FP32 GEMMs %lld ns, SQL %lld", capture,
		      (long long)m.fp32_gemm_ns, (long long)said.fp32_gemm_ns);
	ck_assert_msg(m.framework[PROG_NCCL] == said.nccl, "%s: NCCL %d, SQL %d", capture, m.framework[PROG_NCCL],
		      said.nccl);
	/* ATen's kernels are PyTorch's */
	ck_assert_msg(!said.aten || m.framework[PROG_PYTORCH], "%s: ATen's kernels, no PyTorch", capture);
	prof_store__close(s);
	return said.fp32_gemm_ns + said.nccl + said.aten;
}

START_TEST(names_as_the_statement_groups_them)
{
	int64_t fp32 = 0;
	int nccl = 0, with_fp32 = 0;

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct prof_error err = { 0 };
		struct prof_store *s;
		struct said said;

		ck_assert_msg(prof_store__open(testutil_data_path(captures[k]), &s, &err) == 0, "%s", err.msg);
		said = by_statement(s);
		prof_store__close(s);
		fp32 += said.fp32_gemm_ns;
		with_fp32 += said.fp32_gemm_ns > 0;
		nccl += said.nccl;
		check(testutil_data_path(captures[k]), captures[k]);
	}
	/* FP32 GEMMs and NCCL were there to find, not only their absence */
	ck_assert_int_ge(with_fp32, 2);
	ck_assert_int_gt(fp32, 1000000);
	ck_assert_int_ge(nccl, 1);
}
END_TEST

/* capture's copy changed by sql, against the statement; the FP32 GEMMs'
 * time and the rest check() counts. */
static int64_t check_changed(const char *capture, const char *name, const char *sql)
{
	char path[4096];

	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	testutil_copy_file(testutil_data_path(capture), path);
	testutil_sqlite3(path, sql);
	return check(path, name);
}

/* Kernels whose end is a real number (a foreign file's: a third of them,
 * FP32 GEMMs among them) are grouped as SQL groups them: their halves of
 * a nanosecond add up. A real number of this size keeps its half (one of
 * a capture's clock would round to an integer). */
START_TEST(real_spans_take_the_statement)
{
	ck_assert_int_gt(check_changed("transformer_naive.sqlite", "kernel_names_real.sqlite",
				       "UPDATE " PROF_T_KERNEL " SET start = 1000, end = 1000.5 + (end - start)"
				       " WHERE rowid % 3 = 0"),
			 1000000);
}
END_TEST

/* A kernel whose name is no id (a foreign file's text in demangledName)
 * joins no string, as in the statement. */
START_TEST(a_name_of_another_type_takes_the_statement)
{
	ck_assert_int_gt(check_changed("transformer_naive.sqlite", "kernel_names_text.sqlite",
				       "UPDATE " PROF_T_KERNEL " SET demangledName = 'no id' WHERE rowid IN"
				       " (SELECT rowid FROM " PROF_T_KERNEL " ORDER BY rowid DESC LIMIT 50)"),
			 1000000);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("program_kernel_names");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, names_as_the_statement_groups_them);
	tcase_add_test(tc, real_spans_take_the_statement);
	tcase_add_test(tc, a_name_of_another_type_takes_the_statement);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
