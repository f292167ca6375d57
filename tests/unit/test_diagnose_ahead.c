/* test_diagnose_ahead.c - the passes over the GPU tables alone made on a
 * thread of their own (diagnose/ahead.h): on real captures of every kind,
 * a diagnosis that takes them (diag__run_alone, two threads allowed) says
 * what the one that makes them in place says (diag__run_process), byte
 * for byte in its JSON, the launch and kernel findings among it; each
 * piece made ahead is what it is made in place (the program's model, the
 * busy union and its devices, the kernel groups); each is handed over
 * once, and not for another window; and nothing is made ahead where it
 * cannot be: one thread allowed, a capture held in memory, a piece a
 * capture under kernel replay skips. Before its window is known the
 * thread takes the file's extent, the context's failure, its rows of a
 * bad span and what its kernel names say for the diagnosis (shared by the file's connections: a
 * file changed afterwards shows the diagnosis's connection did not read
 * them again), and a thread never told the window ends with nothing
 * made. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/program.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose/ahead.h"
#include "analysis/rules/api_groups.h"
#include "analysis/rules/kernel_groups.h"
#include "analysis/rules/rules.h"
#include "model/context_failure.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/store.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	    "corpus/hf_gpt2_train.sqlite",     "corpus/graph_replay.sqlite",
	"corpus/jax_jit_mlp.sqlite",	    "corpus/timm_resnet_dataloader.sqlite", "ddp/ddp2_rank0.sqlite",
	"nsys/cloverleaf-cuda.sqlite",	    "python/py_hf_gpt2_train.sqlite",  "gpu_metrics/torch_gemm_bf16_fp32.sqlite",
	"rollout_naive_memory.sqlite",	    "cases/case_gemm_chain_memory.sqlite",
};

static const struct diag_ahead_pass passes[DIAG_AHEAD_PIECES] = {
	[DIAG_AHEAD_PROGRAM] = { diag_program__make, free },
	[DIAG_AHEAD_BUSY] = { diag_busy__make, diag_busy__free },
	[DIAG_AHEAD_LAUNCH_SCAN] = { launch_scan__make, launch_scan__free },
	[DIAG_AHEAD_KERNEL_GROUPS] = { kernel_groups__make, kernel_groups__free_made },
	[DIAG_AHEAD_API_GROUPS] = { api_groups__make, api_groups__free_made },
};

static char *report_json(const struct diag_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(diag_report__print_json(r, f), 0);
	fclose(f);
	return text;
}

/* Findings of the rules whose passes are made ahead. */
static int kernel_side_findings(const struct diag_report *r)
{
	static const char *const ids[] = { "launch_bound",  "batched_gemm",	 "gemm_chain",
					   "repeated_kernel", "low_occupancy", "tensor_cores_idle",
					   "fp32_memory_bound" };
	int n = 0;

	for (int i = 0; i < r->nfindings; i++)
		for (size_t k = 0; k < sizeof ids / sizeof *ids; k++)
			n += strcmp(r->findings[i].rule_id, ids[k]) == 0;
	return n;
}

