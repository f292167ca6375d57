/* test_store_merge.c - folding captures into one (rows kept, string ids and
 * correlation ids re-mapped, counters added) and reading a capture while its
 * writer is still running. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "testutil.h"

struct named_kernel {
	const char *name;
	int64_t start_ns, end_ns;
	int32_t correlation_id;
};

/* One process's capture: each kernel with its launching API call. Names
 * are interned in the given order so ids differ between captures. */
static void write_process(const char *path, uint32_t pid, const struct named_kernel *ks, int n,
			  int64_t dropped)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;

	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_writer__process(w, pid, "worker"), 0);
	for (int i = 0; i < n; i++) {
		struct prof_kernel k = {
			.start_ns = ks[i].start_ns, .end_ns = ks[i].end_ns,
			.correlation_id = ks[i].correlation_id, .global_pid = prof_global_pid(pid),
			.demangled_name = prof_writer__string(w, ks[i].name),
		};
		struct prof_api_call a = {
			.start_ns = ks[i].start_ns - 50, .end_ns = ks[i].start_ns - 40,
			.global_tid = prof_global_tid(pid, pid), .correlation_id = ks[i].correlation_id,
			.name_id = prof_writer__string(w, "cudaLaunchKernel_v7000"),
		};

		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
		ck_assert_int_eq(prof_writer__api(w, PROF_API_RUNTIME, &a), 0);
	}
	ck_assert_int_eq(prof_writer__count(w, "dropped_records", dropped), 0);
	ck_assert_int_eq(prof_writer__meta(w, "command", path), 0);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
}

static const struct named_kernel proc_a[] = {
	{ "alpha", 100, 200, 1 }, { "shared", 300, 450, 2 }, { "alpha", 500, 520, 3 },
};
static const struct named_kernel proc_b[] = {
	{ "beta", 1100, 1300, 1 }, { "gamma", 1400, 1410, 2 }, { "shared", 1500, 1700, 3 },
	{ "beta", 1800, 1850, 4 },
};

static const char *expected_name(int64_t start_ns)
{
	for (size_t i = 0; i < sizeof proc_a / sizeof proc_a[0]; i++)
		if (proc_a[i].start_ns == start_ns)
			return proc_a[i].name;
	for (size_t i = 0; i < sizeof proc_b / sizeof proc_b[0]; i++)
		if (proc_b[i].start_ns == start_ns)
			return proc_b[i].name;
	return NULL;
}

static struct prof_store *merged_store(char *out, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	char a[512], b[512];

	snprintf(a, sizeof a, "%s", testutil_tmp_path("proc-a.sqlite"));
	write_process(a, 100, proc_a, 3, 5);
	snprintf(b, sizeof b, "%s", testutil_tmp_path("proc-b.sqlite"));
	write_process(b, 200, proc_b, 4, 7);
	snprintf(out, cap, "%s", testutil_tmp_path("merged.sqlite"));
	ck_assert_msg(prof_writer__create(out, 0, &w, &err) == 0, "%s", err.msg);
	/* a string the destination interned first shifts every source id */
	prof_writer__string(w, "only_in_destination");
	ck_assert_int_eq(prof_writer__meta(w, "command", "merged run"), 0);
	ck_assert_msg(prof_writer__merge(w, a, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge(w, b, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open(out, &s, &err) == 0, "%s", err.msg);
	return s;
}

START_TEST(store_merge_keeps_all_rows_and_names)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct prof_store *s;
	char path[512];
	int rows = 0;

	s = merged_store(path, sizeof path);
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 7);
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_RUNTIME"), 7);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT k.start, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
					   " JOIN StringIds s ON s.id = k.demangledName", &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		const char *want = expected_name(prof_cursor__int64(c, 0));

		ck_assert_ptr_nonnull(want);
		ck_assert_str_eq(prof_cursor__text(c, 1), want);
		rows++;
	}
	prof_cursor__close(c);
	ck_assert_int_eq(rows, 7);
	prof_store__close(s);
}
END_TEST

