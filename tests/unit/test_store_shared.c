/* test_store_shared.c - what the connections to one file share
 * (prof_store__shared_take): a value made on one connection is found on
 * those reopened from it, under its key and tag alone, never on a
 * connection opened on its own; one asked for on another thread while it
 * is made waits for it and gets that value; a value given up is made by
 * the one that waited; each value is handed to its done once, when the
 * last of the connections closes. On a real capture. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

#define CAPTURE "gpu_metrics/small_grid.sqlite"

static int done_count;

static void done(void *value)
{
	(void)value;
	__atomic_add_fetch(&done_count, 1, __ATOMIC_SEQ_CST);
}

static struct prof_store *open_capture(void)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_capture(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	return s;
}

static struct prof_store *reopen(struct prof_store *s)
{
	struct prof_store *r = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__reopen(s, &r, &err) == 0, "%s", err.msg);
	return r;
}

START_TEST(shared_by_the_reopened_alone)
{
	static const char key = 0, other_key = 0;
	static int value = 7;
	const int tag = 1, other_tag = 2;
	struct prof_store *s = open_capture(), *r = reopen(s), *r2 = reopen(r), *alone = open_capture();
	void *got = NULL;

	done_count = 0;
	ck_assert_int_eq(prof_store__shared_take(r, &key, &tag, sizeof tag, &got), 0);
	prof_store__shared_give(r, &key, &tag, sizeof tag, &value, done);
	/* every connection of the family finds it, by key and tag */
	ck_assert_int_eq(prof_store__shared_take(s, &key, &tag, sizeof tag, &got), 1);
	ck_assert_ptr_eq(got, &value);
	ck_assert_int_eq(prof_store__shared_take(r2, &key, &tag, sizeof tag, &got), 1);
	ck_assert_ptr_eq(got, &value);
	/* another tag or key is another question: made by its asker */
	ck_assert_int_eq(prof_store__shared_take(s, &key, &other_tag, sizeof other_tag, &got), 0);
	prof_store__shared_drop(s, &key, &other_tag, sizeof other_tag);
	ck_assert_int_eq(prof_store__shared_take(s, &other_key, &tag, sizeof tag, &got), 0);
	prof_store__shared_drop(s, &other_key, &tag, sizeof tag);
	/* a connection opened on its own shares nothing */
	ck_assert_int_eq(prof_store__shared_take(alone, &key, &tag, sizeof tag, &got), 0);
	prof_store__shared_drop(alone, &key, &tag, sizeof tag);
	/* done once, when the last of the family closes, whatever the order */
	prof_store__close(r);
	prof_store__close(s);
	ck_assert_int_eq(done_count, 0);
	prof_store__close(r2);
	ck_assert_int_eq(done_count, 1);
	prof_store__close(alone);
	ck_assert_int_eq(done_count, 1);
}
END_TEST

struct asker {
	struct prof_store *s;
	const void *key;
	int tag;
	int rc;
	void *got;
	struct timespec at; /* when the answer came */
};

static void *ask(void *arg)
{
	struct asker *a = arg;

	a->rc = prof_store__shared_take(a->s, a->key, &a->tag, sizeof a->tag, &a->got);
	clock_gettime(CLOCK_MONOTONIC, &a->at);
	return NULL;
}

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

START_TEST(waits_for_the_one_being_made)
{
	static const char key = 0;
	static int value = 3;
	struct prof_store *s = open_capture(), *r = reopen(s);
	struct asker a = { .s = r, .key = &key, .tag = 5 };
	struct timespec given;
	pthread_t t;
	void *got = NULL;

	done_count = 0;
	ck_assert_int_eq(prof_store__shared_take(s, &key, &a.tag, sizeof a.tag, &got), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, ask, &a), 0);
	/* the other thread asks while this one makes it */
	usleep(200 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &given);
	prof_store__shared_give(s, &key, &a.tag, sizeof a.tag, &value, done);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc, 1);
	ck_assert_ptr_eq(a.got, &value);
	ck_assert_msg(since(&given, &a.at) >= 0, "answered before it was made");
	prof_store__close(s);
	prof_store__close(r);
	ck_assert_int_eq(done_count, 1);
}
END_TEST

START_TEST(given_up_then_made_by_the_waiter)
{
	static const char key = 0;
	struct prof_store *s = open_capture(), *r = reopen(s);
	struct asker a = { .s = r, .key = &key, .tag = 9 };
	pthread_t t;
	void *got = NULL;

	ck_assert_int_eq(prof_store__shared_take(s, &key, &a.tag, sizeof a.tag, &got), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, ask, &a), 0);
	usleep(100 * 1000);
	prof_store__shared_drop(s, &key, &a.tag, sizeof a.tag);
	pthread_join(t, NULL);
	/* the waiter is the maker now */
	ck_assert_int_eq(a.rc, 0);
	ck_assert_ptr_null(a.got);
	prof_store__shared_drop(r, &key, &a.tag, sizeof a.tag);
	prof_store__close(s);
	prof_store__close(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_shared");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, shared_by_the_reopened_alone);
	tcase_add_test(tc, waits_for_the_one_being_made);
	tcase_add_test(tc, given_up_then_made_by_the_waiter);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