START_TEST(ahead_says_what_in_place_says)
{
	int kernel_side = 0;

	setenv("PERFKIT_THREADS", "2", 1);
	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct prof_error err = { 0 };
		struct diag_settings settings;
		struct diag_report *alone = NULL, *in_place = NULL;
		struct prof_store *s;
		char *a, *b;

		ck_assert_msg(prof_store__open(testutil_data_path(captures[k]), &s, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(diag_settings__init(&settings), 0);
		ck_assert_msg(diag__run_alone(s, &settings, NULL, &alone, &err) == 0, "%s: %s", captures[k], err.msg);
		ck_assert_msg(diag__run_process(s, &settings, NULL, &in_place, &err) == 0, "%s: %s", captures[k],
			      err.msg);
		a = report_json(alone);
		b = report_json(in_place);
		ck_assert_msg(strcmp(a, b) == 0, "%s: the diagnosis made ahead differs", captures[k]);
		kernel_side += kernel_side_findings(alone);
		free(a);
		free(b);
		diag_report__delete(alone);
		diag_report__delete(in_place);
		diag_settings__exit(&settings);
		prof_store__close(s);
	}
	/* the pieces made ahead fed findings, not only silence */
	ck_assert_int_ge(kernel_side, 3);
}
END_TEST

static void open_context(const char *capture, struct prof_store **s, struct diag_settings *settings,
			 struct diag_context *ctx)
{
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(testutil_data_path(capture), s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(settings), 0);
	ck_assert_msg(diag_context__init(ctx, *s, settings, &err) == 0, "%s: %s", capture, err.msg);
}

static void close_context(struct prof_store *s, struct diag_settings *settings, struct diag_context *ctx)
{
	kernel_groups__free(ctx->kernel_groups);
	api_groups__free(ctx->api_groups);
	diag_context__exit(ctx);
	diag_settings__exit(settings);
	prof_store__close(s);
}

/* capture's context with its thread ahead started (two threads allowed). */
static void open_ahead(const char *capture, struct prof_store **s, struct diag_settings *settings,
		       struct diag_context *ctx)
{
	setenv("PERFKIT_THREADS", "2", 1);
	open_context(capture, s, settings, ctx);
	ctx->ahead = diag_ahead__start(ctx, passes);
	ck_assert_ptr_nonnull(ctx->ahead);
	diag_ahead__go(ctx->ahead, ctx);
}

static void close_ahead(struct prof_store *s, struct diag_settings *settings, struct diag_context *ctx)
{
	diag_ahead__finish(ctx->ahead);
	ctx->ahead = NULL;
	close_context(s, settings, ctx);
}

START_TEST(each_piece_once_as_made_in_place)
{
	struct prof_error err = { 0 };
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;
	struct kernel_groups *ahead, *here;
	struct api_groups *calls_ahead, *calls_here;
	struct prog_model *model;
	struct diag_scope *busy;
	void *made;

	open_ahead("corpus/hf_gpt2_train.sqlite", &s, &settings, &ctx);
	diag_ahead__wait(ctx.ahead);
	/* the model and the busy union the context read in place */
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_PROGRAM, &made, &err), 0);
	model = made;
	ck_assert_int_gt(ctx.report->program.kernels, 1000);
	ck_assert_int_eq(model->kernels, ctx.report->program.kernels);
	ck_assert_int_eq(model->streams, ctx.report->program.streams);
	ck_assert_int_eq(model->h2d_copies, ctx.report->program.h2d_copies);
	ck_assert_int_eq(model->fp32_gemm_ns, ctx.report->program.fp32_gemm_ns);
	ck_assert(model->framework[PROG_PYTORCH] == ctx.report->program.framework[PROG_PYTORCH]);
	ck_assert(model->framework[PROG_PYTORCH]);
	free(model);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_BUSY, &made, &err), 0);
	busy = made;
	ck_assert_int_gt(busy->nbusy, 100);
	ck_assert_int_eq(busy->nbusy, ctx.nbusy);
	ck_assert_int_eq(busy->busy_ns, ctx.busy_ns);
	ck_assert_int_eq(busy->ndevices, ctx.ndevices);
	for (int i = 0; i < ctx.nbusy; i++) {
		ck_assert_int_eq(busy->busy[i].start_ns, ctx.busy[i].start_ns);
		ck_assert_int_eq(busy->busy[i].end_ns, ctx.busy[i].end_ns);
	}
	diag_busy__free(busy);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_LAUNCH_SCAN, &made, &err), 0);
	ck_assert_ptr_nonnull(made);
	launch_scan__free(made);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_LAUNCH_SCAN, &made, &err), DIAG_AHEAD_NOT_MADE);
	ck_assert_ptr_null(made);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err), 0);
	ahead = made;
	ck_assert_int_eq(kernel_groups__make(&ctx, &made, &err), 0);
	here = made;
	ck_assert_int_gt(here->n, 10);
	ck_assert_int_eq(ahead->n, here->n);
	ck_assert_int_eq(ahead->nshapes, here->nshapes);
	for (int i = 0; i < here->n; i++) {
		ck_assert_str_eq(ahead->v[i].name, here->v[i].name);
		ck_assert_int_eq(ahead->v[i].count, here->v[i].count);
		ck_assert_int_eq(ahead->v[i].time_ns, here->v[i].time_ns);
	}
	for (int i = 0; i < here->nshapes; i++) {
		ck_assert_str_eq(ahead->shapes[i].name, here->shapes[i].name);
		ck_assert_int_eq(ahead->shapes[i].registers_per_thread, here->shapes[i].registers_per_thread);
		ck_assert_int_eq(ahead->shapes[i].time_ns, here->shapes[i].time_ns);
	}
	kernel_groups__free(ahead);
	kernel_groups__free(here);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_API_GROUPS, &made, &err), 0);
	calls_ahead = made;
	ck_assert_int_eq(api_groups__make(&ctx, &made, &err), 0);
	calls_here = made;
	ck_assert_int_gt(calls_here->by_name.n, 5);
	ck_assert_int_eq(calls_ahead->by_name.n, calls_here->by_name.n);
	for (int i = 0; i < calls_here->by_name.n; i++) {
		ck_assert_int_eq(calls_ahead->by_name.v[i].id, calls_here->by_name.v[i].id);
		ck_assert_int_eq(calls_ahead->by_name.v[i].count, calls_here->by_name.v[i].count);
		ck_assert_int_eq(calls_ahead->by_name.v[i].sum, calls_here->by_name.v[i].sum);
	}
	api_groups__free(calls_ahead);
	api_groups__free(calls_here);
	close_ahead(s, &settings, &ctx);
}
END_TEST

