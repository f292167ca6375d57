/* test_python_native.c - the native frames of another thread, as
 * --python-sampling takes them (collectors/python_native.c): a thread
 * sleeping in the C library answers the sampler's signal with its frames,
 * named by library, and the walk stops where the "interpreter" starts
 * (this test's own program stands for it); a
 * thread that blocks the signal costs one wait, then is left alone. */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "python_runtime.h"
#include "testutil.h"
#include "prof/event.h"

static _Atomic long worker_tid;
static _Atomic int stop;

/* The stand-in for the interpreter: an address in this program. */
static void interpreter(void)
{
}

/* Sleeps in the C library over and over: the signal finds it there (in
 * a sanitizer's build too, whose wrappers of the C library's calls sit
 * in libraries of their own), and the walk goes out through the C
 * library to this program. */
static void *sleeper(void *arg)
{
	sigset_t all;

	(void)arg;
	/* a program's thread takes signals, whatever its creator blocks */
	sigfillset(&all);
	pthread_sigmask(SIG_UNBLOCK, &all, NULL);
	atomic_store(&worker_tid, (long)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		usleep(2000);
	return NULL;
}

/* Never takes the signal: it stays blocked while it sleeps. */
static void *deaf(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	atomic_store(&worker_tid, (long)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		usleep(1000);
	return NULL;
}

static pthread_t start(void *(*fn)(void *))
{
	pthread_t t;

	atomic_store(&stop, 0);
	atomic_store(&worker_tid, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, fn, NULL), 0);
	while (!atomic_load(&worker_tid))
		usleep(100);
	return t;
}

static void finish(pthread_t t)
{
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
}

static void start_native(void)
{
	const char *why = NULL;
	static int started;
	sigset_t all;

	if (!started) {
		ck_assert_msg(python_native__start((uint64_t)(uintptr_t)&interpreter, &why) == 0, "%s",
			      why ? why : "");
		started = 1;
	}
	/* the sampler's thread takes no signal (as the collector's do) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

START_TEST(a_sleeping_thread_answers_with_its_library_frames)
{
	pthread_t t;
	int with_frames = 0, in_libc = 0, tries = 0;

	start_native();
	t = start(sleeper);
	/* 200 samples with frames, taken within 3 s (Check's limit is 4): a
	 * sample the thread does not answer in time has none, and on a machine
	 * whose cores are all busy the sleeper answers late more often (123 of
	 * 300 under a load of 6 on 2 cores), so the test samples until it has
	 * enough */
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (now = t0; with_frames < 200 && now.tv_sec - t0.tv_sec < 3; tries++) {
		struct py_frame_ref f[64];
		int n = python_native__stack(atomic_load(&worker_tid), f, 64);

		ck_assert_int_ge(n, 0);
		with_frames += n > 0;
		for (int j = 0; j < n; j++) {
			const char *fn = python_names__text(f[j].function);
			const char *lib = python_names__text(f[j].file);

			ck_assert_int_eq(f[j].kind, PROF_PY_FRAME_NATIVE);
			ck_assert_ptr_nonnull(fn);
			ck_assert_ptr_nonnull(lib);
			/* the walk stops at this program, the stand-in interpreter */
			ck_assert_msg(!strstr(lib, "test_python_native"), "frame in the interpreter: %s", lib);
			if (!strncmp(lib, "libc.so", 7))
				in_libc++;
		}
		usleep(300);
		clock_gettime(CLOCK_MONOTONIC, &now);
	}
	finish(t);
	ck_assert_msg(with_frames >= 200, "only %d of %d samples had native frames", with_frames, tries);
	ck_assert_msg(in_libc > 0, "no frame of the C library in %d samples with frames", with_frames);
}
END_TEST

START_TEST(a_thread_that_blocks_the_signal_is_left_alone)
{
	pthread_t t;
	struct timespec a, b;
	double ms;

	start_native();
	t = start(deaf);
	for (int i = 0; i < 50; i++) {
		struct py_frame_ref f[8];

		/* three unanswered requests of 2 ms, then no more waiting */
		if (i == 3)
			clock_gettime(CLOCK_MONOTONIC, &a);
		ck_assert_int_eq(python_native__stack(atomic_load(&worker_tid), f, 8), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	finish(t);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	/* 47 requests that each waited would take 94 ms at the least, however
	 * quiet the machine; ones that do not wait take microseconds, however
	 * loaded (a bound on all 50 at 40 ms failed under a load of 4) */
	ck_assert_msg(ms < 47 * 2, "47 requests to a deaf thread after three unanswered took %.1f ms",
		      ms);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("python_native");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, a_sleeping_thread_answers_with_its_library_frames);
	tcase_add_test(tc, a_thread_that_blocks_the_signal_is_left_alone);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