START_TEST(store_merge_interns_each_text_once)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct prof_store *s;
	char path[512];

	s = merged_store(path, sizeof path);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT count(*), count(DISTINCT value) FROM StringIds",
					   &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	/* only_in_destination, alpha, shared, beta, gamma, cudaLaunchKernel_v7000 */
	ck_assert_int_eq(prof_cursor__int64(c, 0), 6);
	ck_assert_int_eq(prof_cursor__int64(c, 1), 6);
	prof_cursor__close(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_merge_keeps_api_kernel_pairs_apart)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct prof_store *s;
	char path[512];
	int rows = 0;

	s = merged_store(path, sizeof path);
	/* each kernel must join exactly its own launch (50 ns before it) */
	ck_assert_int_eq(prof_cursor__open(s, "SELECT k.start, r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
					   " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
					   " ON r.correlationId = k.correlationId", &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		ck_assert_int_eq(prof_cursor__int64(c, 1), prof_cursor__int64(c, 0) - 50);
		rows++;
	}
	prof_cursor__close(c);
	ck_assert_int_eq(rows, 7);
	prof_store__close(s);
}
END_TEST

START_TEST(store_merge_adds_counters_and_keeps_destination_meta)
{
	struct prof_store *s;
	char path[512], *v;

	s = merged_store(path, sizeof path);
	ck_assert_int_eq(prof_store__counter(s, "dropped_records"), 5 + 7);
	v = prof_store__meta(s, "command");
	ck_assert_str_eq(v, "merged run");
	free(v);
	ck_assert_int_eq(prof_store__count(s, "PROCESSES"), 2);
	prof_store__close(s);
}
END_TEST

START_TEST(store_merge_refuses_foreign_file_and_keeps_writing)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	struct prof_kernel k = { .start_ns = 1, .end_ns = 2 };
	char out[512], bogus[512];
	FILE *f;

	snprintf(bogus, sizeof bogus, "%s", testutil_tmp_path("bogus.sqlite"));
	f = fopen(bogus, "w");
	fputs("not a database at all, just some words\n", f);
	fclose(f);
	snprintf(out, sizeof out, "%s", testutil_tmp_path("merge-out.sqlite"));
	ck_assert_int_eq(prof_writer__create(out, 0, &w, &err), 0);
	ck_assert_int_eq(prof_writer__merge(w, bogus, &err), PROF_E_NOT_SQLITE);
	ck_assert_ptr_nonnull(strstr(err.msg, bogus));
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	ck_assert_int_eq(prof_writer__finish(w, &err), 0);
	ck_assert_int_eq(prof_store__open(out, &s, &err), 0);
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	prof_store__close(s);
}
END_TEST

/* The first column of the first row of sql. */
static int64_t scalar(struct prof_store *s, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return v;
}

