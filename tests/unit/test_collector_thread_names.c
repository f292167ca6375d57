/* test_collector_thread_names.c - the collector keeps each traced thread's
 * OS name (what pthread_setname_np set), also for a thread that exited
 * before its rows were read, writes one name per thread, and leaves a
 * thread with an NVTX name to that name.
 *
 * The collector is only built where CUPTI exists; thread_names.c is free of
 * CUPTI, so it is compiled into this test, on this test's own threads. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../collectors/thread_names.c"
#include "prof/store.h"
#include "prof/tables.h"
#include "report_store.h"
#include "testutil.h"

struct worker {
	const char *name;
	uint32_t tid;
	pthread_barrier_t named, may_exit;
};

/* Names itself, says its tid, and exits when told. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	w->tid = (uint32_t)syscall(SYS_gettid);
	pthread_barrier_wait(&w->named);
	pthread_barrier_wait(&w->may_exit);
	return NULL;
}

static void worker_start(struct worker *w, pthread_t *th, const char *name)
{
	w->name = name;
	pthread_barrier_init(&w->named, NULL, 2);
	pthread_barrier_init(&w->may_exit, NULL, 2);
	ck_assert_int_eq(pthread_create(th, NULL, worker_main, w), 0);
	pthread_barrier_wait(&w->named);
}

static void worker_join(struct worker *w, pthread_t th)
{
	pthread_barrier_wait(&w->may_exit);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&w->named);
	pthread_barrier_destroy(&w->may_exit);
}

/* The names ThreadNames holds for tid, joined by '|', in out. */
static int names_of(struct prof_store *s, uint32_t tid, char *out, size_t size)
{
	struct prof_cursor *c = NULL;
	struct prof_error err;
	int n = 0;

	out[0] = '\0';
	ck_assert_int_eq(prof_cursor__open(s, "SELECT v.value FROM " PROF_T_THREAD_NAMES " t JOIN "
					   PROF_T_STRINGS " v ON v.id = t.nameId WHERE t.globalTid = ?1",
					   &c, &err),
			 0);
	prof_cursor__bind_int64(c, 1, prof_global_tid((uint32_t)getpid(), tid));
	while (prof_cursor__next(c, &err) == 1) {
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s%s", n++ ? "|" : "", prof_cursor__text(c, 0));
	}
	prof_cursor__close(c);
	return n;
}

START_TEST(thread_names_keep_a_named_thread_that_exited)
{
	struct thread_names *t = NULL;
	struct worker a = { 0 }, b = { 0 };
	struct prof_writer *w = store_new("names.sqlite");
	struct prof_store *s;
	pthread_t ta, tb;
	char got[128];

	ck_assert_int_eq(thread_names__new((uint32_t)getpid(), "/proc", &t), 0);
	worker_start(&a, &ta, "pt_autograd_0");
	worker_start(&b, &tb, "early_exit");
	thread_names__scan(t, 1); /* b is alive now, and gone before its rows are read */
	worker_join(&b, tb);
	thread_names__seen(t, a.tid);
	thread_names__seen(t, b.tid);
	thread_names__seen(t, (uint32_t)getpid());
	worker_join(&a, ta);
	ck_assert_int_eq(thread_names__write(t, w), 0);
	/* written once: a second end writes nothing more */
	ck_assert_int_eq(thread_names__write(t, w), 0);
	thread_names__delete(t);
	s = store_finish(w);

	ck_assert_int_eq(names_of(s, a.tid, got, sizeof got), 1);
	ck_assert_str_eq(got, "pt_autograd_0");
	ck_assert_int_eq(names_of(s, b.tid, got, sizeof got), 1);
	ck_assert_str_eq(got, "early_exit");
	/* the main thread has a row too: readers call it "main" */
	ck_assert_int_eq(names_of(s, (uint32_t)getpid(), got, sizeof got), 1);
	prof_store__close(s);
}
END_TEST

START_TEST(thread_names_leave_an_nvtx_named_thread_to_its_nvtx_name)
{
	struct thread_names *t = NULL;
	struct worker a = { 0 };
	struct prof_writer *w = store_new("nvtx.sqlite");
	struct prof_store *s;
	pthread_t ta;
	char got[128];

	ck_assert_int_eq(thread_names__new((uint32_t)getpid(), "/proc", &t), 0);
	worker_start(&a, &ta, "os_name");
	thread_names__seen(t, a.tid);
	/* as records.c on_name does: the NVTX name is written as it comes */
	ck_assert_int_eq(prof_writer__thread_name(w, prof_global_tid((uint32_t)getpid(), a.tid),
						  "NCCL Progress 0"), 0);
	thread_names__nvtx(t, a.tid);
	ck_assert_int_eq(thread_names__write(t, w), 0);
	worker_join(&a, ta);
	thread_names__delete(t);
	s = store_finish(w);

	ck_assert_int_eq(names_of(s, a.tid, got, sizeof got), 1);
	ck_assert_str_eq(got, "NCCL Progress 0");
	prof_store__close(s);
}
END_TEST

START_TEST(thread_names_skip_threads_without_rows)
{
	struct thread_names *t = NULL;
	struct worker a = { 0 };
	struct prof_writer *w = store_new("idle.sqlite");
	struct prof_store *s;
	pthread_t ta;
	char got[128];

	ck_assert_int_eq(thread_names__new((uint32_t)getpid(), "/proc", &t), 0);
	worker_start(&a, &ta, "no_cuda_calls");
	thread_names__scan(t, 1);
	ck_assert_int_eq(thread_names__write(t, w), 0);
	worker_join(&a, ta);
	thread_names__delete(t);
	s = store_finish(w);

	ck_assert_int_eq(names_of(s, a.tid, got, sizeof got), 0);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("collector_thread_names");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, thread_names_keep_a_named_thread_that_exited);
	tcase_add_test(tc, thread_names_leave_an_nvtx_named_thread_to_its_nvtx_name);
	tcase_add_test(tc, thread_names_skip_threads_without_rows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
