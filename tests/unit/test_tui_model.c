/* test_tui_model.c - perfkit top's incremental model: reading a store in
 * pieces gives what reading it at once gives, nothing is read twice, the
 * kernel table sorts and filters, a replay follows its clock, and the feed
 * follows a `perfkit run` through its per-process files to the end. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/store.h"
#include "testutil.h"
#include "top_feed.h"
#include "top_model.h"
#include "top_source.h"

#define BASE_NS 1700000000000000000LL
#define STEP_NS 1000000LL /* one event per millisecond: 1000 per rate bucket */
#define NAMES 5

static const int64_t tid_a = (int64_t)4242 << 24 | 4242, tid_b = (int64_t)4242 << 24 | 4243;

/* ---- a deterministic capture ------------------------------------------------ */

static struct prof_writer *new_writer(const char *path)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err) == 0, "%s",
		      err.msg);
	return w;
}

static void flush(struct prof_writer *w)
{
	struct prof_error err = { 0 };

	ck_assert_msg(prof_writer__flush(w, &err) == 0, "%s", err.msg);
}

static void finish(struct prof_writer *w)
{
	struct prof_error err = { 0 };

	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
}

static void range(struct prof_writer *w, const char *name, int64_t s, int64_t e, int64_t tid)
{
	struct prof_nvtx_event ev = {
		.start_ns = s, .end_ns = e, .event_type = PROF_NVTX_PUSHPOP, .global_tid = tid,
		.end_global_tid = tid, .text_id = prof_writer__string(w, name),
	};

	ck_assert_int_eq(prof_writer__nvtx(w, &ev), 0);
}

/* Event i of the capture, for i in [from, to), written as the collector
 * writes them (NVTX ranges when they end, so children first). */
static void write_events(struct prof_writer *w, uint32_t pid, int from, int to)
{
	char name[32];

	for (int i = from; i < to; i++) {
		int64_t t = BASE_NS + i * STEP_NS;
		struct prof_kernel k = {
			.start_ns = t, .end_ns = t + 1000 + (i % 7) * 100, .correlation_id = i,
			.global_pid = prof_global_pid(pid), .stream_id = 7,
		};

		snprintf(name, sizeof name, "kernel_%d", i % NAMES);
		k.demangled_name = k.short_name = prof_writer__string(w, name);
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
		if (i % 3 == 0) {
			struct prof_memcpy m = { .start_ns = t + 2000, .end_ns = t + 3000,
						 .bytes = 1000 + i, .copy_kind = PROF_COPY_HTOD,
						 .global_pid = prof_global_pid(pid) };

			ck_assert_int_eq(prof_writer__memcpy(w, &m), 0);
		}
		if (i % 10 == 0 || i % 20 == 5 || i % 15 == 0) {
			struct prof_memory_event e = {
				.start_ns = t, .global_pid = prof_global_pid(pid), .bytes = 4096,
				.mem_kind = i % 15 == 0 ? PROF_MEM_PINNED : PROF_MEM_DEVICE,
				.operation = i % 20 == 5 ? 1 : 0,
			};

			ck_assert_int_eq(prof_writer__memory(w, &e), 0);
		}
		if (i % 10 == 9) {
			int64_t s = BASE_NS + (i - 9) * STEP_NS;
			int64_t a = (int64_t)pid << 24 | (tid_a & 0xFFFFFF);

			range(w, "forward", s, s + 4 * STEP_NS, a);
			range(w, "backward", s + 5 * STEP_NS, s + 9 * STEP_NS, a);
			range(w, "step", s, s + 9 * STEP_NS, a);
			range(w, "io", s + STEP_NS, s + 2 * STEP_NS,
			      (int64_t)pid << 24 | (tid_b & 0xFFFFFF));
		}
	}
}

static struct top_source *open_source(const char *path, enum top_read_mode mode)
{
	struct top_source *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(top_source__open(path, mode, &s, &err) == 0, "%s", err.msg);
	return s;
}

static void read_all(struct top_source *s, struct top_model *m)
{
	struct prof_error err = { 0 };

	ck_assert_msg(top_source__read(s, m, INT64_MAX, &err) == 1, "%s", err.msg);
}

static int32_t kernel_index(const struct top_model *m, const char *name)
{
	return name_table__find(&m->kernel_names, name);
}

