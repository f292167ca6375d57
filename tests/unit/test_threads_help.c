/* test_threads_help.c - a thread with nothing to do takes pieces of the
 * work threads__each spreads (model/threads.h): where it said it would
 * come, the work keeps a place for it with an arg of its own made on the
 * spreading thread, every piece runs once, on whichever thread, the error
 * reported is the first failed piece's in index order whoever ran it,
 * the helper that comes after the work began still takes what is left,
 * it returns once told to stop, and work with no helper coming makes no
 * place for one. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/threads.h"
#include "testutil.h"

enum { PIECES = 24 };

struct work {
	pthread_t spreader;
	atomic_int ran[PIECES];         /* how many times each piece ran */
	atomic_int by_helper;           /* pieces the helper ran */
	atomic_int args_made, args_ended;
	atomic_bool args_on_spreader;   /* every arg made on the spreading thread */
	int fail_at;                    /* the piece that fails (-1: none) */
	int delay_ms;                   /* each piece's time */
};

/* The arg of a thread: the work, and whether it is the helper's. */
struct thread_arg {
	struct work *w;
	bool helper;
};

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static int piece(void *arg, int i, struct prof_error *err)
{
	struct thread_arg *t = arg;

	atomic_fetch_add(&t->w->ran[i], 1);
	if (t->helper)
		atomic_fetch_add(&t->w->by_helper, 1);
	sleep_ms(t->w->delay_ms);
	if (i == t->w->fail_at || (t->w->fail_at >= 0 && i == t->w->fail_at + 5))
		return prof_error__set(err, PROF_E_SQL, "piece %d failed", i);
	return 0;
}

static struct thread_arg first_arg, made_args[8];

static void *for_thread(void *arg)
{
	struct thread_arg *first = arg;
	int k = atomic_fetch_add(&first->w->args_made, 1);

	if (!pthread_equal(pthread_self(), first->w->spreader))
		atomic_store(&first->w->args_on_spreader, false);
	ck_assert_int_lt(k, 8);
	/* the work is spread on one thread: an arg made is a helper's */
	made_args[k] = (struct thread_arg){ first->w, true };
	return &made_args[k];
}

static void end_thread(void *arg)
{
	struct thread_arg *t = arg;

	atomic_fetch_add(&t->w->args_ended, 1);
}

/* The work spread on one thread of its own; its result into *rc and err. */
static int spread(struct work *w, int *failed, struct prof_error *err)
{
	w->spreader = pthread_self();
	first_arg = (struct thread_arg){ w, false };
	return threads__each(PIECES, 1, piece, &first_arg, for_thread, end_thread, failed, err);
}

struct helper {
	pthread_t thread;
	atomic_bool stop;
	int wait_ms; /* before it comes to help */
};

static void *help(void *arg)
{
	struct helper *h = arg;

	sleep_ms(h->wait_ms);
	threads__help(&h->stop);
	return NULL;
}

static void start_helper(struct helper *h, int wait_ms)
{
	atomic_init(&h->stop, false);
	h->wait_ms = wait_ms;
	threads__help_coming();
	ck_assert_int_eq(pthread_create(&h->thread, NULL, help, h), 0);
}

static void stop_helper(struct helper *h)
{
	atomic_store(&h->stop, true);
	threads__help_wake();
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
}

static void init(struct work *w, int fail_at, int delay_ms)
{
	memset(w, 0, sizeof *w);
	for (int i = 0; i < PIECES; i++)
		atomic_init(&w->ran[i], 0);
	atomic_init(&w->by_helper, 0);
	atomic_init(&w->args_made, 0);
	atomic_init(&w->args_ended, 0);
	atomic_init(&w->args_on_spreader, true);
	w->fail_at = fail_at;
	w->delay_ms = delay_ms;
}

static void each_piece_once(struct work *w)
{
	for (int i = 0; i < PIECES; i++)
		ck_assert_msg(atomic_load(&w->ran[i]) == 1, "piece %d ran %d times", i, atomic_load(&w->ran[i]));
}