/* Real captures a and b merged into a fresh capture, opened. */
static struct prof_store *merge_fixtures(const char *a, const char *b)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	char out[512];

	snprintf(out, sizeof out, "%s", testutil_tmp_path("merged-fixtures.sqlite"));
	ck_assert_msg(prof_writer__create(out, 0, &w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge(w, testutil_data_path(a), &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge(w, testutil_data_path(b), &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open(out, &s, &err) == 0, "%s", err.msg);
	return s;
}

static struct prof_store *open_fixture(const char *name)
{
	struct prof_error err = { 0 };
	struct prof_store *s;

	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s", err.msg);
	return s;
}

/* Two processes that each sampled their device 0 stay two series: the
 * second's samplers move above the first's (typeId's bits over the device),
 * every sample kept and still described. */
START_TEST(store_merge_keeps_two_processes_gpu_metric_series_apart)
{
	static const char *const a = "gpu_metrics/dram_stream.sqlite", *const b = "gpu_metrics/small_grid.sqlite";
	struct prof_store *sa = open_fixture(a), *sb = open_fixture(b), *m = merge_fixtures(a, b);
	int64_t na = prof_store__count(sa, "GPU_METRICS"), nb = prof_store__count(sb, "GPU_METRICS");

	ck_assert_int_gt(na, 0);
	ck_assert_int_gt(nb, 0);
	ck_assert_int_eq(prof_store__count(m, "GPU_METRICS"), na + nb);
	ck_assert_int_eq(scalar(m, "SELECT count(DISTINCT typeId) FROM TARGET_INFO_GPU_METRICS"), 2);
	ck_assert_int_eq(scalar(m, "SELECT count(*) FROM GPU_METRICS WHERE typeId = 0"), na);
	ck_assert_int_eq(scalar(m, "SELECT count(*) FROM GPU_METRICS WHERE typeId = 256"), nb);
	ck_assert_int_eq(scalar(m, "SELECT count(*) FROM GPU_METRICS g WHERE NOT EXISTS (SELECT 1 FROM"
			 " TARGET_INFO_GPU_METRICS t WHERE t.typeId = g.typeId AND t.metricId = g.metricId)"), 0);
	ck_assert_int_eq(scalar(m, "SELECT typeId & 255 FROM TARGET_INFO_GPU_METRICS WHERE typeId = 256"
			 " LIMIT 1"), 0);
	prof_store__close(sa);
	prof_store__close(sb);
	prof_store__close(m);
}
END_TEST

/* The captures of two ranks merged: each keeps its rank, clock pairs, GPUs,
 * payload schemas and payloads, once. */
START_TEST(store_merge_keeps_each_ranks_job_rows_and_payloads)
{
	static const char *const a = "ddp/ddp2_rank0.sqlite", *const b = "ddp/ddp2_rank1.sqlite";
	static const char *const tables[] = { "PERFKIT_CLOCKS", "PERFKIT_PROCESS_GPUS",
					      "NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES",
					      "NVTX_PAYLOAD_ENUM_ENTRIES" };
	struct prof_store *sa = open_fixture(a), *sb = open_fixture(b), *m = merge_fixtures(a, b);
	static const char *const payloads = "SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL";

	ck_assert_int_eq(scalar(m, "SELECT count(*) FROM PERFKIT_PROCESS_INFO"), 2);
	ck_assert_int_eq(scalar(m, "SELECT sum(rank) FROM PERFKIT_PROCESS_INFO"), 1);
	ck_assert_int_eq(scalar(m, "SELECT count(DISTINCT globalPid) FROM PERFKIT_PROCESS_INFO"), 2);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		ck_assert_int_gt(prof_store__count(sa, tables[i]), 0);
		ck_assert_int_eq(prof_store__count(m, tables[i]),
				 prof_store__count(sa, tables[i]) + prof_store__count(sb, tables[i]));
	}
	ck_assert_int_gt(scalar(sa, payloads), 0);
	ck_assert_int_eq(scalar(m, payloads), scalar(sa, payloads) + scalar(sb, payloads));
	prof_store__close(sa);
	prof_store__close(sb);
	prof_store__close(m);
}
END_TEST

/* Two captures with unified memory merged: every fault and migration of
 * each, with the faulting function's name, the pages' address and the
 * migration's cause. */
START_TEST(store_merge_keeps_unified_memory_faults_and_migrations)
{
	static const char *const a = "um_faults.sqlite", *const b = "corpus/managed_prefetch.sqlite";
	static const char *const sums[] = {
		"SELECT count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS",
		"SELECT count(*) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS",
		"SELECT coalesce(sum(numberOfPageFaults), 0) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS",
		"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (11, 12, 13)",
		"SELECT coalesce(sum(migrationCause), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY",
		"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE virtualAddress IS NOT NULL",
		"SELECT count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS f JOIN StringIds s"
		" ON s.id = f.CpuInstruction JOIN StringIds m ON m.id = f.module",
	};
	struct prof_store *sa = open_fixture(a), *sb = open_fixture(b), *m = merge_fixtures(a, b);

	ck_assert_int_gt(scalar(sa, sums[1]), 0);
	ck_assert_int_gt(scalar(sb, sums[0]), 0);
	for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
		ck_assert_msg(scalar(m, sums[i]) == scalar(sa, sums[i]) + scalar(sb, sums[i]), "%s", sums[i]);
	prof_store__close(sa);
	prof_store__close(sb);
	prof_store__close(m);
}
END_TEST

START_TEST(store_reader_sees_flushed_rows_of_a_live_capture)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	struct prof_kernel k = { 0 };
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("live.sqlite"));
	ck_assert_int_eq(prof_writer__create(path, 0, &w, &err), 0);
	k.demangled_name = prof_writer__string(w, "live_kernel");
	for (int i = 0; i < 250; i++) {
		k.start_ns = i * 100;
		k.end_ns = k.start_ns + 10;
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	}
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_store__kind(s), PROF_STORE_PERFKIT);
	ck_assert(!prof_store__is_finished(s));
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 250);
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 290);
	prof_store__close(s);
	prof_writer__delete(w);
}
END_TEST

