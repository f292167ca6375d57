/* test_diagnose_rules.c - `perfkit diagnose` rules on stores written through
 * the writer API with known patterns: each rule fires on the pattern it is
 * about, with the counts and share the test computes from what it wrote, and
 * stays silent on the fixed version of the same program. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "analysis/diagnose_run.h"
#include "prof/analysis_tables.h"
#include "prof/store.h"
#include "testutil.h"

#define US 1000LL
#define MS 1000000LL
#define T0 1000000000LL
#define PID 4242u

/* ---- a tiny program builder ------------------------------------------------ */

struct prog {
	struct prof_writer *w;
	int32_t corr;
	int64_t t;          /* host clock */
	int64_t gpu_free;   /* when the GPU stream is next free */
	bool nvtx;
};

/* Where each named store was written (testutil_tmp_path removes the file it
 * names, so the path is kept here for reopening). */
static char store_paths[32][512];
static char store_names[32][64];
static int nstores;

static const char *store_path(const char *name)
{
	for (int i = 0; i < nstores; i++)
		if (!strcmp(store_names[i], name))
			return store_paths[i];
	ck_assert_int_lt(nstores, 32);
	snprintf(store_names[nstores], sizeof store_names[0], "%s", name);
	snprintf(store_paths[nstores], sizeof store_paths[0], "%s", testutil_tmp_path(name));
	return store_paths[nstores++];
}

static void prog_open(struct prog *p, const char *name, bool nvtx)
{
	struct prof_error err;
	struct prof_gpu_info g = {
		.id = 0, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-test", .chip_name = "GH100",
		.l2_cache_bytes = 50 << 20, .total_memory_bytes = 80LL << 30,
		.memory_bandwidth_bytes_per_s = 3352000000000LL, .clock_rate_hz = 1980000000LL,
		.sm_count = 132, .compute_major = 9, .compute_minor = 0, .max_warps_per_sm = 64,
		.threads_per_warp = 32, .max_blocks_per_sm = 32, .max_registers_per_sm = 65536,
		.max_registers_per_block = 65536, .max_shared_per_sm_bytes = 233472,
		.max_shared_per_block_bytes = 49152, .max_threads_per_block = 1024,
	};

	memset(p, 0, sizeof *p);
	ck_assert_int_eq(prof_writer__create(store_path(name), PROF_WRITER_OVERWRITE, &p->w, &err), 0);
	prof_writer__gpu(p->w, &g);
	prof_writer__process(p->w, PID, "prog");
	p->t = T0;
	p->gpu_free = T0;
	p->corr = 1;
	p->nvtx = nvtx;
}

static void api(struct prog *p, const char *name, int64_t dur, int32_t corr)
{
	struct prof_api_call a = {
		.start_ns = p->t, .end_ns = p->t + dur, .global_tid = prof_global_tid(PID, PID),
		.correlation_id = corr, .name_id = prof_writer__string(p->w, name),
	};
	ck_assert_int_eq(prof_writer__api(p->w, PROF_API_RUNTIME, &a), 0);
	p->t += dur;
}

/* One launch as the trace records it: the kernel on `stream` from start_ns,
 * and the 3 us launch call now. Returns its correlation id. */
static int32_t kernel_at(struct prog *p, const char *name, int64_t start, int64_t dur, int32_t stream,
			 int threads, int regs, int64_t shared)
{
	int32_t corr = p->corr++;
	int64_t id = prof_writer__string(p->w, name);
	struct prof_kernel k = {
		.start_ns = start, .end_ns = start + dur, .stream_id = stream, .correlation_id = corr,
		.global_pid = prof_global_pid(PID), .demangled_name = id, .short_name = id, .mangled_name = id,
		.registers_per_thread = regs, .grid_x = 264, .grid_y = 1, .grid_z = 1, .block_x = threads,
		.block_y = 1, .block_z = 1, .dynamic_shared_bytes = (int32_t)shared,
	};
	ck_assert_int_eq(prof_writer__kernel(p->w, &k), 0);
	api(p, "cudaLaunchKernel_v7000", 3 * US, corr);
	return corr;
}

/* A kernel launched now (API 3 us), running when the stream is free. */
static int32_t kernel(struct prog *p, const char *name, int64_t dur, int threads, int regs, int64_t shared)
{
	int64_t start = p->t + 2 * US > p->gpu_free ? p->t + 2 * US : p->gpu_free;

	p->gpu_free = start + dur;
	return kernel_at(p, name, start, dur, 7, threads, regs, shared);
}

