/* test_step_replay.c - the step replayed forward (timeline/step_replay.h),
 * on real captures: replayed as measured it gives back the step the
 * critical path measured, and no change it models makes a step longer,
 * alone or with others. Its figures reach diagnose's report as
 * r->replay (rules_critical_path.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose_run.h"
#include "analysis/timeline/critical_path.h"
#include "prof/store.h"
#include "testutil.h"

static struct diag_report *diagnose(const char *name)
{
	struct prof_store *s;
	struct prof_error err;
	struct diag_settings st;
	struct diag_report *r;

	ck_assert_int_eq(diag_settings__init(&st), 0);
	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_msg(diag__run(s, &st, &r, &err) == 0, "%s", err.msg);
	prof_store__close(s);
	diag_settings__exit(&st);
	return r;
}

/* Steps of one thread and one stream, of several streams, with blocking
 * pageable copies, allocation in the loop, managed memory, PyTorch eager
 * with its autograd thread. */
static const char *const reproduced[] = {
	"transformer_naive.sqlite",   "batched_forces_naive.sqlite",  "hash_embedding_naive.sqlite",
	"rollout_naive.sqlite",       "torch_train.sqlite",           "corpus/graph_eager.sqlite",
	"corpus/hf_gpt2_train.sqlite", "corpus/managed_memory.sqlite", "corpus/pageable_sync_copies.sqlite",
	"corpus/compile_default.sqlite",
};

START_TEST(replay_as_measured_gives_back_the_step)
{
	struct diag_report *r = diagnose(reproduced[_i]);

	ck_assert_msg(r->replay.valid, "%s: no replay", reproduced[_i]);
	ck_assert_int_gt(r->replay.measured_ns, 0);
	/* within 1%: the rows hold everything that set these steps */
	ck_assert_msg(llabs(r->replay.after_ns[REPLAY_AS_MEASURED] - r->replay.measured_ns) * 100 <=
			      r->replay.measured_ns,
		      "%s: replayed %lld ns, measured %lld ns", reproduced[_i],
		      (long long)r->replay.after_ns[REPLAY_AS_MEASURED], (long long)r->replay.measured_ns);
	diag_report__delete(r);
}
END_TEST

/* Where the loop runs ahead of its GPU the rows miss what held the step;
 * the replay is then not trusted (rules/gains.c), but still obeys this. */
static const char *const any_step[] = {
	"transformer_naive.sqlite",	  "hash_embedding_naive.sqlite",   "rollout_naive.sqlite",
	"rollout_optimized.sqlite",	  "corpus/pinned_overlap.sqlite",  "corpus/graph_replay.sqlite",
	"corpus/pageable_sync_copies.sqlite", "corpus/hf_gpt2_train.sqlite",
};

START_TEST(replay_removing_a_cost_never_lengthens_the_step)
{
	struct diag_report *r = diagnose(any_step[_i]);

	ck_assert_msg(r->replay.valid, "%s: no replay", any_step[_i]);
	for (unsigned set = 0; set < REPLAY_NSETS; set++)
		for (unsigned bit = 1; bit < REPLAY_NSETS; bit <<= 1) {
			if (set & bit)
				continue;
			ck_assert_msg(r->replay.after_ns[set | bit] <= r->replay.after_ns[set],
				      "%s: changes %#x take %lld ns, with %#x added %lld ns", any_step[_i], set,
				      (long long)r->replay.after_ns[set], bit,
				      (long long)r->replay.after_ns[set | bit]);
		}
	diag_report__delete(r);
}
END_TEST

/* A finding's gain is never more than its change could give: the step
 * after it is positive and no longer than the step. */
START_TEST(gains_lie_between_nothing_and_the_whole_step)
{
	struct diag_report *r = diagnose(reproduced[_i]);
	int with_gain = 0;

	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		if (f->gain_step_ns == 0)
			continue;
		with_gain++;
		ck_assert_ptr_nonnull(f->gain_basis);
		ck_assert_int_gt(f->gain_step_ns, 0);
		ck_assert_int_le(f->gain_step_ns, r->verdict.step_ns);
	}
	ck_assert_msg(with_gain > 0, "%s: no finding has a gain", reproduced[_i]);
	if (r->verdict.all_changes_ns > 0)
		for (int i = 0; i < r->nfindings; i++)
			if (r->findings[i].gain_step_ns > 0)
				ck_assert_int_le(r->verdict.all_changes_ns, r->findings[i].gain_step_ns);
	diag_report__delete(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("step_replay");
	TCase *tc = tcase_create("replay");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, replay_as_measured_gives_back_the_step, 0,
			    (int)(sizeof reproduced / sizeof reproduced[0]));
	tcase_add_loop_test(tc, replay_removing_a_cost_never_lengthens_the_step, 0,
			    (int)(sizeof any_step / sizeof any_step[0]));
	tcase_add_loop_test(tc, gains_lie_between_nothing_and_the_whole_step, 0,
			    (int)(sizeof reproduced / sizeof reproduced[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
