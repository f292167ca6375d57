/* test_thread_label.c - a thread reads as what it is: "main", the name the
 * program gave it, PyTorch's and NCCL's threads in words, a thread without
 * a name by what its calls do, else "thread TID"; the same on perfkit
 * captures and nsys exports. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "prof/event.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "model/thread_label.h"
#include "testutil.h"

static char out[SUM_THREAD_LABEL_MAX];

static const char *label(uint32_t pid, uint32_t tid, const char *name, const char *process,
			 enum sum_thread_role role)
{
	sum_thread__label(prof_global_tid(pid, tid), name, process, role, out, sizeof out);
	return out;
}

START_TEST(thread_label_main_is_the_thread_whose_tid_is_its_pid)
{
	ck_assert_str_eq(label(741, 741, NULL, "python3", SUM_THREAD_ROLE_UNKNOWN), "main");
	/* its OS name is the process's until the program sets one */
	ck_assert_str_eq(label(741, 741, "python3", "python3", SUM_THREAD_ROLE_UNKNOWN), "main");
	ck_assert_str_eq(label(741, 741, "pt_main_thread", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "main");
	ck_assert_str_eq(label(9, 9, "MPI Rank 0", "saxpy", SUM_THREAD_ROLE_UNKNOWN),
			 "main (MPI Rank 0)");
}
END_TEST

START_TEST(thread_label_keeps_the_programs_own_name)
{
	ck_assert_str_eq(label(10, 12, "loader", "app", SUM_THREAD_ROLE_UNKNOWN), "loader");
	/* a name wins over what the calls suggest */
	ck_assert_str_eq(label(10, 12, "stager", "app", SUM_THREAD_ROLE_PIN_MEMORY), "stager");
}
END_TEST

START_TEST(thread_label_ignores_the_inherited_process_name)
{
	ck_assert_str_eq(label(10, 12, "python3", "python3", SUM_THREAD_ROLE_UNKNOWN), "thread 12");
	/* Linux keeps 15 bytes of a thread's name */
	ck_assert_str_eq(label(10, 12, "a_long_program_", "a_long_program_name",
			       SUM_THREAD_ROLE_UNKNOWN),
			 "thread 12");
	ck_assert_str_eq(label(10, 12, "app", "/opt/bin/app", SUM_THREAD_ROLE_UNKNOWN), "thread 12");
	ck_assert_str_eq(label(10, 12, "", "app", SUM_THREAD_ROLE_UNKNOWN), "thread 12");
}
END_TEST