/* A copy: synchronous calls wait for it, async ones return after 2 us. */
static int64_t copy(struct prog *p, const char *api_name, int kind, int src, int dst, int64_t bytes,
		    int64_t dur)
{
	int32_t corr = p->corr++;
	int64_t start = p->t + 1 * US > p->gpu_free ? p->t + 1 * US : p->gpu_free;
	bool sync = !strstr(api_name, "Async");
	int64_t call = sync ? start + dur - p->t : 2 * US;
	struct prof_memcpy m = {
		.start_ns = start, .end_ns = start + dur, .stream_id = 7, .correlation_id = corr,
		.global_pid = prof_global_pid(PID), .bytes = bytes, .copy_kind = kind,
		.src_kind = src, .dst_kind = dst,
	};
	ck_assert_int_eq(prof_writer__memcpy(p->w, &m), 0);
	p->gpu_free = start + dur;
	api(p, api_name, call, corr);
	return call > dur ? call : dur;
}

static void range_push(struct prog *p, int64_t *start)
{
	*start = p->t;
}

static void range_pop(struct prog *p, const char *name, int64_t start)
{
	struct prof_nvtx_event e = {
		.start_ns = start, .end_ns = p->t, .event_type = PROF_NVTX_PUSHPOP,
		.global_tid = prof_global_tid(PID, PID), .end_global_tid = prof_global_tid(PID, PID),
		.text_id = prof_writer__string(p->w, name),
	};
	if (p->nvtx)
		ck_assert_int_eq(prof_writer__nvtx(p->w, &e), 0);
}

static void sync_stream(struct prog *p)
{
	int64_t until = p->gpu_free > p->t ? p->gpu_free : p->t;
	api(p, "cudaStreamSynchronize_v3020", until - p->t + 1 * US, 0);
}

static void prog_close(struct prog *p)
{
	struct prof_error err;
	ck_assert_int_eq(prof_writer__finish(p->w, &err), 0);
}

static struct diag_report *diagnose(const char *name, const char *set)
{
	struct prof_store *s;
	struct prof_error err;
	struct diag_settings st;
	struct diag_report *r;

