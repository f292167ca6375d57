/* test_ranks_shared.c - the model of a finished capture's processes
 * (sum_ranks__load) is read once for the connections to the file
 * (prof_store__shared_take): a connection opened from the first takes the
 * same model (the file changed under them afterwards shows it was not read
 * again), each copy its own to change and free, a connection of its own
 * reads anew, and --rank's choice is marked on each load, not kept with
 * the model. On a copy of a real one-file DDP job. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/ranks.h"
#include "prof/store.h"
#include "testutil.h"

static struct prof_store *open_path(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

static void load(struct prof_store *s, struct sum_ranks *r)
{
	struct prof_error err = { 0 };

	ck_assert_msg(sum_ranks__load(s, r, &err) == 0, "%s", err.msg);
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Every field of the two models alike. */
static void check_same(const struct sum_ranks *a, const struct sum_ranks *b)
{
	ck_assert_int_eq(a->n, b->n);
	ck_assert_int_eq(a->nranks, b->nranks);
	ck_assert(a->from_process_info == b->from_process_info && a->several_hosts == b->several_hosts);
	ck_assert(a->filtered == b->filtered);
	for (int i = 0; i < a->n; i++) {
		const struct sum_process *p = &a->p[i], *q = &b->p[i];

		ck_assert_int_eq(p->global_pid, q->global_pid);
		ck_assert(p->pid == q->pid && p->rank == q->rank && p->world_size == q->world_size);
		ck_assert(p->local_rank == q->local_rank && p->has_cuda == q->has_cuda && p->selected == q->selected);
		ck_assert(same_text(p->host, q->host) && same_text(p->name, q->name));
		ck_assert(same_text(p->launcher, q->launcher));
		ck_assert_int_eq(p->ngpus, q->ngpus);
		for (int g = 0; g < p->ngpus; g++) {
			ck_assert_int_eq(p->gpus[g].device_id, q->gpus[g].device_id);
			ck_assert(same_text(p->gpus[g].uuid, q->gpus[g].uuid));
			ck_assert(same_text(p->gpus[g].name, q->gpus[g].name));
		}
	}
}

START_TEST(the_model_is_read_once_a_file)
{
	const char *path = testutil_tmp_path("ranks_shared.sqlite");
	struct prof_store *s, *again, *own;
	struct prof_error err = { 0 };
	struct sum_ranks first, taken, anew, chosen;
	int ranks = 0;

	testutil_copy_file(testutil_data_path("ddp/ddp2_even.sqlite"), path);
	s = open_path(path);
	load(s, &first);
	ck_assert_int_eq(first.nranks, 2);
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	/* the hosts renamed behind the readers' backs */
	testutil_sqlite3(path, "UPDATE PERFKIT_PROCESS_INFO SET host = 'renamed'");
	load(again, &taken);
	check_same(&first, &taken);
	/* a copy of its own: the first freed, the second whole */
	sum_ranks__exit(&first);
	load(s, &first);
	check_same(&first, &taken);
	own = open_path(path);
	load(own, &anew);
	ck_assert_int_eq(anew.n, taken.n);
	for (int i = 0; i < anew.n; i++)
		if (anew.p[i].rank >= 0) {
			ck_assert_str_eq(anew.p[i].host, "renamed");
			ck_assert_str_ne(taken.p[i].host, "renamed");
			ranks++;
		}
	ck_assert_int_eq(ranks, 2);
	/* --rank chosen on a connection that took the model: marked anew */
	ck_assert_msg(summary__select_ranks(s, "1", &err) == 0, "%s", err.msg);
	load(s, &chosen);
	ck_assert(chosen.filtered);
	for (int i = 0; i < chosen.n; i++)
		ck_assert_int_eq(chosen.p[i].selected, chosen.p[i].rank == 1);
	/* the other connection chose none: every process its own */
	sum_ranks__exit(&taken);
	load(again, &taken);
	ck_assert(!taken.filtered);
	for (int i = 0; i < taken.n; i++)
		ck_assert(taken.p[i].selected);
	sum_ranks__exit(&chosen);
	sum_ranks__exit(&anew);
	sum_ranks__exit(&taken);
	sum_ranks__exit(&first);
	prof_store__close(own);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ranks_shared");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, the_model_is_read_once_a_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