/* Everything the screen shows from the model, compared field by field. */
static void assert_same_totals(const struct top_model *a, const struct top_model *b)
{
	ck_assert_int_eq(a->kernel_count, b->kernel_count);
	ck_assert_int_eq(a->kernel_total_ns, b->kernel_total_ns);
	ck_assert_int_eq(a->copy_count, b->copy_count);
	ck_assert_int_eq(a->copy_bytes, b->copy_bytes);
	ck_assert_int_eq(a->device_memory_bytes, b->device_memory_bytes);
	ck_assert_int_eq(a->first_ns, b->first_ns);
	ck_assert_int_eq(a->last_ns, b->last_ns);
	ck_assert_uint_eq(a->kernel_names.n, b->kernel_names.n);
	for (size_t i = 0; i < a->kernel_names.n; i++) {
		const char *name = name_table__name(&a->kernel_names, (int32_t)i);
		int32_t j = kernel_index(b, name);

		ck_assert_msg(j >= 0, "%s missing", name);
		ck_assert_int_eq(a->kernels[i].count, b->kernels[j].count);
		ck_assert_int_eq(a->kernels[i].total_ns, b->kernels[j].total_ns);
		ck_assert_int_eq(a->kernels[i].min_ns, b->kernels[j].min_ns);
		ck_assert_int_eq(a->kernels[i].max_ns, b->kernels[j].max_ns);
	}
	ck_assert_uint_eq(a->range_names.n, b->range_names.n);
	for (size_t i = 0; i < a->range_names.n; i++) {
		int32_t j = name_table__find(&b->range_names,
					     name_table__name(&a->range_names, (int32_t)i));

		ck_assert_int_ge(j, 0);
		ck_assert_int_eq(a->ranges[i].count, b->ranges[j].count);
		ck_assert_int_eq(a->ranges[i].total_ns, b->ranges[j].total_ns);
	}
	ck_assert(memcmp(&a->kernels_hist, &b->kernels_hist, sizeof a->kernels_hist) == 0);
	ck_assert(memcmp(&a->copies_hist, &b->copies_hist, sizeof a->copies_hist) == 0);
	ck_assert(memcmp(&a->copy_bytes_hist, &b->copy_bytes_hist, sizeof a->copy_bytes_hist) == 0);
	ck_assert_uint_eq(a->n_threads, b->n_threads);
	for (size_t i = 0; i < a->n_threads; i++) {
		ck_assert_int_eq(a->threads[i].global_tid, b->threads[i].global_tid);
		ck_assert_int_eq(a->threads[i].depth, b->threads[i].depth);
	}
}

/* What the test wrote for events [0, n) of one process, independently. */
static void assert_expected(const struct top_model *m, int n)
{
	int64_t kernels_ns = 0, copies = 0, copy_bytes = 0, device = 0, k0 = 0;

	for (int i = 0; i < n; i++) {
		kernels_ns += 1000 + (i % 7) * 100;
		k0 += i % NAMES == 0;
		if (i % 3 == 0) {
			copies++;
			copy_bytes += 1000 + i;
		}
		if ((i % 10 == 0 || i % 20 == 5 || i % 15 == 0) && i % 15 != 0)
			device += i % 20 == 5 ? -4096 : 4096;
	}
	ck_assert_int_eq(m->kernel_count, n);
	ck_assert_int_eq(m->kernel_total_ns, kernels_ns);
	ck_assert_int_eq(m->kernels[kernel_index(m, "kernel_0")].count, k0);
	ck_assert_int_eq(m->copy_count, copies);
	ck_assert_int_eq(m->copy_bytes, copy_bytes);
	ck_assert_int_eq(m->device_memory_bytes, device);
	ck_assert_int_eq(m->ranges[name_table__find(&m->range_names, "step")].count, n / 10);
}

/* ---- reading in pieces ---------------------------------------------------------- */

START_TEST(model_store_fed_in_two_halves_equals_fed_at_once)
{
	const char *p = testutil_tmp_path("halves.sqlite");
	char path[512];
	struct top_model halves, once;
	struct prof_writer *w;
	struct top_source *s;

	snprintf(path, sizeof path, "%s", p);
	ck_assert_int_eq(top_model__init(&halves), 0);
	ck_assert_int_eq(top_model__init(&once), 0);
	w = new_writer(path);
	write_events(w, 4242, 0, 1500);
	flush(w);
	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &halves);
	assert_expected(&halves, 1500);
	/* let the writer have the file to itself for its finish, as top does */
	top_source__disconnect(s);
	write_events(w, 4242, 1500, 3000);
	finish(w);
	read_all(s, &halves);
	top_source__close(s);

	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &once);
	top_source__close(s);
	assert_same_totals(&halves, &once);
	assert_expected(&once, 3000);
	top_model__exit(&halves);
	top_model__exit(&once);
}
END_TEST