	ck_assert_int_eq(diag_settings__init(&st), 0);
	if (set)
		ck_assert_int_eq(diag_settings__parse(&st, set, &err), 0);
	ck_assert_msg(prof_store__open(store_path(name), &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(diag__run(s, &st, &r, &err) == 0, "%s", err.msg);
	prof_store__close(s);
	diag_settings__exit(&st);
	return r;
}

static const struct diag_finding *find(const struct diag_report *r, const char *rule)
{
	for (int i = 0; i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, rule))
			return &r->findings[i];
	return NULL;
}

/* ---- the hash-embedding pattern ------------------------------------------- */

#define ITERS 100
#define SMALL_COPIES 6
#define SMALL_BYTES 4096
#define SMALL_COPY_NS (4 * US)

/* The steady state the window covers: every step after the warm-up one. */
#define STEADY_ITERS (ITERS - 1)

/* Each step: 6 small pageable HtoD copies, one 200 us kernel, a sync. The
 * cost and window returned are those of the steady state. */
static void write_small_copies(const char *name, bool collated, int64_t *cost_ns, int64_t *window_ns)
{
	struct prog p;
	int64_t t0 = 0;

	prog_open(&p, name, true);
	*cost_ns = 0;
	for (int i = 0; i < ITERS; i++) {
		int64_t s;
		range_push(&p, &s);
		if (i == 1)
			t0 = s;
		if (collated) {
			copy(&p, "cudaMemcpyAsync_v3020", PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE,
			     SMALL_COPIES * SMALL_BYTES, 6 * US);
		} else {
			for (int c = 0; c < SMALL_COPIES; c++) {
				int64_t ns = copy(&p, "cudaMemcpyAsync_v3020", PROF_COPY_HTOD, PROF_MEM_PAGEABLE,
						  PROF_MEM_DEVICE, SMALL_BYTES, SMALL_COPY_NS);
				if (i > 0)
					*cost_ns += ns;
			}
		}
		kernel(&p, "embed_lookup(float const*, int const*, float*)", 200 * US, 256, 32, 0);
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	*window_ns = p.t - t0;
	prog_close(&p);
}

START_TEST(diagnose_small_copies_fire_with_count_and_share)
{
	int64_t cost, window;
	struct diag_report *r;
	const struct diag_finding *f;
	int64_t count = 0;

	write_small_copies("small.sqlite", false, &cost, &window);
	r = diagnose("small.sqlite", NULL);
	f = find(r, "small_htod_copies");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < f->ntop; i++)
		count += f->top[i].count;
	ck_assert_int_eq(count, STEADY_ITERS * SMALL_COPIES);
	ck_assert_int_eq(f->time_ns, cost);
	ck_assert_double_eq_tol(f->share, (double)cost / (double)window, 1e-9);
	ck_assert_ptr_nonnull(strstr(f->evidence, "6.0 host-to-device copies"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_small_copies_silent_on_one_collated_pinned_copy)
{
	int64_t cost, window;
	struct diag_report *r;

	write_small_copies("collated.sqlite", true, &cost, &window);
	r = diagnose("collated.sqlite", NULL);
	ck_assert_ptr_null(find(r, "small_htod_copies"));
	ck_assert_ptr_null(find(r, "pageable_async_copy"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_pageable_async_copies_are_reported)
{
	int64_t cost, window;
	struct diag_report *r;
	const struct diag_finding *f;

	write_small_copies("pageable.sqlite", false, &cost, &window);
	r = diagnose("pageable.sqlite", NULL);
	f = find(r, "pageable_async_copy");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->top[0].count, STEADY_ITERS * SMALL_COPIES);
	ck_assert_int_eq(f->top[0].bytes, (int64_t)STEADY_ITERS * SMALL_COPIES * SMALL_BYTES);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_window_is_the_repeated_nvtx_range)
{
	int64_t cost, window;
	struct diag_report *r;

	write_small_copies("window.sqlite", false, &cost, &window);
	r = diagnose("window.sqlite", NULL);
	ck_assert_int_eq(r->window.iterations, STEADY_ITERS);
	ck_assert_ptr_nonnull(strstr(r->window.source, "\"step\""));
	ck_assert_int_eq(r->window.end_ns - r->window.start_ns, window);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_setting_raises_the_small_copy_threshold)
{
	int64_t cost, window;
	struct diag_report *r;

	write_small_copies("set.sqlite", false, &cost, &window);
	r = diagnose("set.sqlite", "small_copies.min_per_iteration=7");
	ck_assert_ptr_null(find(r, "small_htod_copies"));
	diag_report__delete(r);
}
END_TEST

/* What a finding's change gives the step, as the order weighs it: its
 * estimated gain, else its share. */
static double gain_of(const struct diag_report *r, const struct diag_finding *f)
{
	int64_t step = r->verdict.step_ns;

	if (f->gain_step_ns > 0 && step > 0)
		return f->gain_step_ns >= step ? 0 : (double)(step - f->gain_step_ns) / (double)step;
	return f->share;
}

/* Medium and high findings first, by what their change gives the step;
 * then the rest by severity, then by gain: a low finding never ranks
 * above a high one. */
START_TEST(diagnose_findings_are_sorted_by_gain_then_severity)
{
	int64_t cost, window;
	struct diag_report *r;

	write_small_copies("sorted.sqlite", false, &cost, &window);
	r = diagnose("sorted.sqlite", NULL);
	ck_assert_int_ge(r->nfindings, 2);
	ck_assert(r->verdict.valid);
	for (int i = 1; i < r->nfindings; i++) {
		const struct diag_finding *p = &r->findings[i - 1], *f = &r->findings[i];
		bool ps = p->severity >= DIAG_MEDIUM, fs = f->severity >= DIAG_MEDIUM;

		ck_assert(ps || !fs);
		if (ps != fs)
			continue;
		if (!ps)
			ck_assert_int_ge(p->severity, f->severity);
		if (ps || p->severity == f->severity)
			ck_assert(gain_of(r, p) >= gain_of(r, f));
	}
	diag_report__delete(r);
}
END_TEST

/* ---- loops without NVTX ------------------------------------------------------ */

START_TEST(diagnose_window_from_repeating_kernel_without_nvtx)
{
	struct prog p;
	struct diag_report *r;

	prog_open(&p, "nonvtx.sqlite", false);
	kernel(&p, "init_once", 50 * US, 256, 32, 0);
	for (int i = 0; i < 20; i++) {
		kernel(&p, "step_first", 100 * US, 256, 32, 0);
		kernel(&p, "step_second", 100 * US, 256, 32, 0);
		kernel(&p, "step_second", 100 * US, 256, 32, 0);
		sync_stream(&p);
	}
	prog_close(&p);
	r = diagnose("nonvtx.sqlite", NULL);
	/* 20 launches of step_first: the warm-up iteration, then 19 in the window */
	ck_assert_int_eq(r->window.iterations, 19);
	ck_assert_ptr_nonnull(strstr(r->window.source, "step_first"));
	diag_report__delete(r);
}
END_TEST

/* ---- asynchronous loops ------------------------------------------------------- */

/* The host enqueues 20 steps of 1 ms kernels in microseconds, then waits for
 * them and frees a buffer: the window must reach the end of the GPU work the
 * steps launched, and the wait and the free after the loop are not in it. */
START_TEST(diagnose_async_loop_window_covers_its_gpu_work_not_the_calls_after_it)
{
	struct prog p;
	struct diag_report *r;
	int64_t last_kernel_end;

	prog_open(&p, "async.sqlite", true);
	for (int i = 0; i < 20; i++) {
		int64_t s;
		range_push(&p, &s);
		kernel(&p, "step_kernel(float*)", 1000 * US, 256, 32, 0);
		range_pop(&p, "step", s);
	}
	last_kernel_end = p.gpu_free;
	sync_stream(&p);
	api(&p, "cudaFree_v3020", 50 * US, 0);
	prog_close(&p);
	r = diagnose("async.sqlite", NULL);
	ck_assert_int_eq(r->window.iterations, 19);
	ck_assert_int_ge(r->window.end_ns, last_kernel_end);
	ck_assert_int_lt(r->window.host_end_ns, last_kernel_end);
	ck_assert_ptr_null(find(r, "sync_api"));
	ck_assert_ptr_null(find(r, "alloc_churn"));
	ck_assert_ptr_null(find(r, "gpu_util"));
	diag_report__delete(r);
}
END_TEST

/* ---- the transformer patterns ------------------------------------------------ */

static void write_transformer(const char *name, bool fixed)
{
	struct prog p;

	prog_open(&p, name, true);
	if (fixed) {
		api(&p, "cudaMalloc_v3020", 100 * US, 0);
		api(&p, "cudaMalloc_v3020", 100 * US, 0);
	}
	for (int i = 0; i < 50; i++) {
		int64_t s;
		range_push(&p, &s);
		if (!fixed) {
			api(&p, "cudaMalloc_v3020", 80 * US, 0);
			copy(&p, "cudaMemcpy_v3020", PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 8 << 20,
			     700 * US);
			for (int g = 0; g < 40; g++)
				kernel(&p, "void gemm_small_kernel<float>(int, int, float const*, float*)", 6 * US,
				       128, 64, 0);
			copy(&p, "cudaMemcpy_v3020", PROF_COPY_DTOH, PROF_MEM_DEVICE, PROF_MEM_PAGEABLE, 1 << 20,
			     300 * US);
			api(&p, "cudaFree_v3020", 60 * US, 0);
		} else {
			copy(&p, "cudaMemcpyAsync_v3020", PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 1 << 20,
			     25 * US);
			kernel(&p, "cublasSgemmStridedBatched_kernel", 400 * US, 256, 96, 0);
			copy(&p, "cudaMemcpyAsync_v3020", PROF_COPY_DTOH, PROF_MEM_DEVICE, PROF_MEM_PINNED, 1 << 20,
			     25 * US);
			sync_stream(&p);
		}
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

START_TEST(diagnose_transformer_naive_shows_churn_sync_copies_and_small_gemms)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_transformer("tf_naive.sqlite", false);
	r = diagnose("tf_naive.sqlite", NULL);
	f = find(r, "alloc_churn");
	ck_assert_ptr_nonnull(f);
	/* a malloc and a free in each of the 49 steps after the warm-up one */
	ck_assert_int_eq(f->top[0].count + (f->ntop > 1 ? f->top[1].count : 0), 98);
	ck_assert_ptr_nonnull(find(r, "sync_memcpy"));
	f = find(r, "batched_gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->top[0].count, (50 - 1) * 40); /* warm-up step left out */
	ck_assert_ptr_nonnull(find(r, "transfer_volume"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_transformer_fixed_has_none_of_them)
{
	struct diag_report *r;

	write_transformer("tf_fixed.sqlite", true);
	r = diagnose("tf_fixed.sqlite", NULL);
	ck_assert_ptr_null(find(r, "alloc_churn"));
	ck_assert_ptr_null(find(r, "sync_memcpy"));
	ck_assert_ptr_null(find(r, "batched_gemm"));
	ck_assert_ptr_null(find(r, "launch_bound"));
	for (int i = 0; i < r->nfindings; i++)
		ck_assert_msg(r->findings[i].severity <= DIAG_LOW, "%s is %s", r->findings[i].rule_id,
			      diag_severity__name(r->findings[i].severity));
	diag_report__delete(r);
}
END_TEST

/* ---- launch-bound -------------------------------------------------------------- */

static void write_forces(const char *name, bool batched)
{
	struct prog p;

	prog_open(&p, name, true);
	for (int i = 0; i < 20; i++) {
		int64_t s;
		range_push(&p, &s);
		if (batched) {
			kernel(&p, "forces_batched(float const*, float*, int)", 600 * US, 256, 40, 0);
		} else {
			for (int m = 0; m < 64; m++) {
				kernel(&p, "forces_one(float const*, float*)", 2 * US, 256, 40, 0);
				kernel(&p, "energy_one(float const*, float*)", 1 * US, 256, 40, 0);
			}
		}
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

START_TEST(diagnose_launch_bound_fires_on_short_kernels_with_gaps)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_forces("forces_naive.sqlite", false);
	r = diagnose("forces_naive.sqlite", NULL);
	f = find(r, "launch_bound");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(f->severity, DIAG_MEDIUM);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_launch_bound_silent_when_batched)
{
	struct diag_report *r;

	write_forces("forces_batched.sqlite", true);
	r = diagnose("forces_batched.sqlite", NULL);
	ck_assert_ptr_null(find(r, "launch_bound"));
	ck_assert_ptr_null(find(r, "repeated_kernel"));
	diag_report__delete(r);
}
END_TEST

/* ---- occupancy --------------------------------------------------------------- */

START_TEST(diagnose_low_occupancy_names_the_register_limiter)
{
	struct prog p;
	struct diag_report *r;
	const struct diag_finding *f;

	prog_open(&p, "occ.sqlite", true);
	for (int i = 0; i < 10; i++) {
		int64_t s;
		range_push(&p, &s);
		kernel(&p, "heavy(float*)", 500 * US, 256, 128, 0);
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
	r = diagnose("occ.sqlite", NULL);
	f = find(r, "low_occupancy");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "limited by registers"));
	ck_assert_int_le(f->severity, DIAG_LOW);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_metrics_rules_say_they_need_metrics)
{
	int64_t cost, window;
	struct diag_report *r;
	bool skipped = false;

	write_small_copies("nometrics.sqlite", false, &cost, &window);
	r = diagnose("nometrics.sqlite", NULL);
	for (int i = 0; i < r->nskips; i++)
		if (!strcmp(r->skips[i].rule_id, "bandwidth_below_roof"))
			skipped = strstr(r->skips[i].reason, "--metrics=roofline") != NULL;
	ck_assert(skipped);
	diag_report__delete(r);
}
END_TEST

/* The whole-run setting analyses the whole capture, API-call rules included:
 * the transformer's per-step allocations are churn there too. */
START_TEST(diagnose_whole_run_setting_keeps_the_api_call_rules)
{
	struct diag_report *r;

	write_transformer("tf_whole.sqlite", false);
	r = diagnose("tf_whole.sqlite", "window.whole_run=1");
	ck_assert(r->window.whole_run);
	ck_assert_int_eq(r->window.host_end_ns, r->window.end_ns);
	ck_assert_ptr_nonnull(find(r, "alloc_churn"));
	diag_report__delete(r);
}
END_TEST

/* ---- GEMM runs: chains, heads, streams -------------------------------------- */

#define SGEMM "sgemm_largek_kernel_cublas"
#define STEPS 20

/* Each step: an MLP of 8 layers, every GEMM followed by its bias+ReLU; with
 * two_products, each layer has two products (a gate and an up projection,
 * two GEMM kernels) and one elementwise kernel that joins them, so that the
 * two GEMMs' runs interleave on one stream and span the same time. */
static void write_gemm_chain(const char *name, bool two_products)
{
	struct prog p;

	prog_open(&p, name, true);
	for (int i = 0; i < STEPS; i++) {
		int64_t s;
		range_push(&p, &s);
		for (int l = 0; l < 8; l++) {
			kernel(&p, SGEMM, 6 * US, 128, 64, 0);
			if (two_products)
				kernel(&p, "sgemm_smallk_kernel_cublas", 6 * US, 128, 64, 0);
			kernel(&p, "bias_relu(float*, float const*, int, int)", 2 * US, 256, 16, 0);
		}
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

/* Each step: 16 per-head GEMMs back to back on one stream; with split_k,
 * each is followed by cuBLAS's split-K reduction, part of the same GEMM. */
static void write_gemm_heads(const char *name, bool split_k)
{
	struct prog p;

	prog_open(&p, name, true);
	for (int i = 0; i < STEPS; i++) {
		int64_t s;
		range_push(&p, &s);
		for (int h = 0; h < 16; h++) {
			kernel(&p, SGEMM, 6 * US, 128, 64, 0);
			if (split_k)
				kernel(&p, "void cublasLt::splitKreduce_kernel<32, 16, int, float>(float*)", 2 * US,
				       256, 16, 0);
		}
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

/* Each step: 16 per-head GEMMs over 4 streams, the streams running at once. */
static void write_gemm_streams(const char *name)
{
	struct prog p;

	prog_open(&p, name, true);
	for (int i = 0; i < STEPS; i++) {
		int64_t s, t0;
		range_push(&p, &s);
		t0 = p.t + 60 * US;
		for (int h = 0; h < 16; h++)
			kernel_at(&p, SGEMM, t0 + (h / 4) * 7 * US + (h % 4) * US, 6 * US, 20 + h % 4, 128, 64, 0);
		p.gpu_free = t0 + 40 * US;
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

START_TEST(diagnose_gemm_chain_is_not_advised_to_batch)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gemm_chain("chain.sqlite", false);
	r = diagnose("chain.sqlite", NULL);
	ck_assert_ptr_null(find(r, "batched_gemm"));
	f = find(r, "gemm_chain");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->top[0].count, (STEPS - 1) * 8); /* warm-up step left out */
	ck_assert_ptr_nonnull(strstr(f->evidence, "1.0 other kernels between two launches"));
	/* graphing the chain is advice for a step bound by launching it */
	ck_assert(r->verdict.valid);
	ck_assert_int_eq(strstr(f->change, "CUDA graph") != NULL,
			 r->verdict.bound == BOUND_LAUNCH_HOST && r->program.dispatch);
	ck_assert_ptr_nonnull(strstr(f->change, "more rows"));
	ck_assert_ptr_nonnull(strstr(f->change, "epilogue"));
	ck_assert_ptr_null(strstr(f->change, "PyTorch"));
	diag_report__delete(r);
}
END_TEST

/* Runs that interleave cover their time once: the finding never claims more
 * than the window, and each offender shows its own kernels' GPU time. */
START_TEST(diagnose_interleaved_gemm_runs_count_their_time_once)
{
	struct diag_report *r;
	const struct diag_finding *f;
	int64_t window;

	write_gemm_chain("chain_two.sqlite", true);
	r = diagnose("chain_two.sqlite", NULL);
	window = r->window.end_ns - r->window.start_ns;
	f = find(r, "gemm_chain");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 2);
	for (int i = 0; i < f->ntop; i++) {
		ck_assert_int_eq(f->top[i].count, (STEPS - 1) * 8);
		ck_assert_int_eq(f->top[i].time_ns, f->top[i].count * 6 * US);
	}
	ck_assert_int_le(f->time_ns, window);
	/* the runs start at the window's first kernel and run to its last */
	ck_assert_int_ge(f->time_ns, window - 20 * US);
	ck_assert_ptr_nonnull(strstr(f->evidence, "the runs cover"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_repeat_max_between_bounds_the_kernels_between_a_run)
{
	struct diag_report *r;

	write_gemm_chain("chain_strict.sqlite", false);
	r = diagnose("chain_strict.sqlite", "repeat.max_between=0");
	ck_assert_ptr_null(find(r, "gemm_chain"));
	ck_assert_ptr_null(find(r, "batched_gemm"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_back_to_back_gemms_get_batching_as_a_condition)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gemm_heads("heads.sqlite", false);
	r = diagnose("heads.sqlite", NULL);
	ck_assert_ptr_null(find(r, "gemm_chain"));
	f = find(r, "batched_gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->top[0].count, (STEPS - 1) * 16);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "back to back on one stream"));
	ck_assert_ptr_nonnull(strstr(f->evidence, "the trace cannot tell which"));
	ck_assert_ptr_nonnull(strstr(f->change, "If these GEMMs are independent"));
	ck_assert_ptr_nonnull(strstr(f->change, "If each consumes the last one's output"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_split_k_reduction_is_part_of_its_gemm)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gemm_heads("heads_splitk.sqlite", true);
	r = diagnose("heads_splitk.sqlite", NULL);
	ck_assert_ptr_null(find(r, "gemm_chain"));
	f = find(r, "batched_gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, SGEMM));
	ck_assert_int_eq(f->top[0].count, (STEPS - 1) * 16);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_gemms_on_several_streams_at_once_are_independent)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gemm_streams("streams.sqlite");
	r = diagnose("streams.sqlite", NULL);
	ck_assert_ptr_null(find(r, "gemm_chain"));
	f = find(r, "batched_gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "on several streams at once"));
	ck_assert_ptr_nonnull(strstr(f->evidence, "several streams at once (up to 4)"));
	ck_assert_ptr_null(strstr(f->change, "If these GEMMs are independent"));
	ck_assert_ptr_nonnull(strstr(f->change, "Replace each group with one batched GEMM"));
	diag_report__delete(r);
}
END_TEST

/* ---- occupancy and capture modes ---------------------------------------------- */

/* 40 KiB of shared memory per 64-thread block: five blocks per SM of an H100,
 * 10 of 64 warps. `regs` 0 is what an older --metrics capture recorded. */
static void write_smem(const char *name, int regs, bool heavy_too)
{
	struct prog p;

	prog_open(&p, name, true);
	for (int i = 0; i < 10; i++) {
		int64_t s;
		range_push(&p, &s);
		for (int k = 0; k < 4; k++)
			kernel(&p, "smem_blur(float const*, float*, unsigned long)", 200 * US, 64, regs, 40 * 1024);
		if (heavy_too)
			kernel(&p, "heavy(float*)", 500 * US, 256, 128, 0);
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
}

/* The capture's metrics, as `perfkit run --metrics=memory` imports them: one
 * line per launch (correlation ids 1..n) with duration and DRAM bytes. */
static void import_memory_metrics(const char *name, int launches)
{
	char dir[512], tsv[600];
	struct prof_error err;
	FILE *f;

	snprintf(dir, sizeof dir, "%s", testutil_tmp_path("metrics_dir"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(tsv, sizeof tsv, "%s/metrics-%u.tsv", dir, PID);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	for (int c = 1; c <= launches; c++)
		fprintf(f, "%u\t%d\t0\t200000\t-\t-\t-\t-\t1000000\t1000000\t4000000\n", PID, c);
	fclose(f);
	ck_assert_int_eq(prof_analysis__import_metrics_dir(store_path(name), dir, &err), launches);
}

START_TEST(diagnose_low_occupancy_is_the_same_with_and_without_metrics)
{
	struct diag_report *trace, *replayed;
	const struct diag_finding *a, *b;

	write_smem("smem_trace.sqlite", 32, false);
	write_smem("smem_metrics.sqlite", 32, false);
	/* 10 steps x 4 launches */
	import_memory_metrics("smem_metrics.sqlite", 40);
	trace = diagnose("smem_trace.sqlite", NULL);
	replayed = diagnose("smem_metrics.sqlite", NULL);
	ck_assert(!trace->replayed);
	ck_assert(replayed->replayed);
	a = find(trace, "low_occupancy");
	b = find(replayed, "low_occupancy");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(strstr(a->top[0].name, "16% (64 threads, 32 regs, 40960 B shared; limited by shared memory)"));
	ck_assert_str_eq(a->top[0].name, b->top[0].name);
	ck_assert_int_eq(a->top[0].count, b->top[0].count);
	diag_report__delete(trace);
	diag_report__delete(replayed);
}
END_TEST

START_TEST(diagnose_low_occupancy_leaves_out_launches_recording_no_registers)
{
	struct diag_report *r;
	const char *reason = NULL;

	write_smem("smem_noregs.sqlite", 0, false);
	r = diagnose("smem_noregs.sqlite", NULL);
	ck_assert_ptr_null(find(r, "low_occupancy"));
	for (int i = 0; i < r->nskips; i++)
		if (!strcmp(r->skips[i].rule_id, "low_occupancy"))
			reason = r->skips[i].reason;
	ck_assert_ptr_nonnull(reason);
	/* the warm-up step is outside the window: 9 steps x 4 launches */
	ck_assert_ptr_nonnull(strstr(reason, "36 launches of 1 kernels record 0 registers per thread"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_low_occupancy_says_which_launches_it_left_out)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_smem("smem_mixed.sqlite", 0, true);
	r = diagnose("smem_mixed.sqlite", NULL);
	f = find(r, "low_occupancy");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "heavy(float*)"));
	ck_assert_ptr_nonnull(strstr(f->evidence, "36 launches of 1 kernels record 0 registers"));
	diag_report__delete(r);
}
END_TEST

/* ---- access efficiency ---------------------------------------------------------- */

#define STRIDED "gather_strided(float const*, float*, unsigned long)"
#define CONTIGUOUS "gather_contiguous(float const*, float*, unsigned long)"

/* Each step: a strided and a contiguous gather, 1 ms each, moving 2 GB of
 * DRAM (2 TB/s: memory-bound on the H100's 3.35 TB/s); metrics with access
 * counters for every launch, as the H100 measured them: the strided loads
 * touch 32 sectors per request, the contiguous ones 4. */
static void write_gathers(const char *name)
{
	char dir[512], tsv[600];
	struct prof_error err;
	struct prog p;
	int32_t corr[2][10];
	FILE *f;

	prog_open(&p, name, true);
	for (int i = 0; i < 10; i++) {
		int64_t s;
		range_push(&p, &s);
		corr[0][i] = kernel(&p, STRIDED, 1000 * US, 256, 16, 0);
		corr[1][i] = kernel(&p, CONTIGUOUS, 1000 * US, 256, 16, 0);
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
	snprintf(dir, sizeof dir, "%s", testutil_tmp_path("access_dir"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(tsv, sizeof tsv, "%s/metrics-%u.tsv", dir, PID);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 10; i++)
			/* metrics, the launch (enter, exit, grid, block, shared,
			 * registers, stream, context, names), the access counters */
			fprintf(f, "%u\t%d\t0\t1000000\t-\t-\t-\t-\t1500000000\t500000000\t2000000000"
				"\t0\t0\t16384\t1\t1\t256\t1\t1\t0\t16\t0\t7\t1\t%s\t%s"
				"\t%d\t131072\t524288\t131072\t16777216\t16777216\t0.00\t50.00\n",
				PID, corr[k][i], k ? "gather_contiguous" : "gather_strided", k ? CONTIGUOUS : STRIDED,
				k ? 524288 : 4194304);
	fclose(f);
	ck_assert_int_eq(prof_analysis__import_metrics_dir(store_path(name), dir, &err), 20);
}

START_TEST(diagnose_uncoalesced_access_instead_of_narrower_words)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gathers("gathers.sqlite");
	r = diagnose("gathers.sqlite", NULL);
	f = find(r, "uncoalesced_access");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, STRIDED));
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "loads 32.0 sectors/request (4.0 if contiguous for 4-byte words)"));
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "4.5 B moved per B used"));
	ck_assert_ptr_nonnull(strstr(f->change, "consecutive threads"));
	/* the FP16/BF16 advice is left for the kernel whose access is coalesced */
	f = find(r, "fp32_memory_bound");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, CONTIGUOUS));
	ck_assert_ptr_nonnull(strstr(f->evidence, "coalesced (at most 1.00 bytes moved per byte used)"));
	ck_assert_ptr_nonnull(strstr(f->evidence, "1 more memory-bound FP32 kernels access memory uncoalesced"));
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_access_threshold_is_a_setting)
{
	struct diag_report *r;
	const struct diag_finding *f;

	write_gathers("gathers_lax.sqlite");
	/* the strided gather moves 4.5 bytes per byte used */
	r = diagnose("gathers_lax.sqlite", "access.max_overfetch=5");
	ck_assert_ptr_null(find(r, "uncoalesced_access"));
	f = find(r, "fp32_memory_bound");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 2);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_access_threshold_below_1_is_refused)
{
	struct diag_settings st;
	struct prof_error err;

	ck_assert_int_eq(diag_settings__init(&st), 0);
	ck_assert_int_eq(diag_settings__parse(&st, "access.max_overfetch=0.9", &err), PROF_E_USAGE);
	ck_assert_str_eq(err.msg, "setting 'access.max_overfetch' needs a number >= 1");
	ck_assert_int_eq(diag_settings__parse(&st, "access.max_overfetch=1", &err), 0);
	ck_assert_int_eq(diag_settings__parse(&st, "repeat.max_between=-1", &err), PROF_E_USAGE);
	diag_settings__exit(&st);
}
END_TEST

/* ---- PyTorch programs ------------------------------------------------------------ */

START_TEST(diagnose_pytorch_kernels_get_advice_in_pytorch_terms)
{
	struct prog p;
	struct diag_report *r;
	const struct diag_finding *f;

	prog_open(&p, "aten.sqlite", true);
	for (int i = 0; i < 20; i++) {
		int64_t s;
		range_push(&p, &s);
		for (int m = 0; m < 64; m++)
			kernel(&p, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
			       2 * US, 256, 16, 0);
		sync_stream(&p);
		range_pop(&p, "step", s);
	}
	prog_close(&p);
	r = diagnose("aten.sqlite", NULL);
	ck_assert(r->pytorch);
	f = find(r, "launch_bound");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->change, "In PyTorch:"));
	/* compiling or graphing the step is advice for a step bound by
	 * launching it, whose host work is what dispatch costs */
	ck_assert(r->verdict.valid);
	ck_assert_int_eq(strstr(f->change, "torch.compile") != NULL,
			 r->verdict.bound == BOUND_LAUNCH_HOST && r->program.dispatch);
	diag_report__delete(r);
}
END_TEST

START_TEST(diagnose_other_programs_get_no_pytorch_sentence)
{
	struct diag_report *r;

	write_forces("forces_plain.sqlite", false);
	r = diagnose("forces_plain.sqlite", NULL);
	ck_assert(!r->pytorch);
	ck_assert_ptr_nonnull(find(r, "launch_bound"));
	for (int i = 0; i < r->nfindings; i++)
		ck_assert_msg(!strstr(r->findings[i].change, "PyTorch"), "%s", r->findings[i].rule_id);
	diag_report__delete(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnose_rules");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, diagnose_small_copies_fire_with_count_and_share);
	tcase_add_test(tc, diagnose_small_copies_silent_on_one_collated_pinned_copy);
	tcase_add_test(tc, diagnose_pageable_async_copies_are_reported);
	tcase_add_test(tc, diagnose_window_is_the_repeated_nvtx_range);
	tcase_add_test(tc, diagnose_setting_raises_the_small_copy_threshold);
	tcase_add_test(tc, diagnose_findings_are_sorted_by_gain_then_severity);
	tcase_add_test(tc, diagnose_window_from_repeating_kernel_without_nvtx);
	tcase_add_test(tc, diagnose_async_loop_window_covers_its_gpu_work_not_the_calls_after_it);
	tcase_add_test(tc, diagnose_whole_run_setting_keeps_the_api_call_rules);
	tcase_add_test(tc, diagnose_transformer_naive_shows_churn_sync_copies_and_small_gemms);
	tcase_add_test(tc, diagnose_transformer_fixed_has_none_of_them);
	tcase_add_test(tc, diagnose_launch_bound_fires_on_short_kernels_with_gaps);
	tcase_add_test(tc, diagnose_launch_bound_silent_when_batched);
	tcase_add_test(tc, diagnose_low_occupancy_names_the_register_limiter);
	tcase_add_test(tc, diagnose_metrics_rules_say_they_need_metrics);
	tcase_add_test(tc, diagnose_gemm_chain_is_not_advised_to_batch);
	tcase_add_test(tc, diagnose_interleaved_gemm_runs_count_their_time_once);
	tcase_add_test(tc, diagnose_repeat_max_between_bounds_the_kernels_between_a_run);
	tcase_add_test(tc, diagnose_back_to_back_gemms_get_batching_as_a_condition);
	tcase_add_test(tc, diagnose_split_k_reduction_is_part_of_its_gemm);
	tcase_add_test(tc, diagnose_gemms_on_several_streams_at_once_are_independent);
	tcase_add_test(tc, diagnose_low_occupancy_is_the_same_with_and_without_metrics);
	tcase_add_test(tc, diagnose_low_occupancy_leaves_out_launches_recording_no_registers);
	tcase_add_test(tc, diagnose_low_occupancy_says_which_launches_it_left_out);
	tcase_add_test(tc, diagnose_uncoalesced_access_instead_of_narrower_words);
	tcase_add_test(tc, diagnose_access_threshold_is_a_setting);
	tcase_add_test(tc, diagnose_access_threshold_below_1_is_refused);
	tcase_add_test(tc, diagnose_pytorch_kernels_get_advice_in_pytorch_terms);
	tcase_add_test(tc, diagnose_other_programs_get_no_pytorch_sentence);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
