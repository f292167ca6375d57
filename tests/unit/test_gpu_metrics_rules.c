/* test_gpu_metrics_rules.c - the diagnose rules on the sampled GPU metrics
 * (report/analysis/rules_gpu_metrics.c) on stores written with known
 * phases: a small grid that keeps few SMs busy, an FP32 GEMM with idle
 * tensor cores, a kernel at the DRAM roof, a copy that fills PCIe; each
 * finding's time follows from the phases; short kernels the samples cannot
 * resolve are not judged; without samples every rule says how to get them. */
#include <check.h>
#include <math.h>

#include "analysis/diagnose_run.h"
#include "report_store.h"
#include "testutil.h"

#define PID 100
#define T0 1000000000LL
#define MS 1000000LL
#define PERIOD 10000LL

enum { SM = 1, ISSUE, TENSOR, DRAM_READ, DRAM_WRITE, PCIE_RX, PCIE_TX, NMETRICS = PCIE_TX };

static const char *const names[NMETRICS + 1] = {
	[SM] = "SMs Active [Throughput %]", [ISSUE] = "SM Issue [Throughput %]",
	[TENSOR] = "Tensor Active [Throughput %]", [DRAM_READ] = "DRAM Read Bandwidth [Throughput %]",
	[DRAM_WRITE] = "DRAM Write Bandwidth [Throughput %]", [PCIE_RX] = "PCIe RX Throughput [Throughput %]",
	[PCIE_TX] = "PCIe TX Throughput [Throughput %]",
};

static struct prof_writer *open_store(const char *name, int nmetrics)
{
	struct prof_writer *w = store_new(name);
	struct prof_gpu_info g = {
		.id = 0, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-test", .sm_count = 132, .compute_major = 9,
		.max_warps_per_sm = 64, .threads_per_warp = 32, .max_blocks_per_sm = 32, .max_registers_per_sm = 65536,
		.max_registers_per_block = 65536, .max_shared_per_sm_bytes = 233472, .max_shared_per_block_bytes = 49152,
		.max_threads_per_block = 1024,
	};

	ck_assert_int_eq(prof_writer__gpu(w, &g), 0);
	prof_writer__process(w, PID, "prog");
	for (int m = 1; m <= nmetrics; m++) {
		struct prof_gpu_metric_type t = { .type_id = 0, .type_name = "GPU", .metric_id = m,
						  .metric_name = names[m], .global_pid = prof_global_pid(PID) };

		ck_assert_int_eq(prof_writer__gpu_metric_type(w, &t), 0);
	}
	return w;
}

/* Samples every PERIOD over [from, to) with these values (metrics 1..n). */
static void samples(struct prof_writer *w, int64_t from, int64_t to, const double *v, int n)
{
	for (int64_t t = from + PERIOD; t <= to; t += PERIOD)
		for (int m = 1; m <= n; m++) {
			struct prof_gpu_metric s = { .timestamp_ns = t, .type_id = 0, .metric_id = m, .value = v[m] };

			ck_assert_int_eq(prof_writer__gpu_metric(w, &s), 0);
		}
}

static void kernel(struct prof_writer *w, const char *name, int64_t start, int64_t end, int blocks)
{
	static int32_t corr = 1;
	struct prof_kernel k = {
		.start_ns = start, .end_ns = end, .correlation_id = corr++, .global_pid = prof_global_pid(PID),
		.stream_id = 7, .grid_x = blocks, .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1, .block_z = 1,
		.registers_per_thread = 32,
	};

	k.demangled_name = k.short_name = prof_writer__string(w, name);
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
}

static struct diag_report *diagnose(struct prof_writer *w)
{
	struct prof_store *s = store_finish(w);
	struct prof_error err = { 0 };
	struct diag_settings st;
	struct diag_report *r;

