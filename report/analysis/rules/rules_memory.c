/* rules_memory.c - rules about how kernels use memory, from hardware
 * metrics: uncoalesced or scattered global access (sectors moved against the
 * bytes the threads asked for), memory-bound kernels that keep their data in
 * FP32 (FP16/BF16 storage halves their bytes, where access is already
 * efficient), and memory-bound kernels far below the bandwidth roof.
 * Without metrics the FP32 rule falls back to the argument types in the
 * demangled name and says that it did; the others say what they need. */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_metrics/access.h"
#include "analysis/kernel_metrics/gemm_names.h"
#include "prof/tables.h"
#include "analysis/kernel_metrics/roofline.h"
#include "kernel_groups.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/error.h"

static const char *const pytorch_fp32 =
	"In PyTorch:{!bf16  run the step under torch.autocast(device_type=\"cuda\", "
	"dtype=torch.bfloat16), or keep activations and weights in BF16 (model.to(torch.bfloat16)) "
	"with FP32 master weights.}{?bf16  the program runs 16-bit kernels already: these FP32 "
	"ones are what mixed precision leaves in FP32 (reductions, softmax, norms); keeping their "
	"inputs in BF16 halves their bytes.}";

/* FP32 storage in the signature: float pointers and no 16-bit or double types. */
static bool fp32_signature(const char *name)
{
	return (strstr(name, "float*") || strstr(name, "float *") || strstr(name, "float const*") ||
		strstr(name, "const float*") || strstr(name, "float4")) &&
	       !kernel_name__other_than_fp32(name);
}