/* A piece made for one window is not handed over for another. */
START_TEST(not_for_another_window)
{
	struct prof_error err = { 0 };
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;
	void *made;

	open_ahead("transformer_naive.sqlite", &s, &settings, &ctx);
	diag_ahead__wait(ctx.ahead);
	ctx.report->window.end_ns -= 1000;
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err), DIAG_AHEAD_NOT_MADE);
	ck_assert_ptr_null(made);
	close_ahead(s, &settings, &ctx);
}
END_TEST

/* A piece the thread has not begun when the diagnosis comes to it is the
 * diagnosis's to make: the thread then leaves it (the last piece, asked
 * for at once, on a capture whose first three take the thread a while). */
START_TEST(a_piece_not_begun_is_made_in_place)
{
	struct prof_error err = { 0 };
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;
	void *made;
	int first;

	open_ahead("python/py_hf_gpt2_train.sqlite", &s, &settings, &ctx);
	first = diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err);
	ck_assert(first == DIAG_AHEAD_NOT_MADE || (first == 0 && made));
	kernel_groups__free(made);
	diag_ahead__wait(ctx.ahead);
	/* handed over once either way: the thread did not make it again */
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err), DIAG_AHEAD_NOT_MADE);
	ck_assert_ptr_null(made);
	close_ahead(s, &settings, &ctx);
}
END_TEST

/* A piece no rule takes is freed with the thread (ASan's leak check). */
START_TEST(pieces_not_taken_are_freed)
{
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;

	open_ahead("transformer_naive.sqlite", &s, &settings, &ctx);
	close_ahead(s, &settings, &ctx);
}
END_TEST

START_TEST(none_where_it_cannot_be)
{
	struct prof_error err = { 0 };
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;
	void *made;
	size_t len;
	char *bytes;

	/* one thread allowed */
	setenv("PERFKIT_THREADS", "1", 1);
	open_context("transformer_naive.sqlite", &s, &settings, &ctx);
	ck_assert_ptr_null(diag_ahead__start(&ctx, passes));
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err), DIAG_AHEAD_NOT_MADE);
	close_context(s, &settings, &ctx);

	/* a capture held in memory has no file to open again */
	setenv("PERFKIT_THREADS", "2", 1);
	bytes = testutil_read_file(testutil_data_path("transformer_naive.sqlite"), &len);
	ck_assert_ptr_nonnull(bytes);
	ck_assert_msg(prof_store__open_memory(bytes, len, "in memory", &s, &err) == 0, "%s", err.msg);
	free(bytes);
	ck_assert_int_eq(diag_settings__init(&settings), 0);
	ck_assert_msg(diag_context__init(&ctx, s, &settings, &err) == 0, "%s", err.msg);
	ck_assert(ctx.has_kernel);
	ck_assert_ptr_null(diag_ahead__start(&ctx, passes));
	close_context(s, &settings, &ctx);

	/* under kernel replay the launch rules are skipped: their pass is
	 * not made, the kernel groups are */
	open_context("rollout_naive_memory.sqlite", &s, &settings, &ctx);
	ck_assert(ctx.replayed);
	ctx.ahead = diag_ahead__start(&ctx, passes);
	ck_assert_ptr_nonnull(ctx.ahead);
	diag_ahead__go(ctx.ahead, &ctx);
	diag_ahead__wait(ctx.ahead);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_LAUNCH_SCAN, &made, &err), DIAG_AHEAD_NOT_MADE);
	ck_assert_int_eq(diag_ahead__take(&ctx, DIAG_AHEAD_KERNEL_GROUPS, &made, &err), 0);
	ck_assert_ptr_nonnull(made);
	kernel_groups__free(made);
	close_ahead(s, &settings, &ctx);
}
END_TEST