	ck_assert_int_eq(diag_settings__init(&st), 0);
	ck_assert_int_eq(diag_settings__parse(&st, "window.whole_run=1", &err), 0);
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

static const char *skip_reason(const struct diag_report *r, const char *rule)
{
	for (int i = 0; i < r->nskips; i++)
		if (!strcmp(r->skips[i].rule_id, rule))
			return r->skips[i].reason;
	return NULL;
}

/* Four phases of 1 ms, sampled every 10 us: a 16-block kernel at 12% SMs
 * Active; an FP32 GEMM at 95% with the tensor pipe at 0.5%; a kernel at
 * 60 + 30% of the DRAM bandwidth; a 0.9 ms host-to-device copy at 92% of
 * PCIe. */
static struct diag_report *four_phases(const char *name)
{
	struct prof_writer *w = open_store(name, NMETRICS);
	/*                          SM  Issue Tensor Read Write RX  TX */
	const double p1[] = { 0, 12, 8, 0, 10, 5, 1, 1 };
	const double p2[] = { 0, 95, 60, 0.5, 20, 5, 1, 1 };
	const double p3[] = { 0, 90, 30, 0, 60, 30, 1, 1 };
	const double p4[] = { 0, 0, 0, 0, 5, 1, 92, 3 };

	/* the first sample opens the first period */
	samples(w, T0 - PERIOD, T0, p1, NMETRICS);
	samples(w, T0, T0 + MS, p1, NMETRICS);
	samples(w, T0 + MS, T0 + 2 * MS, p2, NMETRICS);
	samples(w, T0 + 2 * MS, T0 + 3 * MS, p3, NMETRICS);
	samples(w, T0 + 3 * MS, T0 + 4 * MS, p4, NMETRICS);
	kernel(w, "void small_grid_kernel(float*, int)", T0, T0 + MS, 16);
	kernel(w, "ampere_sgemm_128x64_nn", T0 + MS, T0 + 2 * MS, 528);
	kernel(w, "void stream_kernel(float const*, float*, unsigned long)", T0 + 2 * MS, T0 + 3 * MS, 1056);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 45 << 20, T0 + 3 * MS, T0 + 3 * MS + 900000, 0);
	return diagnose(w);
}

START_TEST(rules_small_grid_keeps_few_sms_busy)
{
	struct diag_report *r = four_phases("few_sms.sqlite");
	const struct diag_finding *f = find(r, "few_sms_busy");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "small_grid_kernel"));
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "at most 16 blocks for 132 SMs"));
	/* what filling the SMs could save: 1 ms x (1 - 0.12) */
	ck_assert_int_eq(f->time_ns, 880000);
	ck_assert_ptr_nonnull(strstr(f->evidence, "small grids"));
	diag_report__delete(r);
}
END_TEST

START_TEST(rules_fp32_gemm_with_idle_tensor_cores)
{
	struct diag_report *r = four_phases("tensor.sqlite");
	const struct diag_finding *f = find(r, "tensor_cores_idle");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "ampere_sgemm_128x64_nn: Tensor Active 0.5%"));
	ck_assert_int_eq(f->time_ns, MS);
	ck_assert_ptr_nonnull(strstr(f->change, "TF32"));
	diag_report__delete(r);
}
END_TEST

START_TEST(rules_dram_roof_counts_the_busy_time_at_the_roof)
{
	struct diag_report *r = four_phases("dram.sqlite");
	const struct diag_finding *f = find(r, "dram_roof");

	ck_assert_ptr_nonnull(f);
	/* only phase 3 reaches 80% of the DRAM bandwidth, read + write */
	ck_assert_int_eq(f->time_ns, MS);
	ck_assert_int_eq(f->ntop, 1);
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "stream_kernel"));
	ck_assert_ptr_nonnull(strstr(f->top[0].name, "DRAM read + write 90% of peak"));
	diag_report__delete(r);
}
END_TEST