static int fp32_heuristic(struct diag_context *ctx, struct prof_error *err)
{
	const struct kernel_groups *g;
	struct diag_tally t = { 0 };
	int64_t ns = 0, n = 0;
	char b1[32];
	int rc;

	rc = kernel_groups__of(ctx, &g, err);
	if (rc)
		return rc;
	for (int i = 0; i < g->n; i++) {
		const char *name = g->v[i].name;
		int64_t time = g->v[i].time_ns;
		struct diag_tally_entry *e;

		if (!name || !fp32_signature(name) || diag__share(ctx, time) < diag__get(ctx, "severity.low"))
			continue;
		e = diag_tally__get(&t, name);
		if (!e) {
			diag_tally__exit(&t);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		e->count = g->v[i].count;
		e->time_ns = time;
		e->bytes = -1;
		ns = prof_add_saturated(ns, time);
		n++;
	}
	if (rc >= 0 && n) {
		struct diag_finding *f;
		f = diag__add(ctx, "fp32_memory_bound", "FP32 kernels that may be memory-bound",
			      diag__share(ctx, ns), ns, DIAG_LOW,
			      diag__fmt("%lld kernels take float arguments and no 16-bit types (%s in the "
					"window). Heuristic from the kernel signatures: this capture has no "
					"hardware metrics, so whether they are memory-bound, and whether their "
					"accesses are coalesced, is not measured; run `perfkit run "
					"--metrics=memory` to confirm.",
					(long long)n, diag__ns(b1, sizeof b1, ns)),
			      diag__with_pytorch(ctx,
				      diag__fmt("If they are memory-bound and their accesses coalesced, store "
						"the data as FP16/BF16 (__half, __nv_bfloat16) and accumulate in "
						"FP32: half the bytes moved, up to 2x on these kernels."),
				      pytorch_fp32));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return rc < 0 ? rc : 0;
}

/* What one pass over the measured kernels in the window finds for the
 * metrics rules, each a tally of offenders. */
struct metrics_scan {
	struct roof_peaks p;
	bool access_recorded;          /* the capture has access counters */
	struct diag_tally fp32, slow, scattered;
	int64_t fp32_ns, slow_ns, scattered_ns;
	int64_t slow_gain_ns;          /* what reaching the roof would save */
	int fp32_access_known;         /* FP32 offenders whose access was measured (efficient) */
	double fp32_worst_overfetch;   /* among those */
	int fp32_scattered;            /* memory-bound FP32 kernels left to uncoalesced_access */
	double scattered_moved_bytes, scattered_used_bytes;
	int scattered_measured;        /* of those, kernels whose bytes used were measured */
	int library_gemms;             /* library GEMMs uncoalesced_access leaves out */
};

/* Loads and stores of one kernel against their ideal, for its offender line. */
static void describe_access(char *buf, size_t cap, const struct access_kernel *a)
{
	char words[48] = "", hits[64] = "";
	int w = access__word_bytes(&a->ld);

	if (w)
		snprintf(words, sizeof words, " for %d-byte words", w);
	else if (access__bytes_left_out(&a->ld))
		snprintf(words, sizeof words, " assuming 16-byte cp.async copies");
	else if (a->ld.bytes_requested < 0)
		snprintf(words, sizeof words, " assuming 4-byte words");
	if (a->l1_hit_pct >= 0 && a->l2_hit_pct >= 0)
		snprintf(hits, sizeof hits, "; L1 hit %.0f%%, L2 hit %.0f%%", a->l1_hit_pct, a->l2_hit_pct);
	snprintf(buf, cap,
		 "%s: loads %.1f sectors/request (%.1f if contiguous%s), stores %.1f (%.1f); "
		 "%.1f B moved per B used%s",
		 a->name, access__sectors_per_request(&a->ld), access__ideal_sectors_per_request(&a->ld),
		 words, access__sectors_per_request(&a->st), access__ideal_sectors_per_request(&a->st),
		 access__overfetch(a), hits);
}

static bool memory_bound(const struct roof_kernel *r, const struct roof_peaks *p)
{
	/* far from both roofs but left of the ridge counts as memory-bound; without
	 * FLOP counts (--metrics=memory) the ridge is unknown: bandwidth decides;
	 * a kernel that moves no DRAM bytes is never memory-bound */
	return r->dram_bytes > 0 &&
	       (r->klass == ROOF_MEMORY ||
		(r->klass == ROOF_LATENCY && r->has_flops && r->ai_dram * p->dram_bytes_per_s < r->peak_flops));
}

/* FP32 storage: float-only arguments, or, where names carry no types
 * (PyTorch, cuBLAS), FP32 FLOPs without any 16-bit type in the name and
 * without tensor-core work (whose FP32 epilogue would otherwise pass for the
 * kernel's arithmetic). A kernel that keeps its data in 16 bits and
 * computes in FP32 (the fix already made) is not flagged. */
static bool fp32_storage(const struct roof_kernel *r, double min_frac)
{
	return fp32_signature(r->name) || (r->has_flops && r->flops > 0 && r->flops_f32 >= min_frac * r->flops &&
					   r->tensor_inst <= 0 && !kernel_name__other_than_fp32(r->name));
}

static struct diag_tally_entry *offender(struct diag_tally *t, const char *key, int64_t launches,
					 int64_t time_ns, double bytes)
{
	struct diag_tally_entry *e = diag_tally__get(t, key);

	if (e)
		e->count = launches, e->time_ns = time_ns, e->bytes = (int64_t)bytes;
	return e;
}

/* Kernels whose global accesses move far more than they use. A kernel the
 * roofline finds compute-bound is left out: its time goes to arithmetic. So
 * is a library GEMM (gemm_names.h): it stages its tiles through shared
 * memory in a pattern the library chooses, which the program cannot change;
 * those touching the window are counted for the finding's text. */
static int scan_scattered(struct diag_context *ctx, struct metrics_scan *s, const struct access_kernel *a,
			  int na, const struct roof_kernel *k, int nk)
{
	double max_over = diag__get(ctx, "access.max_overfetch");
	double min_share = diag__get(ctx, "access.min_kernel_share");
	char key[768];

	for (int i = 0; i < na; i++) {
		const struct roof_kernel *r = NULL;
		double moved = (a[i].ld.sectors + a[i].st.sectors) * ACCESS_SECTOR_BYTES;
		double used = access__bytes_asked(&a[i].ld) + access__bytes_asked(&a[i].st);

		if (diag__share(ctx, a[i].time_ns) < min_share)
			continue;
		if (gemm_name__from_library(a[i].name)) {
			s->library_gemms++;
			continue;
		}
		for (int j = 0; j < nk && !r; j++)
			r = !strcmp(k[j].name, a[i].name) ? &k[j] : NULL;
		if (access__judge(&a[i], max_over) != ACCESS_WASTEFUL || (r && r->has_flops && r->klass == ROOF_COMPUTE))
			continue;
		describe_access(key, sizeof key, &a[i]);
		if (!offender(&s->scattered, key, a[i].launches, a[i].time_ns, moved))
			return PROF_E_NOMEM;
		s->scattered_ns = prof_add_saturated(s->scattered_ns, a[i].time_ns);
		/* the bytes moved against the bytes used, of the kernels that have both */
		if (access__bytes_asked(&a[i].ld) >= 0 && access__bytes_asked(&a[i].st) >= 0) {
			s->scattered_moved_bytes += moved;
			s->scattered_used_bytes += used;
			s->scattered_measured++;
		}
	}
	return 0;
}

static int scan_metrics(struct diag_context *ctx, struct metrics_scan *s, struct prof_error *err)
{
	struct roof_kernel *k = NULL;
	struct access_kernel *a = NULL;
	double min_frac = diag__get(ctx, "fp32.min_fraction");
	double max_bw = diag__get(ctx, "bandwidth.max_fraction");
	double max_over = diag__get(ctx, "access.max_overfetch");
	int64_t min_ns = (int64_t)(diag__get(ctx, "bandwidth.min_kernel_us") * 1000);
	char key[512];
	int n = 0, na = 0, rc;

	s->access_recorded = access__recorded(ctx->store);
	rc = roof_peaks__load(ctx->store, &s->p, err);
	if (!rc)
		rc = roof__load(ctx->store, &s->p, ctx->w->start_ns, ctx->w->end_ns, &k, &n, err);
	if (!rc)
		rc = access__load(ctx->store, ctx->w->start_ns, ctx->w->end_ns, &a, &na, err);
	if (rc)
		goto out;
	for (int i = 0; i < n; i++) {
		struct roof_kernel *r = &k[i];
		const struct access_kernel *acc = access__find(a, na, r->name);
		enum access_verdict verdict = acc ? access__judge(acc, max_over) : ACCESS_UNKNOWN;

		/* uncoalesced_access leaves library GEMMs out, so their access is
		 * not counted as waste here either */
		if (verdict == ACCESS_WASTEFUL && gemm_name__from_library(r->name))
			verdict = ACCESS_UNKNOWN;

		if (!memory_bound(r, &s->p) || r->measured == 0)
			continue;
		/* narrower words halve the traffic only where each access already
		 * uses the sector it pulls: scattered kernels go to uncoalesced_access */
		if (fp32_storage(r, min_frac) && verdict == ACCESS_WASTEFUL) {
			s->fp32_scattered++;
		} else if (fp32_storage(r, min_frac)) {
			if (r->has_flops)
				snprintf(key, sizeof key, "%s: %.2f FLOP/B, %.0f GB/s", r->name, r->ai_dram,
					 r->dram_bytes_per_s / 1e9);
			else /* --metrics=memory: no intensity to show */
				snprintf(key, sizeof key, "%s: %.0f GB/s", r->name, r->dram_bytes_per_s / 1e9);
			if (!offender(&s->fp32, key, r->launches, r->time_ns, r->dram_bytes))
				goto nomem;
			s->fp32_ns = prof_add_saturated(s->fp32_ns, r->time_ns);
			if (verdict == ACCESS_EFFICIENT) {
				s->fp32_access_known++;
				if (access__overfetch(acc) > s->fp32_worst_overfetch)
					s->fp32_worst_overfetch = access__overfetch(acc);
			}
		}
		if (r->metric_time_ns / r->measured >= min_ns && s->p.dram_bytes_per_s > 0 &&
		    r->dram_bytes_per_s < max_bw * s->p.dram_bytes_per_s) {
			double frac = r->dram_bytes_per_s / s->p.dram_bytes_per_s;
			snprintf(key, sizeof key, "%s: %.0f GB/s = %.0f%% of the DRAM roof", r->name,
				 r->dram_bytes_per_s / 1e9, 100 * frac);
			if (!offender(&s->slow, key, r->launches, r->time_ns, r->dram_bytes))
				goto nomem;
			s->slow_ns = prof_add_saturated(s->slow_ns, r->time_ns);
			/* reaching the roof would save (1 - frac) of the kernel's time */
			s->slow_gain_ns += (int64_t)((double)r->time_ns * (1 - frac));
		}
	}
	if (scan_scattered(ctx, s, a, na, k, n))
		goto nomem;
	goto out;
nomem:
	rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
out:
	roof__free(k, n);
	access__free(a, na);
	return rc;
}

/* What the FP32 finding knows of its kernels' access efficiency. */
static char *fp32_access_note(const struct metrics_scan *s)
{
	char scattered[160] = "";

	if (s->fp32_scattered)
		snprintf(scattered, sizeof scattered,
			 " %d more memory-bound FP32 kernels access memory uncoalesced: see "
			 "uncoalesced_access, narrower words come after that.", s->fp32_scattered);
	if (!s->access_recorded)
		return diag__fmt("Their access efficiency is unknown: this capture has no access "
				 "counters (made before perfkit recorded them), and narrower words halve "
				 "the traffic only where accesses are coalesced.");
	if (s->fp32_access_known == s->fp32.n)
		return diag__fmt("Their global accesses are coalesced (at most %.2f bytes moved per byte "
				 "used), so narrower words cut the traffic.%s",
				 s->fp32_worst_overfetch, scattered);
	return diag__fmt("Access efficiency was measured as coalesced for %d of them and is unknown "
			 "for the rest.%s", s->fp32_access_known, scattered);
}

static void report_fp32_memory_bound(struct diag_context *ctx, struct metrics_scan *s)
{
	char took[32];
	char *note = fp32_access_note(s);

	diag__add_ranked(ctx, &s->fp32, "fp32_memory_bound", "Memory-bound FP32 kernels",
			 s->fp32_ns, DIAG_HIGH,
			 diag__fmt("%d memory-bound kernels keep their data in FP32 (float arguments and "
				   "no 16-bit types, or at least %.0f%% of their FLOPs in FP32): they are "
				   "limited by DRAM bytes, not arithmetic (ceilings: %s). They take %s. %s",
				   s->fp32.n, 100 * diag__get(ctx, "fp32.min_fraction"), s->p.source,
				   diag__ns(took, sizeof took, s->fp32_ns), note ? note : ""),
			 diag__with_pytorch(ctx,
				 diag__fmt("Store the data as FP16/BF16 (__half/__nv_bfloat16) and "
					   "accumulate in FP32: half the bytes, up to 2x on these kernels."),
				 pytorch_fp32));
	free(note);
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
			 diag__with_pytorch(ctx,
				 diag__fmt("Make accesses coalesced (consecutive threads read consecutive "
					   "addresses), vectorise them (float4 / 128-bit loads), avoid strided or "
					   "indirect access, and give the kernel enough blocks to fill every SM."),
				 "In PyTorch: make the operands contiguous (.contiguous()) and let "
				 "torch.compile fuse chains of elementwise ops so each tensor is read once."));
}

/* The library GEMMs left out, and why, for the finding or the not-run line. */
#define LIBRARY_GEMMS "library GEMM kernels (cuBLAS, CUTLASS, cuDNN)"
#define LIBRARY_GEMMS_WHY \
	"they stage their tiles through shared memory in access patterns the library chooses, not the program"

static void report_uncoalesced(struct diag_context *ctx, struct metrics_scan *s)
{
	char took[32], moved[32], used[32], ratio[160] = "", library[256] = "";

	if (s->scattered_measured > 0)
		snprintf(ratio, sizeof ratio, " %s move %s in sectors for %s the threads asked for.",
			 s->scattered_measured == s->scattered.n ? "In all they" : "Those whose bytes were measured",
			 diag__bytes(moved, sizeof moved, s->scattered_moved_bytes),
			 diag__bytes(used, sizeof used, s->scattered_used_bytes));
	if (s->library_gemms)
		snprintf(library, sizeof library, " %d " LIBRARY_GEMMS " are left out: " LIBRARY_GEMMS_WHY ".",
			 s->library_gemms);
	diag__add_ranked(ctx, &s->scattered, "uncoalesced_access", "Uncoalesced or scattered global memory access",
			 s->scattered_ns, DIAG_HIGH,
			 diag__fmt("%d kernels move more than %.1f bytes for each byte their threads asked "
				   "for: global memory moves in 32-byte sectors, and their warps' accesses "
				   "touch more sectors per request than contiguous access would (32 threads "
				   "reading consecutive 4-byte words touch 4), so most of each sector is "
				   "fetched for nothing.%s They take %s.%s",
				   s->scattered.n, diag__get(ctx, "access.max_overfetch"), ratio,
				   diag__ns(took, sizeof took, s->scattered_ns), library),
			 diag__with_pytorch(ctx,
				 diag__fmt("Coalesce the accesses: have consecutive threads (threadIdx.x) "
					   "touch consecutive addresses, store structures of arrays rather than "
					   "arrays of structures, and where a kernel must walk the slow dimension, "
					   "load a tile coalesced into shared memory and read it transposed there. "
					   "Narrower words (FP16/BF16) do not help first: each access would still "
					   "pull a whole sector."),
				 "In PyTorch: call .contiguous() on a transposed, permuted or sliced tensor "
				 "before the op that walks it, and keep strided views and advanced indexing "
				 "(x[idx], index_select, gather) out of the hot loop."));
}

/* The rules need hardware metrics; without them the FP32 one falls back to
 * the kernel signatures and the others say what they need. */
static int rules_metrics(struct diag_context *ctx, struct prof_error *err)
{
	struct metrics_scan s = { 0 };
	int rc;

	if (!ctx->report->has_metrics) {
		for (int i = 0; i < 2; i++)
			if (diag__skip(ctx, i ? "bandwidth_below_roof" : "uncoalesced_access",
				       "needs hardware metrics: capture with `perfkit run --metrics=memory` "
				       "(or --metrics=roofline, which counts FLOPs too)"))
				return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		return ctx->has_kernel ? fp32_heuristic(ctx, err) : 0;
	}
	rc = scan_metrics(ctx, &s, err);
	if (!rc && !s.access_recorded &&
	    diag__skip(ctx, "uncoalesced_access",
		       "this capture's metrics have no access counters (made before perfkit recorded "
		       "them): capture again with `perfkit run --metrics=memory`"))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc && s.scattered.n)
		report_uncoalesced(ctx, &s);
	else if (!rc && s.library_gemms &&
		 diag__skip(ctx, "uncoalesced_access",
			    "on %d " LIBRARY_GEMMS ": " LIBRARY_GEMMS_WHY "; no other kernel was flagged",
			    s.library_gemms))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (!rc && s.fp32.n)
		report_fp32_memory_bound(ctx, &s);
	if (!rc && s.slow.n)
		report_bandwidth_below_roof(ctx, &s);
	diag_tally__exit(&s.fp32);
	diag_tally__exit(&s.slow);
	diag_tally__exit(&s.scattered);
	return rc;
}

const struct diag_rule diag_rules_memory[] = {
	{ "uncoalesced_access+fp32_memory_bound+bandwidth_below_roof", "Memory access", rules_metrics, false },
	{ NULL, NULL, NULL, false },
};