START_TEST(thread_label_names_pytorch_threads_in_words)
{
	ck_assert_str_eq(label(10, 12, "pt_autograd_0", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "autograd (GPU 0)");
	ck_assert_str_eq(label(10, 12, "pt_autograd_13", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "autograd (GPU 13)");
	ck_assert_str_eq(label(10, 12, "pt_data_pin", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "pin memory");
	ck_assert_str_eq(label(10, 12, "pt_nccl_watchdg", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "NCCL watchdog");
	/* not PyTorch's pattern: the name as it is */
	ck_assert_str_eq(label(10, 12, "pt_autograd_x", "python3", SUM_THREAD_ROLE_UNKNOWN),
			 "pt_autograd_x");
}
END_TEST

START_TEST(thread_label_names_nccl_threads_by_gpu)
{
	/* NCCL prints "%2d": one space more before a one-digit GPU */
	ck_assert_str_eq(label(10, 12, "NCCL Progress 0", "python", SUM_THREAD_ROLE_UNKNOWN),
			 "NCCL proxy (GPU 0)");
	ck_assert_str_eq(label(10, 12, "NCCL Progress11", "python", SUM_THREAD_ROLE_UNKNOWN),
			 "NCCL proxy (GPU 11)");
	ck_assert_str_eq(label(10, 12, "NCCL Service  3", "python", SUM_THREAD_ROLE_UNKNOWN),
			 "NCCL service (GPU 3)");
	ck_assert_str_eq(label(10, 12, "NCCL RAS", "python", SUM_THREAD_ROLE_UNKNOWN), "NCCL RAS");
}
END_TEST

START_TEST(thread_label_says_what_an_unnamed_thread_does)
{
	ck_assert_str_eq(label(10, 12, NULL, "python3", SUM_THREAD_ROLE_PIN_MEMORY),
			 "pin memory (thread 12)");
	ck_assert_str_eq(label(10, 12, "python3", "python3", SUM_THREAD_ROLE_EVENT_POLL),
			 "event polling (thread 12)");
	ck_assert_str_eq(label(10, 12, NULL, NULL, SUM_THREAD_ROLE_UNKNOWN), "thread 12");
}
END_TEST

START_TEST(thread_label_fits_a_small_buffer)
{
	char small[6];

	sum_thread__label(prof_global_tid(10, 123456), NULL, NULL, SUM_THREAD_ROLE_UNKNOWN, small,
			  sizeof small);
	ck_assert_str_eq(small, "threa");
}
END_TEST

/* ---- on real captures --------------------------------------------------- */

static struct prof_store *open_path(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

static struct prof_store *open_data(const char *name)
{
	return open_path(testutil_data_path(name));
}

static struct sum_thread_labels *load(struct prof_store *s)
{
	struct sum_thread_labels *l = NULL;
	struct prof_error err;

	ck_assert_msg(sum_thread_labels__load(s, &l, &err) == 0, "%s", err.msg);
	return l;
}

/* The one globalTid sql yields (it must yield one). */
static int64_t one_tid(struct prof_store *s, const char *sql)
{
	struct prof_cursor *c = NULL;
	struct prof_error err;
	int64_t v;

	ck_assert_int_eq(prof_cursor__open(s, sql, &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__int64(c, 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 0);
	prof_cursor__close(c);
	return v;
}

/* The threads whose runtime calls are the given API and set-up calls only. */
#define ONLY_CALLS(API)                                                                        \
	"SELECT globalTid FROM " PROF_T_RUNTIME " r JOIN " PROF_T_STRINGS " v ON v.id = r.nameId" \
	" GROUP BY globalTid HAVING sum(v.value GLOB '" API "_v*') > 0 AND"                     \
	" sum(v.value NOT GLOB '" API "_v*' AND v.value NOT GLOB 'cudaGetDevice_v*'"             \
	" AND v.value NOT GLOB 'cudaSetDevice_v*' AND v.value NOT GLOB 'cudaGetLastError_v*'"    \
	" AND v.value NOT GLOB 'cudaThreadExchangeStreamCaptureMode_v*'"                         \
	" AND v.value NOT GLOB 'cudaFreeHost_v*') = 0"

START_TEST(thread_labels_name_a_dataloaders_pin_memory_thread)
{
	struct prof_store *s = open_data("corpus/timm_resnet_dataloader.sqlite");
	struct sum_thread_labels *l = load(s);
	int64_t pin = one_tid(s, ONLY_CALLS("cudaHostAlloc"));
	int64_t main_tid = one_tid(s, "SELECT globalTid FROM " PROF_T_RUNTIME
				      " WHERE (globalTid & 16777215) = ((globalTid >> 24) & 16777215)"
				      " GROUP BY globalTid");
	char want[64];

	snprintf(want, sizeof want, "pin memory (thread %" PRIu32 ")", prof_tid_of(pin));
	ck_assert_str_eq(sum_thread_labels__get(l, pin), want);
	ck_assert_str_eq(sum_thread_labels__get(l, main_tid), "main");
	sum_thread_labels__delete(l);
	prof_store__close(s);
}
END_TEST

START_TEST(thread_labels_name_nccls_proxy_and_the_watchdogs_polling)
{
	struct prof_store *s = open_data("ddp/ddp2_rank0.sqlite");
	struct sum_thread_labels *l = load(s);
	int64_t proxy = one_tid(s, "SELECT globalTid FROM " PROF_T_THREAD_NAMES " t JOIN " PROF_T_STRINGS
				   " v ON v.id = t.nameId WHERE v.value GLOB 'NCCL Progress*'");
	int64_t poll = one_tid(s, ONLY_CALLS("cudaEventQuery"));
	char want[64];

	ck_assert_str_eq(sum_thread_labels__get(l, proxy), "NCCL proxy (GPU 0)");
	snprintf(want, sizeof want, "event polling (thread %" PRIu32 ")", prof_tid_of(poll));
	ck_assert_str_eq(sum_thread_labels__get(l, poll), want);
	sum_thread_labels__delete(l);
	prof_store__close(s);
}
END_TEST

START_TEST(thread_labels_read_nsys_exports_the_same_way)
{
	struct prof_store *s = open_data("nsys/saxpy-mpi-cuda-rank0.sqlite");
	struct sum_thread_labels *l = load(s);
	int64_t main_tid = one_tid(s, "SELECT DISTINCT globalTid FROM " PROF_T_RUNTIME
				      " WHERE (globalTid & 16777215) = ((globalTid >> 24) & 16777215)");

	/* nsys keeps the name MPI gave the main thread */
	ck_assert_str_eq(sum_thread_labels__get(l, main_tid), "main (MPI Rank 0)");
	sum_thread_labels__delete(l);
	prof_store__close(s);

	/* cloverleaf's main thread has its process's name: only "main" */
	s = open_data("nsys/cloverleaf-cuda.sqlite");
	l = load(s);
	main_tid = one_tid(s, "SELECT DISTINCT globalTid FROM " PROF_T_RUNTIME
			      " WHERE (globalTid & 16777215) = ((globalTid >> 24) & 16777215)");
	ck_assert_str_eq(sum_thread_labels__get(l, main_tid), "main");
	sum_thread_labels__delete(l);
	prof_store__close(s);
}
END_TEST

/* Every thread's label from the calls walked once (sum_thread_labels__load)
 * is the one the statements read (sum_thread_labels__load_from of the
 * same tables), on captures of every kind and on a copy whose threads'
 * ids are text, which the statements compare their own way; how many
 * threads were compared. */
static int walked_as_read(const char *path)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_NVTX, PROF_T_THREAD_NAMES };
	struct prof_store *s = open_path(path), *other = open_path(path);
	struct sum_thread_tables t = { 0 };
	struct sum_thread_labels *walked = load(s), *read = NULL;
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	size_t n = 0;
	int threads = 0;

	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
		if (prof_store__has_table(other, tables[i]))
			t.threads[n++] = tables[i];
	t.calls[0] = prof_store__has_table(other, PROF_T_RUNTIME) ? PROF_T_RUNTIME : NULL;
	t.calls[1] = prof_store__has_table(other, PROF_T_DRIVER) ? PROF_T_DRIVER : NULL;
	ck_assert_msg(sum_thread_labels__load_from(other, &t, &read, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_cursor__open(other, "SELECT DISTINCT globalTid FROM " PROF_T_RUNTIME " WHERE globalTid"
					       " IS NOT NULL UNION SELECT globalTid FROM " PROF_T_DRIVER, &c, &err) == 0,
		      "%s", err.msg);
	while (prof_cursor__next(c, &err) == 1) {
		int64_t tid = prof_cursor__int64(c, 0);
		char a[128];

		snprintf(a, sizeof a, "%s", sum_thread_labels__get(walked, tid));
		ck_assert_msg(strcmp(a, sum_thread_labels__get(read, tid)) == 0, "%s: thread %lld: %s, read %s", path,
			      (long long)tid, a, sum_thread_labels__get(read, tid));
		threads++;
	}
	prof_cursor__close(c);
	sum_thread_labels__delete(read);
	sum_thread_labels__delete(walked);
	prof_store__close(other);
	prof_store__close(s);
	return threads;
}

START_TEST(thread_labels_walked_as_the_statements_read)
{
	static const char *const captures[] = {
		"ddp/ddp2_even.sqlite", "ddp/two_gpus/ddp2_straggler.sqlite", "corpus/timm_resnet_dataloader.sqlite",
		"python/py_hf_gpt2_train.sqlite", "nsys/saxpy-mpi-cuda-rank0.sqlite", "nsys/cloverleaf-cuda.sqlite",
	};
	char path[4096];
	int threads = 0;

	for (size_t i = 0; i < sizeof captures / sizeof *captures; i++)
		threads += walked_as_read(testutil_data_path(captures[i]));
	ck_assert_int_gt(threads, 30);
	snprintf(path, sizeof path, "%s", testutil_tmp_path("thread_label_text_tid.sqlite"));
	testutil_copy_file(testutil_data_path("corpus/timm_resnet_dataloader.sqlite"), path);
	testutil_sqlite3(path, "UPDATE " PROF_T_DRIVER " SET globalTid = 'a thread' WHERE rowid = 3");
	ck_assert_int_gt(walked_as_read(path), 3);
}
END_TEST

START_TEST(thread_labels_unknown_thread_reads_as_its_tid)
{
	struct prof_store *s = open_data("clean_loop.sqlite");
	struct sum_thread_labels *l = load(s);

	ck_assert_str_eq(sum_thread_labels__get(l, prof_global_tid(1, 424242)), "thread 424242");
	sum_thread_labels__delete(l);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("thread_label");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, thread_label_main_is_the_thread_whose_tid_is_its_pid);
	tcase_add_test(tc, thread_labels_walked_as_the_statements_read);
	tcase_add_test(tc, thread_label_keeps_the_programs_own_name);
	tcase_add_test(tc, thread_label_ignores_the_inherited_process_name);
	tcase_add_test(tc, thread_label_names_pytorch_threads_in_words);
	tcase_add_test(tc, thread_label_names_nccl_threads_by_gpu);
	tcase_add_test(tc, thread_label_says_what_an_unnamed_thread_does);
	tcase_add_test(tc, thread_label_fits_a_small_buffer);
	tcase_add_test(tc, thread_labels_name_a_dataloaders_pin_memory_thread);
	tcase_add_test(tc, thread_labels_name_nccls_proxy_and_the_watchdogs_polling);
	tcase_add_test(tc, thread_labels_read_nsys_exports_the_same_way);
	tcase_add_test(tc, thread_labels_unknown_thread_reads_as_its_tid);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