START_TEST(model_reads_each_row_once)
{
	char path[512];
	struct top_model m;
	struct prof_writer *w;
	struct top_source *s;
	int64_t rows;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("once.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	w = new_writer(path);
	write_events(w, 4242, 0, 500);
	finish(w);
	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &m);
	rows = m.rows_read;
	ck_assert_int_gt(rows, 500);
	read_all(s, &m);
	read_all(s, &m);
	ck_assert_int_eq(m.rows_read, rows);
	ck_assert_int_eq(m.kernel_count, 500);
	top_source__close(s);
	top_model__exit(&m);
}
END_TEST

START_TEST(model_stops_at_the_deadline_and_carries_on)
{
	char path[512];
	struct top_model m, ref;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct top_source *s;
	int rc, rounds = 0;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("deadline.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_model__init(&ref), 0);
	w = new_writer(path);
	write_events(w, 4242, 0, 20000);
	finish(w);
	s = open_source(path, TOP_READ_ROWID);
	/* a deadline already past: a few hundred rows per call at most */
	while ((rc = top_source__read(s, &m, 0, &err)) == 0)
		rounds++;
	ck_assert_int_eq(rc, 1);
	ck_assert_int_gt(rounds, 5);
	top_source__close(s);
	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &ref);
	top_source__close(s);
	assert_same_totals(&m, &ref);
	top_model__exit(&m);
	top_model__exit(&ref);
}
END_TEST

/* ---- the kernel table -------------------------------------------------------------- */

/* name, count, total: averages 10, 5, 40, 2.5 */
static void table_model(struct top_model *m)
{
	static const struct { const char *name; int count; int64_t each_ns; } rows[] = {
		{ "alpha", 10, 10 }, { "Beta", 40, 5 }, { "gamma_gemm", 2, 40 },
		{ "delta_GEMM", 20, 2 },
	};

	ck_assert_int_eq(top_model__init(m), 0);
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		int32_t i = top_model__kernel_name(m, rows[r].name);

		for (int c = 0; c < rows[r].count; c++) {
			int64_t t = BASE_NS + c * 100 + (rows[r].count == 20 ? c % 2 : 0);

			top_model__add_kernel(m, i, t, t + rows[r].each_ns + (rows[r].count == 20 ? c % 2 : 0));
		}
	}
}

static const char *row_name(const struct top_model *m, const struct top_view *v, size_t i)
{
	return name_table__name(&m->kernel_names, v->rows[i]);
}