START_TEST(rules_link_saturated_while_a_copy_runs)
{
	struct diag_report *r = four_phases("link.sqlite");
	const struct diag_finding *f = find(r, "link_saturated");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->time_ns, 900000);
	ck_assert_ptr_nonnull(strstr(f->evidence, "PCIe for 900.00 us, NVLink for 0 ns"));
	ck_assert_str_eq(f->top[0].name, "HtoD copies");
	ck_assert_int_eq(f->top[0].count, 1);
	diag_report__delete(r);
}
END_TEST

START_TEST(rules_kernels_shorter_than_a_sample_period_are_not_judged)
{
	struct prof_writer *w = open_store("short.sqlite", NMETRICS);
	const double idle[] = { 0, 3, 1, 0, 1, 1, 1, 1 };

	/* 2 us kernels, one in every 10 us period: SMs Active 3% is the gaps' */
	samples(w, T0 - PERIOD, T0 + 4 * MS, idle, NMETRICS);
	for (int64_t t = T0; t < T0 + 4 * MS; t += PERIOD) {
		kernel(w, "void tiny_kernel(float*)", t + 1000, t + 3000, 8);
		kernel(w, "ampere_sgemm_32x32_sliced1x4_nn", t + 5000, t + 7000, 8);
	}
	{
		struct diag_report *r = diagnose(w);

		ck_assert_ptr_null(find(r, "few_sms_busy"));
		ck_assert_ptr_null(find(r, "tensor_cores_idle"));
		ck_assert_ptr_null(find(r, "dram_roof"));
		diag_report__delete(r);
	}
}
END_TEST

START_TEST(rules_a_gpu_without_link_metrics_says_so)
{
	struct prof_writer *w = open_store("nolinks.sqlite", DRAM_WRITE);
	const double v[] = { 0, 90, 50, 40, 30, 10 };
	struct diag_report *r;

	samples(w, T0 - PERIOD, T0 + MS, v, DRAM_WRITE);
	kernel(w, "void k(float*)", T0, T0 + MS, 1056);
	r = diagnose(w);
	ck_assert_ptr_null(find(r, "link_saturated"));
	ck_assert_ptr_nonnull(skip_reason(r, "link_saturated"));
	ck_assert_ptr_nonnull(strstr(skip_reason(r, "link_saturated"), "no PCIe or NVLink"));
	ck_assert_ptr_null(skip_reason(r, "few_sms_busy"));
	diag_report__delete(r);
}
END_TEST

START_TEST(rules_without_samples_say_how_to_collect_them)
{
	struct prof_writer *w = store_new("nosamples.sqlite");
	static const char *const ids[] = { "few_sms_busy", "tensor_cores_idle", "dram_roof", "link_saturated" };
	struct diag_report *r;

	add_kernel(w, "ampere_sgemm_128x64_nn", T0, T0 + MS, 1, PID);
	r = diagnose(w);
	/* an FP32 GEMM by its name: the name says what Tensor Active would
	 * (rules_precision.c), so that rule is answered, not skipped */
	ck_assert_ptr_nonnull(find(r, "tensor_cores_idle"));
	ck_assert_ptr_null(skip_reason(r, "tensor_cores_idle"));
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		if (!strcmp(ids[i], "tensor_cores_idle"))
			continue;
		ck_assert_ptr_null(find(r, ids[i]));
		ck_assert_ptr_nonnull(skip_reason(r, ids[i]));
		ck_assert_ptr_nonnull(strstr(skip_reason(r, ids[i]), "perfkit run --gpu-metrics"));
	}
	diag_report__delete(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_metrics_rules");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, rules_small_grid_keeps_few_sms_busy);
	tcase_add_test(tc, rules_fp32_gemm_with_idle_tensor_cores);
	tcase_add_test(tc, rules_dram_roof_counts_the_busy_time_at_the_roof);
	tcase_add_test(tc, rules_link_saturated_while_a_copy_runs);
	tcase_add_test(tc, rules_kernels_shorter_than_a_sample_period_are_not_judged);
	tcase_add_test(tc, rules_a_gpu_without_link_metrics_says_so);
	tcase_add_test(tc, rules_without_samples_say_how_to_collect_them);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