/* The thread starts as the diagnosis begins, before its window: it takes
 * the file's extent and rows of a bad span, which the diagnosis's own
 * connection then takes from it (the file changed behind both, a kernel
 * moved earlier and a call's span made impossible, is not read again,
 * where a connection of its own reads the change); told no window, it
 * ends having made no piece. */
START_TEST(file_answers_taken_before_the_window)
{
	const char *path = testutil_tmp_path("ahead_file_answers.sqlite");
	struct prof_error err = { 0 };
	struct diag_settings settings;
	struct diag_context ctx;
	struct sum_capture_time before, taken, anew;
	struct prof_store *s, *own;
	int64_t bad_taken = -1, bad_anew = -1;
	struct sum_window window = { 0 };
	struct sum_context_failure failure;
	struct prog_model model;
	void *made;

	testutil_copy_file(testutil_data_path("transformer_naive.sqlite"), path);
	setenv("PERFKIT_THREADS", "2", 1);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(&settings), 0);
	memset(&ctx, 0, sizeof ctx);
	ctx.store = s;
	ctx.settings = &settings;
	diag_context__note_tables(&ctx);
	ctx.ahead = diag_ahead__start(&ctx, passes);
	ck_assert_ptr_nonnull(ctx.ahead);
	diag_ahead__wait(ctx.ahead);
	own = NULL;
	ck_assert_msg(prof_store__open(path, &own, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_capture__time(own, &before, &err) == 0, "%s", err.msg);
	prof_store__close(own);
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - 1000000000"
			       " WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);"
			       " UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1"
			       " WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);"
			       " UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 719 WHERE rowid = 50");
	/* a call failed with the context, written behind the readers: the
	 * failure the thread looked for (none) stands */
	ck_assert_msg(sum_context_failure__find(s, &failure, &err) == 0, "%s", err.msg);
	ck_assert(!failure.failed);
	ck_assert_msg(prof_store__open(path, &own, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_context_failure__find(own, &failure, &err) == 0, "%s", err.msg);
	prof_store__close(own);
	ck_assert(failure.failed);
	ck_assert_int_eq(failure.code, 719);
	ck_assert_msg(sum_capture__time(s, &taken, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_bad_spans__count(s, &bad_taken, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(taken.first_ns, before.first_ns);
	ck_assert_int_eq(bad_taken, 0);
	ck_assert_msg(prof_store__open(path, &own, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_capture__time(own, &anew, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_bad_spans__count(own, &bad_anew, &err) == 0, "%s", err.msg);
	prof_store__close(own);
	ck_assert_int_lt(anew.first_ns, before.first_ns);
	ck_assert_int_eq(bad_anew, 1);
	/* a kernel renamed as NCCL's: the names the thread read stand */
	testutil_sqlite3(path, "UPDATE StringIds SET value = 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'"
			       " WHERE id = (SELECT coalesce(demangledName, shortName) FROM CUPTI_ACTIVITY_KIND_KERNEL"
			       " LIMIT 1)");
	ck_assert_msg(prog_model__read_gpu(s, &window, false, &model, &err) == 0, "%s", err.msg);
	ck_assert(!model.framework[PROG_NCCL]);
	ck_assert_msg(prof_store__open(path, &own, &err) == 0, "%s", err.msg);
	ck_assert_msg(prog_model__read_gpu(own, &window, false, &model, &err) == 0, "%s", err.msg);
	prof_store__close(own);
	ck_assert(model.framework[PROG_NCCL]);
	/* never told the window: nothing made */
	for (int i = 0; i < DIAG_AHEAD_PIECES; i++) {
		ck_assert_int_eq(diag_ahead__take(&ctx, (enum diag_ahead_piece)i, &made, &err), DIAG_AHEAD_NOT_MADE);
		ck_assert_ptr_null(made);
	}
	diag_ahead__finish(ctx.ahead);
	diag_settings__exit(&settings);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnose_ahead");
	TCase *tc = tcase_create("ahead");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, ahead_says_what_in_place_says);
	tcase_add_test(tc, file_answers_taken_before_the_window);
	tcase_add_test(tc, each_piece_once_as_made_in_place);
	tcase_add_test(tc, not_for_another_window);
	tcase_add_test(tc, a_piece_not_begun_is_made_in_place);
	tcase_add_test(tc, pieces_not_taken_are_freed);
	tcase_add_test(tc, none_where_it_cannot_be);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