static void assert_order(const struct top_model *m, enum top_sort sort, bool ascending,
			 const char *const want[4])
{
	struct top_view v = { 0 };

	ck_assert_int_eq(top_model__kernel_view(m, sort, ascending, NULL, &v), 0);
	ck_assert_uint_eq(v.n, 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(!strcmp(row_name(m, &v, i), want[i]), "sort %d row %zu: %s, want %s",
			      sort, i, row_name(m, &v, i), want[i]);
	top_view__exit(&v);
}

START_TEST(model_kernel_view_sorts_by_each_column)
{
	struct top_model m;
	/* totals: alpha 100, Beta 200, gamma 80, delta 50 (20*2 + 10) */
	static const char *const by_total[] = { "Beta", "alpha", "gamma_gemm", "delta_GEMM" };
	static const char *const by_count[] = { "Beta", "delta_GEMM", "alpha", "gamma_gemm" };
	static const char *const by_avg[] = { "gamma_gemm", "alpha", "Beta", "delta_GEMM" };
	static const char *const by_name[] = { "Beta", "alpha", "delta_GEMM", "gamma_gemm" };
	static const char *const by_name_desc[] = { "gamma_gemm", "delta_GEMM", "alpha", "Beta" };
	static const char *const by_total_asc[] = { "delta_GEMM", "gamma_gemm", "alpha", "Beta" };

	table_model(&m);
	ck_assert_int_eq(m.kernels[kernel_index(&m, "delta_GEMM")].total_ns, 50);
	assert_order(&m, TOP_SORT_TOTAL, false, by_total);
	assert_order(&m, TOP_SORT_SHARE, false, by_total);
	assert_order(&m, TOP_SORT_COUNT, false, by_count);
	assert_order(&m, TOP_SORT_AVG, false, by_avg);
	assert_order(&m, TOP_SORT_NAME, true, by_name);
	assert_order(&m, TOP_SORT_NAME, false, by_name_desc);
	assert_order(&m, TOP_SORT_TOTAL, true, by_total_asc);
	top_model__exit(&m);
}
END_TEST

START_TEST(model_kernel_view_filters_by_name_ignoring_case)
{
	struct top_model m;
	struct top_view v = { 0 };

	table_model(&m);
	ck_assert_int_eq(top_model__kernel_view(&m, TOP_SORT_TOTAL, false, "gemm", &v), 0);
	ck_assert_uint_eq(v.n, 2);
	ck_assert_str_eq(row_name(&m, &v, 0), "gamma_gemm");
	ck_assert_str_eq(row_name(&m, &v, 1), "delta_GEMM");
	ck_assert_int_eq(top_model__kernel_view(&m, TOP_SORT_TOTAL, false, "nothing", &v), 0);
	ck_assert_uint_eq(v.n, 0);
	ck_assert_int_eq(top_model__kernel_view(&m, TOP_SORT_TOTAL, false, "", &v), 0);
	ck_assert_uint_eq(v.n, 4);
	top_view__exit(&v);
	top_model__exit(&m);
}
END_TEST

START_TEST(model_sanitises_names_for_the_terminal)
{
	struct top_model m;
	int32_t i;

	ck_assert_int_eq(top_model__init(&m), 0);
	i = top_model__kernel_name(&m, "esc\x1b[31mred\xff");
	ck_assert_str_eq(name_table__name(&m.kernel_names, i), "esc?[31mred\xEF\xBF\xBD");
	ck_assert_int_eq(top_model__kernel_name(&m, "esc\x1b[31mred\xff"), i);
	ck_assert_str_eq(name_table__name(&m.kernel_names, top_model__kernel_name(&m, NULL)),
			 TOP_UNKNOWN_NAME);
	top_model__exit(&m);
}
END_TEST

/* ---- NVTX stacks ------------------------------------------------------------------- */

START_TEST(model_completed_stack_keeps_the_last_nesting)
{
	char path[512];
	struct top_model m;
	struct prof_writer *w;
	struct top_source *s;
	const struct top_thread *t;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("stack.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	w = new_writer(path);
	write_events(w, 4242, 0, 30);
	finish(w);
	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &m);
	top_source__close(s);
	t = top_model__thread(&m, tid_a);
	ck_assert_int_eq(t->depth, 2);
	ck_assert_str_eq(name_table__name(&m.range_names, t->frame[0].range), "step");
	ck_assert_str_eq(name_table__name(&m.range_names, t->frame[1].range), "backward");
	ck_assert_int_eq(t->frame[0].start_ns, BASE_NS + 20 * STEP_NS);
	top_model__exit(&m);
}
END_TEST

/* ---- replay ----------------------------------------------------------------------- */

START_TEST(model_replay_reads_rows_up_to_the_clock)
{
	char path[512];
	struct top_model m, ref;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct top_source *s;
	const struct top_thread *t;
	int64_t origin, clock;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("replay.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_model__init(&ref), 0);
	m.nvtx_mode = TOP_NVTX_AT_CLOCK;
	w = new_writer(path);
	write_events(w, 4242, 0, 100);
	finish(w);
	s = open_source(path, TOP_READ_REPLAY);
	ck_assert_int_eq(top_source__replay_origin(s, &m, &origin, &err), 0);
	ck_assert_int_eq(origin, BASE_NS);
	/* inside event 42: step 40..49 > forward 40..44 are open */
	clock = BASE_NS + 42 * STEP_NS + 5000;
	top_model__set_clock(&m, clock);
	ck_assert_int_eq(top_source__replay(s, &m, clock, INT64_MAX, &err), 1);
	ck_assert_int_eq(m.kernel_count, 43);
	ck_assert_int_eq(m.copy_count, 15);
	ck_assert(!top_source__replay_done(s));
	t = top_model__thread(&m, tid_a);
	ck_assert_int_eq(t->depth, 2);
	ck_assert_str_eq(name_table__name(&m.range_names, t->frame[0].range), "step");
	ck_assert_str_eq(name_table__name(&m.range_names, t->frame[1].range), "forward");
	/* between forward (ends at 44) and backward (begins at 45) */
	clock = BASE_NS + 44 * STEP_NS + STEP_NS / 2;
	top_model__set_clock(&m, clock);
	ck_assert_int_eq(top_source__replay(s, &m, clock, INT64_MAX, &err), 1);
	ck_assert_int_eq(t->depth, 1);
	clock = BASE_NS + 47 * STEP_NS;
	top_model__set_clock(&m, clock);
	ck_assert_int_eq(top_source__replay(s, &m, clock, INT64_MAX, &err), 1);
	ck_assert_int_eq(t->depth, 2);
	ck_assert_str_eq(name_table__name(&m.range_names, t->frame[1].range), "backward");
	/* past the end: everything, as a plain read gives */
	clock = BASE_NS + 1000 * STEP_NS;
	top_model__set_clock(&m, clock);
	ck_assert_int_eq(top_source__replay(s, &m, clock, INT64_MAX, &err), 1);
	ck_assert(top_source__replay_done(s));
	ck_assert_int_eq(t->depth, 0);
	top_source__close(s);
	s = open_source(path, TOP_READ_ROWID);
	read_all(s, &ref);
	top_source__close(s);
	ck_assert_int_eq(m.kernel_count, ref.kernel_count);
	ck_assert_int_eq(m.kernel_total_ns, ref.kernel_total_ns);
	ck_assert_int_eq(m.copy_bytes, ref.copy_bytes);
	ck_assert_int_eq(m.device_memory_bytes, ref.device_memory_bytes);
	ck_assert(memcmp(&m.kernels_hist, &ref.kernels_hist, sizeof m.kernels_hist) == 0);
	top_model__exit(&m);
	top_model__exit(&ref);
}
END_TEST

START_TEST(model_rates_count_events_per_second_of_capture_time)
{
	struct top_model m;
	int32_t k;

	ck_assert_int_eq(top_model__init(&m), 0);
	k = top_model__kernel_name(&m, "k");
	for (int i = 0; i < 30; i++)
		top_model__add_kernel(&m, k, 5 * TOP_BUCKET_NS + i, 5 * TOP_BUCKET_NS + i + 1);
	for (int i = 0; i < 7; i++)
		top_model__add_kernel(&m, k, 7 * TOP_BUCKET_NS + i, 7 * TOP_BUCKET_NS + i + 1);
	top_model__set_clock(&m, 6 * TOP_BUCKET_NS + 10);
	ck_assert_int_eq(top_model__last_bucket(&m), 5);
	ck_assert_int_eq(spark_ring__get(&m.kernels_hist, 5), 30);
	ck_assert_int_eq(spark_ring__get(&m.kernels_hist, 6), 0);
	ck_assert_int_eq(spark_ring__get(&m.kernels_hist, 7), 7);
	top_model__exit(&m);
}
END_TEST

START_TEST(model_keeps_a_row_per_gpu_with_its_work_and_busy_share)
{
	struct top_model m;
	struct top_gpu *g1;

	ck_assert_int_eq(top_model__init(&m), 0);
	/* GPU 1 first: rows in the order the GPUs are first seen */
	top_gpu__add_work(top_model__gpu(&m, 1, NULL), 3 * TOP_BUCKET_NS,
				3 * TOP_BUCKET_NS + 250000000, true, 0);
	top_gpu__add_work(top_model__gpu(&m, 0, NULL), 3 * TOP_BUCKET_NS, 3 * TOP_BUCKET_NS + 100,
				true, 0);
	top_gpu__add_work(top_model__gpu(&m, 1, NULL), 3 * TOP_BUCKET_NS + 500000000,
				3 * TOP_BUCKET_NS + 750000000, false, 4096);
	ck_assert_int_eq(m.ngpus, 2);
	g1 = &m.gpus[0];
	ck_assert_int_eq(g1->device, 1);
	ck_assert_int_eq(g1->kernel_count, 1);
	ck_assert_int_eq(g1->kernel_ns, 250000000);
	ck_assert_int_eq(g1->copy_count, 1);
	ck_assert_int_eq(g1->copy_bytes, 4096);
	top_model__set_clock(&m, 4 * TOP_BUCKET_NS + 1);
	ck_assert(top_gpu__busy_percent(&m, g1) == 50.0);
	/* a second holding more work than a second (long kernels) reads 100% */
	top_gpu__add_work(g1, 3 * TOP_BUCKET_NS, 5 * TOP_BUCKET_NS, true, 0);
	ck_assert(top_gpu__busy_percent(&m, g1) == 100.0);
	for (int d = 2; d < TOP_MAX_GPUS + 4; d++)
		top_gpu__add_work(top_model__gpu(&m, d, NULL), 0, 1, true, 0);
	ck_assert_int_eq(m.ngpus, TOP_MAX_GPUS);
	ck_assert_ptr_null(top_model__gpu(&m, TOP_MAX_GPUS + 3, NULL));
	top_model__exit(&m);
}
END_TEST

START_TEST(model_counts_memsets_in_busy_share_only)
{
	struct top_model m;
	struct top_gpu *g;

	ck_assert_int_eq(top_model__init(&m), 0);
	g = top_model__gpu(&m, 0, NULL);
	/* a memset is GPU work, as the overview's busy time counts it, but
	 * neither a kernel nor a copy */
	top_model__add_memset(&m, 3 * TOP_BUCKET_NS, 3 * TOP_BUCKET_NS + 250000000);
	top_gpu__add_busy(g, 3 * TOP_BUCKET_NS, 3 * TOP_BUCKET_NS + 250000000);
	ck_assert_int_eq(m.kernel_count + m.copy_count + g->kernel_count + g->copy_count, 0);
	ck_assert_int_eq(m.first_ns, 3 * TOP_BUCKET_NS);
	ck_assert_int_eq(m.last_ns, 3 * TOP_BUCKET_NS + 250000000);
	top_model__set_clock(&m, 4 * TOP_BUCKET_NS + 1);
	ck_assert(top_gpu__busy_percent(&m, g) == 25.0);
	/* an impossible span is left out and counted, as the reports do */
	top_model__add_memset(&m, 3 * TOP_BUCKET_NS, 3 * TOP_BUCKET_NS - 1);
	top_gpu__add_busy(g, 3 * TOP_BUCKET_NS, 3 * TOP_BUCKET_NS - 1);
	ck_assert_int_eq(m.rows_left_out, 1);
	ck_assert(top_gpu__busy_percent(&m, g) == 25.0);
	top_gpu__add_busy(NULL, 0, 1);
	top_model__exit(&m);
}
END_TEST

START_TEST(model_keeps_gpus_apart_by_uuid_whatever_their_device_number)
{
	struct top_model m;
	struct top_gpu *a, *b;
	char label[64];

	ck_assert_int_eq(top_model__init(&m), 0);
	/* two ranks isolated with CUDA_VISIBLE_DEVICES: each calls its GPU 0 */
	a = top_model__gpu(&m, 0, "GPU-4778f611-4a9d-9959-9cca-b14d87683bbd");
	b = top_model__gpu(&m, 0, "GPU-e2c89493-fa84-e80c-0065-5c3639f8ff8a");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert_int_eq(m.ngpus, 2);
	ck_assert_ptr_eq(top_model__gpu(&m, 0, "GPU-e2c89493-fa84-e80c-0065-5c3639f8ff8a"), b);
	/* a row without a UUID falls back to the device number */
	ck_assert_ptr_eq(top_model__gpu(&m, 0, NULL), a);
	snprintf(a->name, sizeof a->name, "NVIDIA H200");
	top_gpu__label(&m, a, label, sizeof label);
	ck_assert_str_eq(label, "GPU-4778f611 NVIDIA H200");
	top_gpu__label(&m, b, label, sizeof label);
	ck_assert_str_eq(label, "GPU-e2c89493 unknown");
	/* a GPU first seen by its number takes the UUID a later row gives it */
	ck_assert_ptr_eq(top_model__gpu(&m, 1, NULL), top_model__gpu(&m, 1, "GPU-00000001"));
	ck_assert_int_eq(m.ngpus, 3);
	top_gpu__label(&m, &m.gpus[2], label, sizeof label);
	ck_assert_str_eq(label, "unknown");
	top_model__exit(&m);
}
END_TEST

/* ---- following a capture ---------------------------------------------------------------- */

/* A folder of per-process files next to the output, as `perfkit run` makes. */
static void make_dir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "%s", testutil_tmp_path(name));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
}