START_TEST(store_deleted_writer_leaves_a_readable_unfinished_file)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	struct prof_kernel k = { .start_ns = 5, .end_ns = 9 };
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("dying.sqlite"));
	ck_assert_int_eq(prof_writer__create(path, 0, &w, &err), 0);
	for (int i = 0; i < 17; i++)
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	prof_writer__delete(w);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert(!prof_store__is_finished(s));
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 17);
	prof_store__close(s);
}
END_TEST

/* A's and B's files joined as one job: B of host 3, its times moved by
 * +1000 ns plus 1 ns per 100 ns of its time past 1000. */
static struct prof_store *mapped_store(void)
{
	const struct prof_merge_map b_map = { .host_index = 3, .shift_ns = 1000, .rate = 0.01,
					      .pivot_ns = 1000 };
	const struct prof_merge_map a_map = { .host_index = 0 };
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	char a[512], b[512], out[512];

	snprintf(a, sizeof a, "%s", testutil_tmp_path("host-a.sqlite"));
	write_process(a, 100, proc_a, 3, 0);
	snprintf(b, sizeof b, "%s", testutil_tmp_path("host-b.sqlite"));
	/* the same pid on another host */
	write_process(b, 100, proc_b, 4, 0);
	snprintf(out, sizeof out, "%s", testutil_tmp_path("job.sqlite"));
	ck_assert_msg(prof_writer__create(out, 0, &w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge_mapped(w, a, &a_map, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge_mapped(w, b, &b_map, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open(out, &s, &err) == 0, "%s", err.msg);
	return s;
}

START_TEST(store_merge_mapped_keeps_one_pid_of_two_hosts_apart)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct prof_store *s = mapped_store();
	int rows = 0;

	ck_assert_int_eq(prof_store__count(s, "PROCESSES"), 2);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT k.globalPid, r.globalTid FROM"
					   " CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
					   " ON r.correlationId = k.correlationId ORDER BY k.start",
					   &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		int64_t gp = prof_cursor__int64(c, 0), gt = prof_cursor__int64(c, 1);

		/* the first three are A's, host 0; then B's, host 3 */
		ck_assert_uint_eq(prof_host_of(gp), rows < 3 ? 0 : 3);
		ck_assert_uint_eq(prof_host_of(gt), rows < 3 ? 0 : 3);
		ck_assert_uint_eq(prof_pid_of(gp), 100);
		ck_assert_uint_eq(prof_pid_of(gt), 100);
		ck_assert_uint_eq(prof_tid_of(gt), 100);
		rows++;
	}
	prof_cursor__close(c);
	ck_assert_int_eq(rows, 7);
	prof_store__close(s);
}
END_TEST

START_TEST(store_merge_mapped_moves_times_and_keeps_durations)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	struct prof_store *s = mapped_store();
	int i = 0;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"
					   " ORDER BY start", &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		const struct named_kernel *k = i < 3 ? &proc_a[i] : &proc_b[i - 3];
		/* B's kernel at t lands at t + 1000 + (t - 1000) / 100 */
		int64_t moved = i < 3 ? 0 : 1000 + (k->start_ns - 1000) / 100;

		ck_assert_int_eq(prof_cursor__int64(c, 0), k->start_ns + moved);
		ck_assert_int_eq(prof_cursor__int64(c, 1) - prof_cursor__int64(c, 0),
				 k->end_ns - k->start_ns);
		i++;
	}
	prof_cursor__close(c);
	ck_assert_int_eq(i, 7);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_merge");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_merge_keeps_all_rows_and_names);
	tcase_add_test(tc, store_merge_interns_each_text_once);
	tcase_add_test(tc, store_merge_keeps_api_kernel_pairs_apart);
	tcase_add_test(tc, store_merge_adds_counters_and_keeps_destination_meta);
	tcase_add_test(tc, store_merge_refuses_foreign_file_and_keeps_writing);
	tcase_add_test(tc, store_merge_keeps_two_processes_gpu_metric_series_apart);
	tcase_add_test(tc, store_merge_keeps_each_ranks_job_rows_and_payloads);
	tcase_add_test(tc, store_merge_mapped_keeps_one_pid_of_two_hosts_apart);
	tcase_add_test(tc, store_merge_mapped_moves_times_and_keeps_durations);
	tcase_add_test(tc, store_merge_keeps_unified_memory_faults_and_migrations);
	tcase_add_test(tc, store_reader_sees_flushed_rows_of_a_live_capture);
	tcase_add_test(tc, store_deleted_writer_leaves_a_readable_unfinished_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
