/* rules_kernel.c - rules about individual kernels: low theoretical occupancy
 * with its limiter (from the launch records alone), and with hardware
 * metrics: memory-bound FP32 kernels (FP16/BF16 storage halves their bytes)
 * and memory-bound kernels far below the bandwidth roof. Without metrics the
 * FP32 rule falls back to the argument types in the demangled name and says
 * that it did; the bandwidth rule needs metrics and says so. */
#include "diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "occupancy.h"
#include "prof/tables.h"
#include "roofline.h"

static int rule_occupancy(struct diag_context *ctx, struct prof_error *err)
{
	const char *sql =
		"SELECT " DIAG_KERNEL_NAME_SQL ", k.blockX * k.blockY * k.blockZ, k.registersPerThread,"
		" k.staticSharedMemory + k.dynamicSharedMemory, max(k.sharedMemoryExecuted),"
		" count(*), sum(k.end - k.start)"
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2"
		" GROUP BY k.demangledName, 2, 3, 4 ORDER BY 7 DESC";
	double max_occ = diag__get(ctx, "occupancy.max");
	double min_share = diag__get(ctx, "occupancy.min_kernel_share");
	struct diag_tally t = { 0 };
	struct occ_gpu gpu;
	struct prof_error gerr;
	struct prof_cursor *c;
	int64_t ns = 0, n = 0;
	char key[512], b1[32];
	int rc;

	if (!ctx->has_kernel)
		return 0;
	if (occ_gpu__from_store(ctx->store, 0, &gpu, &gerr))
		return diag__skip(ctx, "low_occupancy", "no usable GPU description: %s", gerr.msg);
	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		struct occ_launch l = {
			.threads_per_block = (int)prof_cursor__int64(c, 1),
			.registers_per_thread = (int)prof_cursor__int64(c, 2),
			.shared_per_block_bytes = prof_cursor__int64(c, 3),
			.shared_config_bytes = prof_cursor__int64(c, 4),
		};
		struct occ_result r;
		int64_t time = prof_cursor__int64(c, 6);
		struct diag_tally_entry *e;

		if (diag__share(ctx, time) < min_share)
			continue;
		if (occ__compute(&gpu, &l, &r) || r.limiter == OCC_LIMIT_INVALID || r.occupancy >= max_occ)
			continue;
		snprintf(key, sizeof key, "%s: %.0f%% (%d threads, %d regs, %lld B shared; limited by %s)",
			 prof_cursor__text(c, 0), 100 * r.occupancy, l.threads_per_block, l.registers_per_thread,
			 (long long)l.shared_per_block_bytes, occ_limiter__name(r.limiter));
		e = diag_tally__get(&t, key);
		if (!e) {
			prof_cursor__close(c);
			diag_tally__exit(&t);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		e->count += prof_cursor__int64(c, 5);
		e->time_ns += time;
		e->bytes = -1;
		ns += time;
		n++;
	}
	prof_cursor__close(c);
	if (rc >= 0 && n) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		/* low occupancy is a cause only when the kernel is latency-bound,
		 * which the launch records cannot show: at most low severity */
		f = diag__add(ctx, "low_occupancy", "Low theoretical occupancy", diag__share(ctx, ns), ns, DIAG_LOW,
			      diag__fmt("%lld kernel configurations below %.0f%% theoretical occupancy on %s "
					"run %s in the window (see the limiter of each below).",
					(long long)n, 100 * max_occ, gpu.name[0] ? gpu.name : "this GPU",
					diag__ns(b1, sizeof b1, ns)),
			      diag__fmt("Registers: cap them with __launch_bounds__(threads, minBlocks) or "
					"-maxrregcount; shared memory: smaller tiles or fewer stages; block size: "
					"use 128-256 threads per block. Check with `perfkit roofline` whether the "
					"kernel is latency-bound before trading registers for occupancy."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return rc < 0 ? rc : 0;
}

/* 16-bit, 8-bit or double types in the name, as CUDA, PyTorch, cuBLAS and
 * CUTLASS spell them. */
static bool other_than_fp32_name(const char *name)
{
	static const char *const words[] = { "half", "Half", "bfloat16", "BFloat16", "bf16", "fp16", "f16",
					     "fp8", "e4m3", "e5m2", "double" };

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

/* FP32 storage in the signature: float pointers and no 16-bit or double types. */
static bool fp32_signature(const char *name)
{
	return (strstr(name, "float*") || strstr(name, "float *") || strstr(name, "float const*") ||
		strstr(name, "const float*") || strstr(name, "float4")) &&
	       !other_than_fp32_name(name);
}

static int fp32_heuristic(struct diag_context *ctx, struct prof_error *err)
{
	const char *sql =
		"SELECT " DIAG_KERNEL_NAME_SQL ", count(*), sum(k.end - k.start)"
		" FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2"
		" GROUP BY k.demangledName ORDER BY 3 DESC";
	struct diag_tally t = { 0 };
	struct prof_cursor *c;
	int64_t ns = 0, n = 0;
	char b1[32];
	int rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *name = prof_cursor__text(c, 0);
		int64_t time = prof_cursor__int64(c, 2);
		struct diag_tally_entry *e;

		if (!name || !fp32_signature(name) || diag__share(ctx, time) < diag__get(ctx, "severity.low"))
			continue;
		e = diag_tally__get(&t, name);
		if (!e) {
			prof_cursor__close(c);
			diag_tally__exit(&t);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		e->count = prof_cursor__int64(c, 1);
		e->time_ns = time;
		e->bytes = -1;
		ns += time;
		n++;
	}
	prof_cursor__close(c);
	if (rc >= 0 && n) {
		struct diag_finding *f;
		f = diag__add(ctx, "fp32_memory_bound", "FP32 kernels that may be memory-bound",
			      diag__share(ctx, ns), ns, DIAG_LOW,
			      diag__fmt("%lld kernels take float arguments and no 16-bit types (%s in the "
					"window). Heuristic from the kernel signatures: this capture has no "
					"hardware metrics, so whether they are memory-bound is not measured; "
					"run `perfkit run --metrics=roofline` to confirm.",
					(long long)n, diag__ns(b1, sizeof b1, ns)),
			      diag__fmt("If they are memory-bound, store the data as FP16/BF16 (__half, "
					"__nv_bfloat16; autocast in PyTorch) and accumulate in FP32: half the "
					"bytes moved, up to 2x on these kernels."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return rc < 0 ? rc : 0;
}

/* What one pass over the measured kernels in the window finds for the two
 * metrics rules: memory-bound kernels that keep their data in FP32, and
 * memory-bound kernels far below the DRAM roof, each a tally of offenders. */
struct metrics_scan {
	struct roof_peaks p;
	struct diag_tally fp32, slow;
	int64_t fp32_ns, slow_ns;
	int64_t slow_gain_ns; /* what reaching the roof would save */
};

static int scan_metrics(struct diag_context *ctx, struct metrics_scan *s, struct prof_error *err)
{
	struct roof_kernel *k = NULL;
	double min_frac = diag__get(ctx, "fp32.min_fraction");
	double max_bw = diag__get(ctx, "bandwidth.max_fraction");
	int64_t min_ns = (int64_t)(diag__get(ctx, "bandwidth.min_kernel_us") * 1000);
	char key[512];
	int n = 0, rc;

	rc = roof_peaks__load(ctx->store, &s->p, err);
	if (!rc)
		rc = roof__load(ctx->store, &s->p, ctx->w->start_ns, ctx->w->end_ns, &k, &n, err);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		struct roof_kernel *r = &k[i];
		/* far from both roofs but left of the ridge counts as memory-bound; without
		 * FLOP counts (--metrics=memory) the ridge is unknown: bandwidth decides;
		 * a kernel that moves no DRAM bytes is never memory-bound */
		bool mem = r->dram_bytes > 0 &&
			   (r->klass == ROOF_MEMORY ||
			    (r->klass == ROOF_LATENCY && r->has_flops && r->ai_dram * s->p.dram_bytes_per_s < r->peak_flops));
		struct diag_tally_entry *e;

		if (!mem || r->measured == 0)
			continue;
		/* The advice is about storage: a kernel that keeps its data in 16
		 * bits and computes in FP32 (the fix already made) is not flagged.
		 * FP32 storage shows in float-only arguments, or, where names carry
		 * no types (PyTorch, cuBLAS), in FP32 FLOPs without any 16-bit type
		 * in the name and without tensor-core work (whose FP32 epilogue
		 * would otherwise pass for the kernel's arithmetic). */
		if (fp32_signature(r->name) ||
		    (r->has_flops && r->flops > 0 && r->flops_f32 >= min_frac * r->flops &&
		     r->tensor_inst <= 0 && !other_than_fp32_name(r->name))) {
			if (r->has_flops)
				snprintf(key, sizeof key, "%s: %.2f FLOP/B, %.0f GB/s", r->name, r->ai_dram,
					 r->dram_bytes_per_s / 1e9);
			else /* --metrics=memory: no intensity to show */
				snprintf(key, sizeof key, "%s: %.0f GB/s", r->name, r->dram_bytes_per_s / 1e9);
			if (!(e = diag_tally__get(&s->fp32, key)))
				goto nomem;
			e->count = r->launches, e->time_ns = r->time_ns, e->bytes = (int64_t)r->dram_bytes;
			s->fp32_ns += r->time_ns;
		}
		if (r->metric_time_ns / r->measured >= min_ns && s->p.dram_bytes_per_s > 0 &&
		    r->dram_bytes_per_s < max_bw * s->p.dram_bytes_per_s) {
			double frac = r->dram_bytes_per_s / s->p.dram_bytes_per_s;
			snprintf(key, sizeof key, "%s: %.0f GB/s = %.0f%% of the DRAM roof", r->name,
				 r->dram_bytes_per_s / 1e9, 100 * frac);
			if (!(e = diag_tally__get(&s->slow, key)))
				goto nomem;
			e->count = r->launches, e->time_ns = r->time_ns, e->bytes = (int64_t)r->dram_bytes;
			s->slow_ns += r->time_ns;
			/* reaching the roof would save (1 - frac) of the kernel's time */
			s->slow_gain_ns += (int64_t)((double)r->time_ns * (1 - frac));
		}
	}
	rc = 0;
	goto out;
nomem:
	rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
out:
	roof__free(k, n);
	return rc;
}

static void report_fp32_memory_bound(struct diag_context *ctx, struct metrics_scan *s)
{
	char took[32];

	diag__add_ranked(ctx, &s->fp32, "fp32_memory_bound", "Memory-bound FP32 kernels",
			 s->fp32_ns, DIAG_HIGH,
			 diag__fmt("%d memory-bound kernels keep their data in FP32 (float arguments and "
				   "no 16-bit types, or at least %.0f%% of their FLOPs in FP32): they are "
				   "limited by DRAM bytes, not arithmetic (ceilings: %s). They take %s.",
				   s->fp32.n, 100 * diag__get(ctx, "fp32.min_fraction"), s->p.source,
				   diag__ns(took, sizeof took, s->fp32_ns)),
			 diag__fmt("Store the data as FP16/BF16 (__half/__nv_bfloat16, autocast) and "
				   "accumulate in FP32: half the bytes, up to 2x on these kernels."));
}

/* The finding's time is what reaching the roof would save. */
static void report_bandwidth_below_roof(struct diag_context *ctx, struct metrics_scan *s)
{
	char run[32], gain[32];

	diag__add_ranked(ctx, &s->slow, "bandwidth_below_roof",
			 "Memory-bound kernels far below the bandwidth roof", s->slow_gain_ns, DIAG_HIGH,
			 diag__fmt("%d memory-bound kernels reach less than %.0f%% of the DRAM bandwidth "
				   "ceiling (%.0f GB/s, %s); they run %s, of which %s would go at the roof.",
				   s->slow.n, 100 * diag__get(ctx, "bandwidth.max_fraction"),
				   s->p.dram_bytes_per_s / 1e9, s->p.source, diag__ns(run, sizeof run, s->slow_ns),
				   diag__ns(gain, sizeof gain, s->slow_gain_ns)),
			 diag__fmt("Make accesses coalesced (consecutive threads read consecutive "
				   "addresses), vectorise them (float4 / 128-bit loads), avoid strided or "
				   "indirect access, and give the kernel enough blocks to fill every SM."));
}

/* Both rules need hardware metrics; without them the FP32 one falls back to
 * the kernel signatures and the bandwidth one says what it needs. */
static int rules_metrics(struct diag_context *ctx, struct prof_error *err)
{
	struct metrics_scan s = { 0 };
	int rc;

	if (!ctx->report->has_metrics) {
		diag__skip(ctx, "bandwidth_below_roof",
			   "needs hardware metrics: capture with `perfkit run --metrics=roofline`");
		return ctx->has_kernel ? fp32_heuristic(ctx, err) : 0;
	}
	rc = scan_metrics(ctx, &s, err);
	if (!rc && s.fp32.n)
		report_fp32_memory_bound(ctx, &s);
	if (!rc && s.slow.n)
		report_bandwidth_below_roof(ctx, &s);
	diag_tally__exit(&s.fp32);
	diag_tally__exit(&s.slow);
	return rc;
}

const struct diag_rule diag_rules_kernel[] = {
	{ "low_occupancy", "Low theoretical occupancy", rule_occupancy, false },
	{ "fp32_memory_bound+bandwidth_below_roof", "Memory-bound kernels", rules_metrics, false },
	{ NULL, NULL, NULL, false },
};