START_TEST(a_helper_takes_pieces_each_runs_once)
{
	struct prof_error err = { 0 };
	struct helper h;
	struct work w;
	int failed = 0;

	init(&w, -1, 3);
	start_helper(&h, 0);
	/* the helper waits before the work is spread */
	sleep_ms(20);
	ck_assert_int_eq(spread(&w, &failed, &err), 0);
	ck_assert_int_eq(failed, -1);
	each_piece_once(&w);
	ck_assert_int_gt(atomic_load(&w.by_helper), 0);
	ck_assert_int_lt(atomic_load(&w.by_helper), PIECES);
	/* its arg made on the spreading thread, and ended after */
	ck_assert_int_eq(atomic_load(&w.args_made), 1);
	ck_assert_int_eq(atomic_load(&w.args_ended), 1);
	ck_assert(atomic_load(&w.args_on_spreader));
	stop_helper(&h);
}
END_TEST

/* Coming once the work began, it still takes the pieces left. */
START_TEST(a_helper_that_comes_late_takes_what_is_left)
{
	struct prof_error err = { 0 };
	struct helper h;
	struct work w;

	init(&w, -1, 5);
	start_helper(&h, 30);
	ck_assert_int_eq(spread(&w, NULL, &err), 0);
	each_piece_once(&w);
	ck_assert_int_gt(atomic_load(&w.by_helper), 0);
	/* the first pieces were the spreading thread's alone */
	ck_assert_int_eq(atomic_load(&w.ran[0]), 1);
	stop_helper(&h);
	ck_assert_int_eq(atomic_load(&w.args_ended), 1);
}
END_TEST

/* The first failed piece in index order is the one reported, whichever
 * thread ran it; the pieces after it need not run. */
START_TEST(the_first_failure_in_order_is_reported)
{
	for (int fail_at = 1; fail_at < PIECES - 6; fail_at += 4) {
		struct prof_error err = { 0 };
		struct helper h;
		struct work w;
		int failed = -1;
		char want[64];

		init(&w, fail_at, 2);
		start_helper(&h, 0);
		sleep_ms(10);
		ck_assert_int_eq(spread(&w, &failed, &err), PROF_E_SQL);
		ck_assert_int_eq(failed, fail_at);
		snprintf(want, sizeof want, "piece %d failed", fail_at);
		ck_assert_str_eq(err.msg, want);
		for (int i = 0; i <= fail_at; i++)
			ck_assert_int_eq(atomic_load(&w.ran[i]), 1);
		stop_helper(&h);
	}
}
END_TEST

/* With no helper coming, no place is made for one: the work is the
 * spreading thread's. */
START_TEST(no_helper_no_place)
{
	struct prof_error err = { 0 };
	struct work w;

	init(&w, -1, 0);
	ck_assert_int_eq(spread(&w, NULL, &err), 0);
	each_piece_once(&w);
	ck_assert_int_eq(atomic_load(&w.by_helper), 0);
	ck_assert_int_eq(atomic_load(&w.args_made), 0);
}
END_TEST

/* Told to stop with no work, it returns; said it would come and did not,
 * the work makes no place once it is said. */
START_TEST(a_helper_stops_when_told)
{
	struct prof_error err = { 0 };
	struct helper h;
	struct work w;

	start_helper(&h, 0);
	sleep_ms(10);
	stop_helper(&h);
	threads__help_coming();
	threads__help_not_coming();
	init(&w, -1, 0);
	ck_assert_int_eq(spread(&w, NULL, &err), 0);
	ck_assert_int_eq(atomic_load(&w.args_made), 0);
	each_piece_once(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("threads_help");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_helper_takes_pieces_each_runs_once);
	tcase_add_test(tc, a_helper_that_comes_late_takes_what_is_left);
	tcase_add_test(tc, the_first_failure_in_order_is_reported);
	tcase_add_test(tc, no_helper_no_place);
	tcase_add_test(tc, a_helper_stops_when_told);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