/* A capture and the -wal and -shm a reader's open connection kept. */
static void remove_files(const char *path)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char p[700];

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
}

static void refresh_until(struct top_feed *f, struct top_model *m, enum top_feed_state want)
{
	/* the end of a followed run is looked for every TOP_FEED_CHECK_NS */
	for (int i = 0; i < 40 && top_feed__state(f) != want; i++) {
		top_feed__refresh(f, m, BASE_NS, top_monotonic_ns(), INT64_MAX);
		if (top_feed__state(f) != want)
			usleep(50000);
	}
	ck_assert_int_eq(top_feed__state(f), want);
}

START_TEST(feed_follows_a_run_through_its_process_files)
{
	char dir[512], out[600], proc_a[600], proc_b[600];
	struct top_feed_config cfg = { 0 };
	struct top_model m, ref;
	struct prof_error err = { 0 };
	struct prof_writer *w_out, *w_a, *w_b;
	struct top_feed *f = NULL;
	struct top_source *s;

	make_dir(dir, sizeof dir, "run-dir");
	snprintf(out, sizeof out, "%s.sqlite", dir);
	snprintf(proc_a, sizeof proc_a, "%s/proc-4242.sqlite", dir);
	snprintf(proc_b, sizeof proc_b, "%s/proc-777.sqlite", dir);
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_model__init(&ref), 0);

	/* the output names the folder while the program runs */
	w_out = new_writer(out);
	prof_writer__meta(w_out, "command", "./train --epochs 1");
	prof_writer__meta(w_out, "pid", "4242");
	prof_writer__meta(w_out, "live_dir", dir);
	flush(w_out);
	w_a = new_writer(proc_a);
	prof_writer__process(w_a, 4242, "train");
	write_events(w_a, 4242, 0, 1000);
	flush(w_a);

	cfg.path = out;
	ck_assert_msg(top_feed__open(&cfg, &m, &f, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(top_feed__state(f), TOP_FEED_LIVE);
	ck_assert_str_eq(m.program, "./train --epochs 1");
	top_feed__refresh(f, &m, BASE_NS, top_monotonic_ns(), INT64_MAX);
	ck_assert_int_eq(m.kernel_count, 1000);
	write_events(w_a, 4242, 1000, 2000);
	flush(w_a);
	top_feed__refresh(f, &m, BASE_NS, top_monotonic_ns(), INT64_MAX);
	ck_assert_int_eq(m.kernel_count, 2000);

	/* the last rows, then the process exits (the collector's close) */
	write_events(w_a, 4242, 2000, 2500);
	prof_writer__delete(w_a);
	/* a second process that comes and goes between two refreshes */
	w_b = new_writer(proc_b);
	prof_writer__process(w_b, 777, "helper");
	write_events(w_b, 777, 0, 300);
	prof_writer__delete(w_b);
	/* `perfkit run` merges, removes the folder and finishes the output */
	ck_assert_int_eq(prof_writer__merge(w_out, proc_a, &err), 0);
	ck_assert_int_eq(prof_writer__merge(w_out, proc_b, &err), 0);
	prof_writer__meta(w_out, "live_dir", NULL);
	prof_writer__meta(w_out, "exit_status", "0");
	remove_files(proc_a);
	remove_files(proc_b);
	ck_assert_int_eq(rmdir(dir), 0);
	finish(w_out);

	refresh_until(f, &m, TOP_FEED_FINISHED);
	ck_assert_int_eq(m.kernel_count, 2800);
	ck_assert_int_eq(top_feed__exit_status(f), 0);
	top_feed__close(f);

	s = open_source(out, TOP_READ_ROWID);
	read_all(s, &ref);
	top_source__close(s);
	assert_same_totals(&m, &ref);
	top_model__exit(&m);
	top_model__exit(&ref);
}
END_TEST

START_TEST(feed_reads_a_run_that_ended_before_any_process_file_was_seen)
{
	char dir[512], out[600], proc[600];
	struct top_feed_config cfg = { 0 };
	struct top_model m;
	struct prof_error err = { 0 };
	struct prof_writer *w_out, *w;
	struct top_feed *f = NULL;

	make_dir(dir, sizeof dir, "quick-run");
	snprintf(out, sizeof out, "%s.sqlite", dir);
	snprintf(proc, sizeof proc, "%s/proc-4242.sqlite", dir);
	ck_assert_int_eq(top_model__init(&m), 0);
	w_out = new_writer(out);
	prof_writer__meta(w_out, "live_dir", dir);
	flush(w_out);
	cfg.path = out;
	ck_assert_msg(top_feed__open(&cfg, &m, &f, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(top_feed__state(f), TOP_FEED_LIVE);
	/* the whole program runs and is merged before top looks again */
	w = new_writer(proc);
	write_events(w, 4242, 0, 700);
	prof_writer__delete(w);
	ck_assert_int_eq(prof_writer__merge(w_out, proc, &err), 0);
	prof_writer__meta(w_out, "live_dir", NULL);
	remove_files(proc);
	ck_assert_int_eq(rmdir(dir), 0);
	finish(w_out);
	refresh_until(f, &m, TOP_FEED_FINISHED);
	assert_expected(&m, 700);
	top_feed__close(f);
	top_model__exit(&m);
}
END_TEST

/* The SQLite header says whether a file is in WAL mode (bytes 18-19 are 2). */
static int header_journal(const char *path)
{
	unsigned char h[20] = { 0 };
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(h, 1, sizeof h, f), sizeof h);
	fclose(f);
	return h[18];
}

START_TEST(feed_follows_a_capture_written_in_place_and_lets_it_finish)
{
	char out[512];
	struct top_feed_config cfg = { 0 };
	struct top_model m;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct top_feed *f = NULL;

	snprintf(out, sizeof out, "%s", testutil_tmp_path("in-place.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	w = new_writer(out);
	write_events(w, 4242, 0, 400);
	flush(w);
	cfg.path = out;
	ck_assert_msg(top_feed__open(&cfg, &m, &f, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(top_feed__state(f), TOP_FEED_LIVE);
	top_feed__refresh(f, &m, BASE_NS, top_monotonic_ns(), INT64_MAX);
	ck_assert_int_eq(m.kernel_count, 400);
	write_events(w, 4242, 400, 600);
	finish(w);
	/* top let go between refreshes, so the writer could leave WAL mode */
	ck_assert_int_eq(header_journal(out), 1);
	top_feed__refresh(f, &m, BASE_NS, top_monotonic_ns(), INT64_MAX);
	ck_assert_int_eq(top_feed__state(f), TOP_FEED_FINISHED);
	assert_expected(&m, 600);
	top_feed__close(f);
	top_model__exit(&m);
}
END_TEST

START_TEST(feed_refuses_to_replay_an_unfinished_capture)
{
	char out[512];
	struct top_feed_config cfg = { 0 };
	struct top_model m;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct top_feed *f = NULL;

	snprintf(out, sizeof out, "%s", testutil_tmp_path("unfinished.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	w = new_writer(out);
	write_events(w, 4242, 0, 10);
	flush(w);
	cfg.path = out;
	cfg.replay = true;
	cfg.speed = 1;
	ck_assert_int_eq(top_feed__open(&cfg, &m, &f, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "still being written"));
	ck_assert_ptr_null(f);
	prof_writer__delete(w);
	top_model__exit(&m);
}
END_TEST

START_TEST(feed_replay_at_a_huge_speed_reaches_the_end)
{
	char out[512];
	struct top_feed_config cfg = { 0 };
	struct top_model m;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct top_feed *f = NULL;

	snprintf(out, sizeof out, "%s", testutil_tmp_path("fast.sqlite"));
	ck_assert_int_eq(top_model__init(&m), 0);
	w = new_writer(out);
	write_events(w, 4242, 0, 300);
	finish(w);
	cfg.path = out;
	cfg.replay = true;
	cfg.speed = 1e300;
	ck_assert_msg(top_feed__open(&cfg, &m, &f, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(top_feed__state(f), TOP_FEED_REPLAY);
	refresh_until(f, &m, TOP_FEED_FINISHED);
	assert_expected(&m, 300);
	ck_assert_int_eq(m.elapsed_ns, m.last_ns - BASE_NS);
	top_feed__close(f);
	top_model__exit(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tui_model");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, model_store_fed_in_two_halves_equals_fed_at_once);
	tcase_add_test(tc, model_reads_each_row_once);
	tcase_add_test(tc, model_stops_at_the_deadline_and_carries_on);
	tcase_add_test(tc, model_kernel_view_sorts_by_each_column);
	tcase_add_test(tc, model_kernel_view_filters_by_name_ignoring_case);
	tcase_add_test(tc, model_sanitises_names_for_the_terminal);
	tcase_add_test(tc, model_completed_stack_keeps_the_last_nesting);
	tcase_add_test(tc, model_replay_reads_rows_up_to_the_clock);
	tcase_add_test(tc, model_rates_count_events_per_second_of_capture_time);
	tcase_add_test(tc, model_keeps_a_row_per_gpu_with_its_work_and_busy_share);
	tcase_add_test(tc, model_counts_memsets_in_busy_share_only);
	tcase_add_test(tc, model_keeps_gpus_apart_by_uuid_whatever_their_device_number);
	tcase_add_test(tc, feed_follows_a_run_through_its_process_files);
	tcase_add_test(tc, feed_reads_a_run_that_ended_before_any_process_file_was_seen);
	tcase_add_test(tc, feed_follows_a_capture_written_in_place_and_lets_it_finish);
	tcase_add_test(tc, feed_refuses_to_replay_an_unfinished_capture);
	tcase_add_test(tc, feed_replay_at_a_huge_speed_reaches_the_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
