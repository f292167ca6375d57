/* rules_transfer.c - host/device traffic per iteration: many small
 * host-to-device copies (collate them into one), and copy volume that
 * dominates the step (keep data on the GPU, send less, overlap). */
#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "prof/event.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* Host memory is pinned or pageable; anything else is named as such. */
static const char *mem_kind_word(int k)
{
	return k == PROF_MEM_PAGEABLE || k == PROF_MEM_PINNED ? sum_mem_word(k) : "other memory";
}

/* Small copies cost their fixed overhead, paid on the host (the API call)
 * and on the copy engine: a copy's cost is the longer of the two. */
static int rule_small_htod(struct diag_context *ctx, struct prof_error *err)
{
	const char *sql_api =
		"SELECT m.start, m.end, m.bytes, m.srcKind, r.start, r.end, s.value"
		" FROM " PROF_T_MEMCPY " m"
		" LEFT JOIN " DIAG_API_CALLS " r ON r.correlationId = m.correlationId"
		" LEFT JOIN " SUM_API_NAMES " s ON s.id = r.nameId"
		" WHERE m.copyKind = 1 AND m.bytes <= ?3 AND m.start >= ?1 AND m.start < ?2";
	const char *sql_plain =
		"SELECT m.start, m.end, m.bytes, m.srcKind, NULL, NULL, NULL"
		" FROM " PROF_T_MEMCPY " m"
		" WHERE m.copyKind = 1 AND m.bytes <= ?3 AND m.start >= ?1 AND m.start < ?2";
	struct diag_tally t = { 0 };
	int64_t n = 0, ns = 0, bytes = 0, pageable = 0;
	struct prof_cursor *c;
	char key[256], b1[32], b2[32], b3[32], b4[32];
	double per_iter;
	int rc;

	if (!ctx->has_memcpy)
		return 0;
	rc = diag__open_window(ctx, ctx->has_api_calls ? sql_api : sql_plain, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 3, (int64_t)diag__get(ctx, "small_copies.max_bytes"));
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t gpu_ns = prof_span_saturated(prof_cursor__int64(c, 0), prof_cursor__int64(c, 1));
		int64_t api_ns = prof_cursor__is_null(c, 4) ? 0 : prof_span_saturated(prof_cursor__int64(c, 4),
											prof_cursor__int64(c, 5));
		int64_t cost = api_ns > gpu_ns ? api_ns : gpu_ns;
		int src = (int)prof_cursor__int64(c, 3);
		const char *api = prof_cursor__text(c, 6);
		struct diag_tally_entry *e;

		snprintf(key, sizeof key, "%s from %s", api ? api : "HtoD copy", mem_kind_word(src));
		e = diag_tally__get(&t, key);
		if (!e) {
			prof_cursor__close(c);
			diag_tally__exit(&t);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		e->count++, e->time_ns = prof_add_saturated(e->time_ns, cost);
		e->bytes = prof_add_saturated(e->bytes, prof_cursor__int64(c, 2));
		n++, ns = prof_add_saturated(ns, cost), bytes = prof_add_saturated(bytes, prof_cursor__int64(c, 2));
		pageable += src == PROF_MEM_PAGEABLE;
	}
	prof_cursor__close(c);
	if (rc < 0) {
		diag_tally__exit(&t);
		return rc;
	}
	per_iter = (double)n / diag__per_iter(ctx);
	if (n && per_iter >= diag__get(ctx, "small_copies.min_per_iteration")) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		f = diag__add(ctx, "small_htod_copies", "Many small host-to-device copies per iteration",
			      diag__share(ctx, ns), ns, DIAG_HIGH,
			      diag__fmt("%.1f host-to-device copies of at most %s per iteration (%lld in %s), "
					"%s each on average, %s per iteration; %lld of them from pageable memory. "
					"Each copy pays a fixed cost: %s in all.",
					per_iter, diag__bytes(b1, sizeof b1, diag__get(ctx, "small_copies.max_bytes")),
					(long long)n, ctx->w->source,
					diag__bytes(b2, sizeof b2, (double)bytes / (double)n),
					diag__bytes(b3, sizeof b3, (double)bytes / diag__per_iter(ctx)),
					(long long)pageable, diag__ns(b4, sizeof b4, ns)),
			      diag__with_pytorch(ctx,
				      diag__fmt("Collate the inputs of one iteration into one{!pinned  pinned} host buffer "
						"and send it with a single cudaMemcpyAsync (or keep the data resident "
						"on the GPU){!overlap ; prefetch the next iteration on a second stream}."),
				      "In PyTorch: build the batch on the host (torch.stack/torch.cat, or a "
				      "DataLoader collate_fn) and move it once with .to(\"cuda\", "
				      "non_blocking=True){!pinned  from pinned memory}; create constants and small tensors "
				      "on the GPU once (torch.tensor(..., device=\"cuda\") outside the loop)."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return 0;
}

static int rule_transfer_volume(struct diag_context *ctx, struct prof_error *err)
{
	const char *sql =
		"SELECT m.copyKind, m.srcKind, m.dstKind, count(*), " SUM_TOTAL_SATURATED("m.end - m.start")
		", " SUM_TOTAL_SATURATED("m.bytes") " FROM " PROF_T_MEMCPY " m"
		" WHERE m.copyKind IN (1, 2) AND m.start >= ?1 AND m.start < ?2 AND NOT " SUM_BAD_SPAN("m.")
		" GROUP BY 1, 2, 3 ORDER BY 5 DESC";
	struct diag_tally t = { 0 };
	int64_t ns = 0, bytes = 0, n = 0;
	struct prof_cursor *c;
	char key[128], b1[32], b2[32];
	double share;
	int rc;

	if (!ctx->has_memcpy)
		return 0;
	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int kind = (int)prof_cursor__int64(c, 0);
		int host = (int)prof_cursor__int64(c, kind == PROF_COPY_HTOD ? 1 : 2);
		struct diag_tally_entry *e;

		snprintf(key, sizeof key, "%s %s", sum_copy_short(kind), mem_kind_word(host));
		e = diag_tally__get(&t, key);
		if (!e) {
			prof_cursor__close(c);
			diag_tally__exit(&t);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		e->count += prof_cursor__int64(c, 3);
		e->time_ns = prof_add_saturated(e->time_ns, prof_cursor__int64(c, 4));
		e->bytes = prof_add_saturated(e->bytes, prof_cursor__int64(c, 5));
		n += prof_cursor__int64(c, 3);
		ns = prof_add_saturated(ns, prof_cursor__int64(c, 4));
		bytes = prof_add_saturated(bytes, prof_cursor__int64(c, 5));
	}
	prof_cursor__close(c);
	if (rc < 0) {
		diag_tally__exit(&t);
		return rc;
	}
	share = diag__share(ctx, ns);
	if (n && share >= diag__get(ctx, "transfer.min_share")) {
		struct diag_finding *f;
		diag_tally__sort_by_time(&t);
		f = diag__add(ctx, "transfer_volume", "Host/device transfers dominate the step",
			      share, ns, DIAG_HIGH,
			      diag__fmt("Copies between host and device take %s per iteration (%.1f%% of the "
					"window): %s per iteration in %.1f copies, at %.2f GB/s on average.%s",
					diag__ns(b1, sizeof b1, (int64_t)((double)ns / diag__per_iter(ctx))),
					100 * share, diag__bytes(b2, sizeof b2, (double)bytes / diag__per_iter(ctx)),
					(double)n / diag__per_iter(ctx), ns ? (double)bytes / (double)ns : 0.0,
					/* what the program does already belongs here, not in the change */
					ctx->report->program.uses[USE_PINNED] && ctx->report->program.uses[USE_COPY_OVERLAP]
						? " They are from pinned memory and overlap with other work on "
						  "several streams already: the link, not the way they are issued, "
						  "sets their time."
						: ""),
			      diag__with_pytorch(ctx,
				      diag__fmt("Keep data resident on the GPU and send only what changes (ids, "
						"not the tables they index){?pinned {?overlap , and send 16-bit "
						"data where precision allows: only fewer bytes make these copies "
						"cheaper}}{!pinned ; use pinned "
						"memory for what must move}{!overlap ; overlap the copies with compute "
						"on a second stream}."),
				      "In PyTorch: create tensors on the device (device=\"cuda\") and keep "
				      "them there across steps{!pinned ; {?input DataLoader(..., pin_memory=True) or "
				      "}tensor.pin_memory() with .to(\"cuda\", non_blocking=True)}{!overlap ; "
				      "prefetch the next batch on a torch.cuda.Stream}."));
		diag_tally__offenders(&t, f);
	}
	diag_tally__exit(&t);
	return 0;
}

const struct diag_rule diag_rules_transfer[] = {
	{ "small_htod_copies", "Many small host-to-device copies per iteration", rule_small_htod, true },
	{ "transfer_volume", "Host/device transfers dominate the step", rule_transfer_volume, true },
	{ NULL, NULL, NULL, false },
};
