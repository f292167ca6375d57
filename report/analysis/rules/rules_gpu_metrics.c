/* rules_gpu_metrics.c - rules that read the GPU's sampled counters
 * (`perfkit run --gpu-metrics`, or an nsys export with GPU metrics): kernels
 * that keep few SMs busy, FP32 GEMMs whose tensor cores sit idle, phases at
 * the DRAM bandwidth roof, and links saturated while copies or NCCL kernels
 * run. One pass over each sampler's samples in the window feeds them all
 * (gpu_metrics.h: the averages per kernel name, and each period for the
 * time at a roof); the verdicts are gpu_metrics_judge.c's. A capture
 * without samples lists them as not run, with how to collect them. */
#include "rules.h"

#include "analysis/diagnose/diagnose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_metrics/gemm_names.h"
#include "analysis/gpu_metrics/gpu_metrics.h"
#include "analysis/gpu_metrics/gpu_metrics_judge.h"
#include "analysis/core/gpu_work.h"
#include "analysis/gpu_metrics/metric_overlap.h"
#include "analysis/kernel_metrics/occupancy.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

#define NO_SAMPLES "needs sampled GPU metrics: capture with `perfkit run --gpu-metrics`"

/* One sampler's device in the window: its busy time, the time copies over
 * a link and NCCL kernels run on it, and what the periods at a roof took of
 * them. */
struct device_time {
	struct diag_intervals busy, comm;
	int64_t busy_ns, comm_ns;
	int64_t roof_ns;                  /* busy time in periods at the DRAM roof */
	int64_t pcie_ns, nvlink_ns, link_ns; /* comm time in periods with PCIe, NVLink, either saturated */
	int sm_count;                     /* 0: unknown */
};

struct gm_scan {
	struct diag_context *ctx;
	struct gm_catalog cat;
	struct gm_summary sum;
	struct device_time *dev;          /* one per sampler */
	struct gmj_limits lim;
	int col_sm, col_issue, col_tensor, col_read, col_write, col_pcie_rx, col_pcie_tx, col_nvl_rx, col_nvl_tx;
	struct diag_tally comm;           /* copies by direction, NCCL kernels by name */
};

static double value_of(const double *values, int col)
{
	return col >= 0 ? values[col] : NAN;
}

/* ---- the pass ------------------------------------------------------------------- */

static int on_period(void *arg, int sampler, int64_t from, int64_t to, const double *values, struct prof_error *err)
{
	struct gm_scan *s = arg;
	struct device_time *d = &s->dev[sampler];
	double pcie = gmj__link_throughput(value_of(values, s->col_pcie_rx), value_of(values, s->col_pcie_tx));
	double nvlink = gmj__link_throughput(value_of(values, s->col_nvl_rx), value_of(values, s->col_nvl_tx));
	bool pcie_full = gmj__link_saturated(pcie, &s->lim), nvlink_full = gmj__link_saturated(nvlink, &s->lim);

	(void)err;
	if (gmj__at_dram_roof(value_of(values, s->col_read), value_of(values, s->col_write), &s->lim))
		d->roof_ns = prof_add_saturated(d->roof_ns, diag_intervals__covered(&d->busy, from, to));
	if (pcie_full || nvlink_full) {
		int64_t comm = diag_intervals__covered(&d->comm, from, to);

		d->link_ns = prof_add_saturated(d->link_ns, comm);
		if (pcie_full)
			d->pcie_ns = prof_add_saturated(d->pcie_ns, comm);
		if (nvlink_full)
			d->nvlink_ns = prof_add_saturated(d->nvlink_ns, comm);
	}
	return 0;
}

/* The union of the (start, end) rows of sql on the sampler's device (and
 * process), clipped to the window; ?1, ?2: the window, ?3: the device,
 * ?4: the process. Columns 2 and 3, when sql has them, are a copy kind
 * (NULL for a kernel) and a kernel name, tallied into t when t is given. */
static int load_device_union(struct gm_scan *s, char *sql, const struct gm_sampler *smp, struct diag_intervals *u,
			     struct diag_tally *t, struct prof_error *err)
{
	const struct sum_window *w = s->ctx->w;
	int64_t device = smp->device;
	struct prof_cursor *c = NULL;
	int rc = range_cursor__open(s->ctx->store, sql, w->start_ns, w->end_ns, &device, &c, err);

	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 4, smp->global_pid);
	while ((rc = prof_cursor__next(c, err)) > 0) {
		int64_t start = prof_cursor__int64(c, 0), end = prof_cursor__int64(c, 1);

		if (t) {
			char key[512];
			struct diag_tally_entry *e;

			if (prof_cursor__is_null(c, 2)) {
				snprintf(key, sizeof key, "%s", prof_cursor__is_null(c, 3) ? "?" : prof_cursor__text(c, 3));
			} else {
				const char *dir = sum_copy_short(prof_cursor__int64(c, 2));

				snprintf(key, sizeof key, "%s copies", dir ? dir : "other");
			}
			if (!(e = diag_tally__get(t, key))) {
				rc = PROF_E_NOMEM;
				break;
			}
			e->count++;
			e->time_ns = prof_add_saturated(e->time_ns, prof_span_saturated(start, end));
			e->bytes = -1;
		}
		if (diag_intervals__merge(u, start > w->start_ns ? start : w->start_ns, end < w->end_ns ? end : w->end_ns)) {
			rc = PROF_E_NOMEM;
			break;
		}
	}
	prof_cursor__close(c);
	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return rc < 0 ? rc : 0;
}

/* "AND (globalPid ... = ?4)" where the sampler's process is known: a row
 * that does not say whose it is (NULL, or a table without the column)
 * counts for every process. */
static const char *pid_clause(const struct gm_sampler *smp)
{
	return smp->pid_known ? " AND (globalPid IS NULL OR globalPid = 0 OR globalPid = ?4)" : "";
}

/* Copy kinds that cross a link (PCIe or NVLink): to or from the host, and
 * peer copies; a copy inside one device crosses none. */
#define LINK_COPY_KINDS "1, 2, 3, 4, 10, 11, 12"

/* The union of parts whose table exists, in start order; NULL (*rc 0)
 * when none does. */
static char *ordered_union(struct prof_store *st, const char *const *tables, const char *const *parts, int n, int *rc,
			   struct prof_error *err)
{
	char *src = sum_union(st, tables, parts, n, rc, err), *sql;

	if (!src)
		return NULL;
	sql = malloc(strlen(src) + sizeof " ORDER BY 1");
	if (sql)
		sprintf(sql, "%s ORDER BY 1", src);
	else
		*rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	free(src);
	return sql;
}

static int load_device(struct gm_scan *s, int sampler, struct prof_error *err)
{
	static const char *const busy_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const comm_tables[] = { PROF_T_MEMCPY, PROF_T_KERNEL };
	struct prof_store *st = s->ctx->store;
	const struct gm_sampler *smp = &s->cat.samplers[sampler];
	struct device_time *d = &s->dev[sampler];
	char busy[3][320], comm[2][640], *sql;
	const char *busy_parts[3], *comm_parts[2];
	struct prof_error ignored;
	struct occ_gpu gpu;
	int rc = 0;

	/* everything the device ran */
	for (int i = 0; i < 3; i++) {
		snprintf(busy[i], sizeof busy[i], "SELECT start, end FROM %s WHERE deviceId = ?3 AND end > ?1"
			 " AND start < ?2 AND NOT " SUM_BAD_SPAN("") "%s", busy_tables[i],
			 pid_clause(smp));
		busy_parts[i] = busy[i];
	}
	/* copies over a link, and NCCL kernels */
	snprintf(comm[0], sizeof comm[0], "SELECT start, end, copyKind, NULL FROM " PROF_T_MEMCPY
		 " WHERE deviceId = ?3 AND end > ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("")
		 " AND copyKind IN (" LINK_COPY_KINDS ")%s", pid_clause(smp));
	snprintf(comm[1], sizeof comm[1], "SELECT k.start, k.end, NULL, " DIAG_KERNEL_NAME_SQL " FROM "
		 PROF_T_KERNEL " k WHERE k.deviceId = ?3 AND k.end > ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.") "%s"
		 " AND " PROF_SQL_KERNEL_NAME_ID("k.") " IN (SELECT id FROM " PROF_T_STRINGS
		 " WHERE value LIKE '%%nccl%%')",
		 smp->pid_known ? " AND (k.globalPid IS NULL OR k.globalPid = 0 OR k.globalPid = ?4)" : "");
	comm_parts[0] = comm[0];
	comm_parts[1] = comm[1];
	sql = ordered_union(st, busy_tables, busy_parts, 3, &rc, err);
	if (sql)
		rc = load_device_union(s, sql, smp, &d->busy, NULL, err);
	sql = rc ? NULL : ordered_union(st, comm_tables, comm_parts, 2, &rc, err);
	if (sql)
		rc = load_device_union(s, sql, smp, &d->comm, &s->comm, err);
	if (rc)
		return rc;
	d->busy_ns = diag_intervals__length(&d->busy);
	d->comm_ns = diag_intervals__length(&d->comm);
	d->sm_count = occ_gpu__from_store(st, smp->device, &gpu, &ignored) == 0 ? gpu.sm_count : 0;
	return 0;
}

static void scan_exit(struct gm_scan *s)
{
	for (int i = 0; s->dev && i < s->cat.nsamplers; i++) {
		diag_intervals__exit(&s->dev[i].busy);
		diag_intervals__exit(&s->dev[i].comm);
	}
	free(s->dev);
	gm_summary__exit(&s->sum);
	gm_catalog__exit(&s->cat);
	diag_tally__exit(&s->comm);
}

static int scan(struct gm_scan *s, struct prof_error *err)
{
	const struct gm_options o = {
		.from_ns = s->ctx->w->start_ns, .to_ns = s->ctx->w->end_ns, .kernels = true,
		.on_sample = on_period, .arg = s,
	};
	int rc = 0;

	s->col_sm = gm_catalog__column(&s->cat, GM_SM_ACTIVE);
	s->col_issue = gm_catalog__column(&s->cat, GM_SM_ISSUE);
	s->col_tensor = gm_catalog__column(&s->cat, GM_TENSOR_ACTIVE);
	s->col_read = gm_catalog__column(&s->cat, GM_DRAM_READ);
	s->col_write = gm_catalog__column(&s->cat, GM_DRAM_WRITE);
	s->col_pcie_rx = gm_catalog__column(&s->cat, GM_PCIE_RX);
	s->col_pcie_tx = gm_catalog__column(&s->cat, GM_PCIE_TX);
	s->col_nvl_rx = gm_catalog__column(&s->cat, GM_NVLINK_RX);
	s->col_nvl_tx = gm_catalog__column(&s->cat, GM_NVLINK_TX);
	s->dev = calloc((size_t)s->cat.nsamplers, sizeof *s->dev);
	if (!s->dev)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	for (int i = 0; !rc && i < s->cat.nsamplers; i++)
		rc = load_device(s, i, err);
	return rc ? rc : gm_summary__compute(s->ctx->store, &s->cat, &o, &s->sum, err);
}

/* ---- the rules ------------------------------------------------------------------ */

static double coverage_of(const struct gm_row *r)
{
	return r->covered_ns > 0 ? mo_fraction(r->covered_ns, r->touched_ns) : NAN;
}

static int64_t scaled(int64_t ns, double fraction)
{
	return (int64_t)((double)ns * (fraction < 0 ? 0 : fraction > 1 ? 1 : fraction));
}

static bool enough_of_window(struct gm_scan *s, int64_t ns, const char *key)
{
	return diag__share(s->ctx, ns) >= diag__get(s->ctx, key);
}

/* An offender of a kernel name: its launches and time under key. */
static int offender(struct diag_tally *t, const char *key, const struct gm_row *r, int64_t time_ns)
{
	struct diag_tally_entry *e = diag_tally__get(t, key);

	if (!e)
		return PROF_E_NOMEM;
	e->count = r->instances;
	e->time_ns = time_ns;
	e->bytes = -1;
	return 0;
}

static int few_sms(struct gm_scan *s)
{
	struct diag_context *ctx = s->ctx;
	struct diag_tally t = { 0 };
	int64_t gain_ns = 0, time_ns = 0;
	int small = 0, underfilled = 0, unknown = 0;
	char key[768], b1[32], b2[32];

	if (s->col_sm < 0)
		return diag__skip(ctx, "few_sms_busy", "the GPU's samples give no SMs Active");
	for (int i = 0; i < s->sum.kernels.n; i++) {
		const struct gm_row *r = &s->sum.kernels.rows[i];
		const struct device_time *d = &s->dev[r->sampler];
		double sm = r->mean[s->col_sm];
		enum gmj_sms v = gmj__few_sms(sm, coverage_of(r), r->max_blocks, d->sm_count, &s->lim);

		if (v == GMJ_SMS_NOT_LOW || !enough_of_window(s, r->time_ns, "few_sms.min_kernel_share"))
			continue;
		if (v == GMJ_SMS_SMALL_GRID)
			snprintf(key, sizeof key, "%s: SMs Active %.0f%%, at most %lld blocks for %d SMs", r->name, sm,
				 (long long)r->max_blocks, d->sm_count);
		else if (v == GMJ_SMS_UNDERFILLED)
			snprintf(key, sizeof key, "%s: SMs Active %.0f%% with up to %lld blocks on %d SMs", r->name, sm,
				 (long long)r->max_blocks, d->sm_count);
		else
			snprintf(key, sizeof key, "%s: SMs Active %.0f%%", r->name, sm);
		small += v == GMJ_SMS_SMALL_GRID;
		underfilled += v == GMJ_SMS_UNDERFILLED;
		unknown += v == GMJ_SMS_LOW;
		if (offender(&t, key, r, r->time_ns)) {
			diag_tally__exit(&t);
			return PROF_E_NOMEM;
		}
		time_ns = prof_add_saturated(time_ns, r->time_ns);
		/* what filling every SM could save at most */
		gain_ns = prof_add_saturated(gain_ns, scaled(r->time_ns, 1 - sm / 100));
	}
	if (t.n) {
		char causes[256] = "";

		if (small)
			snprintf(causes, sizeof causes, " %d of them launch fewer blocks than the GPU has SMs (small "
				 "grids).", small);
		if (underfilled)
			snprintf(causes + strlen(causes), sizeof causes - strlen(causes),
				 " %d launch enough blocks yet leave SMs idle: the last wave's tail, or blocks of "
				 "uneven length.", underfilled);
		if (unknown)
			snprintf(causes + strlen(causes), sizeof causes - strlen(causes),
				 " %d have no grid size in the capture.", unknown);
		diag__add_ranked(ctx, &t, "few_sms_busy", "Kernels that keep few SMs busy",
				 gain_ns < ctx->busy_ns ? gain_ns : ctx->busy_ns, DIAG_HIGH,
				 diag__fmt("%d kernels run with SMs Active below %.0f%% on average, as the GPU "
					   "sampled it while they ran (each fills at least %.0f%% of the sample "
					   "periods it falls in).%s They run %s; with every SM busy they could "
					   "take up to %s less.",
					   t.n, 100 * s->lim.max_sm_active, 100 * s->lim.min_coverage, causes,
					   diag__ns(b1, sizeof b1, time_ns), diag__ns(b2, sizeof b2, gain_ns)),
				 diag__with_pytorch(ctx,
					 diag__fmt("Give each launch enough blocks to fill every SM, better several "
						   "waves of them: split the work finer (smaller tiles or blocks, more "
						   "blocks over a grid-stride loop), batch independent small launches "
						   "into one, or run independent kernels on several streams so they "
						   "share the GPU. Against a tail, size the grid to whole waves (a "
						   "multiple of the SM count times the blocks each SM holds) or use a "
						   "persistent grid of that many blocks."),
					 "In PyTorch: a larger batch gives each kernel more blocks; "
					 "torch.compile fuses small ops into fewer, larger kernels, and batched "
					 "ops (torch.bmm, torch._foreach_*) replace loops of small ones."));
	}
	diag_tally__exit(&t);
	return 0;
}

static int tensor_idle(struct gm_scan *s)
{
	struct diag_context *ctx = s->ctx;
	struct diag_tally t = { 0 };
	int64_t time_ns = 0;
	int too_short = 0;
	char key[768], b1[32], extra[160] = "";

	if (s->col_tensor < 0)
		return diag__skip(ctx, "tensor_cores_idle", "the GPU's samples give no Tensor Active");
	for (int i = 0; i < s->sum.kernels.n; i++) {
		const struct gm_row *r = &s->sum.kernels.rows[i];
		double tensor = r->mean[s->col_tensor], issue = s->col_issue >= 0 ? r->mean[s->col_issue] : NAN;

		if (gemm_name__role(r->name) == GEMM_ROLE_GEMM && isfinite(tensor) && !gmj__judged(coverage_of(r), &s->lim))
			too_short++;
		if (!gmj__tensor_idle(r->name, tensor, coverage_of(r), &s->lim))
			continue;
		if (isfinite(issue))
			snprintf(key, sizeof key, "%s: Tensor Active %.1f%%, SM Issue %.0f%%", r->name, tensor, issue);
		else
			snprintf(key, sizeof key, "%s: Tensor Active %.1f%%", r->name, tensor);
		if (offender(&t, key, r, r->time_ns)) {
			diag_tally__exit(&t);
			return PROF_E_NOMEM;
		}
		time_ns = prof_add_saturated(time_ns, r->time_ns);
	}
	if (too_short)
		snprintf(extra, sizeof extra, " %d more GEMM kernels are too short for the samples to judge.", too_short);
	if (t.n && ctx->busy_ns > 0 &&
	    (double)time_ns >= diag__get(ctx, "tensor_idle.min_gemm_share") * (double)ctx->busy_ns)
		diag__add_ranked(ctx, &t, "tensor_cores_idle", "Tensor cores idle in FP32 GEMMs", time_ns, DIAG_HIGH,
				 diag__fmt("%d GEMM kernels run with the tensor cores idle (Tensor Active at most "
					   "%.0f%% while they run) and no 16-bit, TF32 or FP64 type in their names: "
					   "FP32 GEMMs on the SIMT cores. They take %s, %.0f%% of the GPU's busy "
					   "time in the window.%s",
					   t.n, 100 * s->lim.max_tensor, diag__ns(b1, sizeof b1, time_ns),
					   100.0 * (double)time_ns / (double)ctx->busy_ns, extra),
				 diag__with_pytorch(ctx, strdup(diag_change_tf32), diag_pytorch_tf32));
	diag_tally__exit(&t);
	return 0;
}

/* DRAM read plus write of a kernel name's average. */
static double dram_of(const struct gm_scan *s, const struct gm_row *r)
{
	double read = s->col_read >= 0 ? r->mean[s->col_read] : NAN, write = s->col_write >= 0 ? r->mean[s->col_write] : NAN;

	if (!isfinite(read) && !isfinite(write))
		return NAN;
	return (isfinite(read) ? read : 0) + (isfinite(write) ? write : 0);
}

static int dram_roof(struct gm_scan *s)
{
	struct diag_context *ctx = s->ctx;
	struct diag_tally t = { 0 };
	int64_t roof_ns = 0, busy_ns = 0;
	char key[768], b1[32], b2[32];
	bool any_at_roof = false;

	if (s->col_read < 0 && s->col_write < 0)
		return diag__skip(ctx, "dram_roof", "the GPU's samples give no DRAM throughput");
	for (int i = 0; i < s->cat.nsamplers; i++) {
		roof_ns = prof_add_saturated(roof_ns, s->dev[i].roof_ns);
		busy_ns = prof_add_saturated(busy_ns, s->dev[i].busy_ns);
	}
	if (roof_ns <= 0 || (double)roof_ns < diag__get(ctx, "dram_roof.min_busy_share") * (double)busy_ns)
		return 0;
	/* the kernels at the roof on average; else those that move the most */
	for (int i = 0; i < s->sum.kernels.n; i++) {
		const struct gm_row *r = &s->sum.kernels.rows[i];

		any_at_roof = any_at_roof || (gmj__judged(coverage_of(r), &s->lim) && dram_of(s, r) >= 100 * s->lim.dram_roof);
	}
	for (int i = 0; i < s->sum.kernels.n; i++) {
		const struct gm_row *r = &s->sum.kernels.rows[i];
		double dram = dram_of(s, r);

		if (!isfinite(dram) || (any_at_roof && !(gmj__judged(coverage_of(r), &s->lim) &&
							  dram >= 100 * s->lim.dram_roof)))
			continue;
		snprintf(key, sizeof key, "%s: DRAM read + write %.0f%% of peak", r->name, dram);
		/* without kernels at the roof, ranked by the DRAM time they hold */
		if (offender(&t, key, r, any_at_roof ? r->time_ns : scaled(r->time_ns, dram / 100))) {
			diag_tally__exit(&t);
			return PROF_E_NOMEM;
		}
	}
	diag__add_ranked(ctx, &t, "dram_roof", "Phases at the DRAM bandwidth roof", roof_ns, DIAG_HIGH,
			 diag__fmt("The GPU's DRAM runs at %.0f%% or more of its peak bandwidth (read + write, as "
				   "sampled) for %s of the %s the GPU is busy in the window (%.0f%%): those "
				   "phases are memory-bound, and only moving fewer bytes makes them faster.%s",
				   100 * s->lim.dram_roof, diag__ns(b1, sizeof b1, roof_ns),
				   diag__ns(b2, sizeof b2, busy_ns), 100.0 * (double)roof_ns / (double)busy_ns,
				   any_at_roof ? " The kernels below run at the roof on average."
					       : " No kernel stays at the roof on average; below, those that move the most."),
			 diag__with_pytorch(ctx,
				 diag__fmt("Move fewer bytes: fuse kernels that write a tensor and read it back "
					   "(elementwise chains, the bias and activation into the GEMM's epilogue), "
					   "keep data in FP16/BF16 (half the bytes), reuse tiles through shared "
					   "memory or L2 instead of reading them again, and recompute cheap "
					   "intermediates rather than storing them."),
				 "In PyTorch: torch.compile fuses chains of elementwise ops so each tensor "
				 "is read once; torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) halves "
				 "the bytes of activations."));
	diag_tally__exit(&t);
	return 0;
}

static int link_saturated(struct gm_scan *s)
{
	struct diag_context *ctx = s->ctx;
	int64_t comm_ns = 0, link_ns = 0, pcie_ns = 0, nvlink_ns = 0;
	char b1[32], b2[32], b3[32], b4[32];

	if (s->col_pcie_rx < 0 && s->col_pcie_tx < 0 && s->col_nvl_rx < 0 && s->col_nvl_tx < 0)
		return diag__skip(ctx, "link_saturated", "the GPU's samples give no PCIe or NVLink throughput");
	for (int i = 0; i < s->cat.nsamplers; i++) {
		comm_ns = prof_add_saturated(comm_ns, s->dev[i].comm_ns);
		link_ns = prof_add_saturated(link_ns, s->dev[i].link_ns);
		pcie_ns = prof_add_saturated(pcie_ns, s->dev[i].pcie_ns);
		nvlink_ns = prof_add_saturated(nvlink_ns, s->dev[i].nvlink_ns);
	}
	if (link_ns <= 0 || (double)link_ns < diag__get(ctx, "link_saturated.min_comm_share") * (double)comm_ns)
		return 0;
	diag__add_ranked(ctx, &s->comm, "link_saturated", "PCIe or NVLink saturated during communication", link_ns,
			 DIAG_HIGH,
			 diag__fmt("Copies between host and device or peers and NCCL kernels run %s in the "
				   "window; for %s of it (%.0f%%) a link runs at %.0f%% or more of its peak "
				   "throughput, as sampled (PCIe for %s, NVLink for %s): the transfers are "
				   "limited by the link's bandwidth.",
				   diag__ns(b1, sizeof b1, comm_ns), diag__ns(b2, sizeof b2, link_ns),
				   100.0 * (double)link_ns / (double)comm_ns, 100 * s->lim.link_roof,
				   diag__ns(b3, sizeof b3, pcie_ns), diag__ns(b4, sizeof b4, nvlink_ns)),
			 diag__with_pytorch(ctx,
				 diag__fmt("Only fewer bytes or overlap make them cheaper: overlap copies with "
					   "compute (pinned memory, cudaMemcpyAsync on a second stream) and "
					   "collectives with the backward pass (all-reduce in buckets as gradients "
					   "are ready); send fewer bytes (keep data resident on the GPU, BF16/FP16 "
					   "gradients, gradient accumulation with fewer all-reduces); and check "
					   "that peers talk over NVLink where the machine has it."),
				 "In PyTorch: DistributedDataParallel overlaps all-reduce with backward in "
				 "buckets (bucket_cap_mb, gradient_as_bucket_view=True); "
				 "register_comm_hook(None, bf16_compress_hook) halves the bytes; no_sync() over "
				 "gradient-accumulation steps all-reduces less often; DataLoader(pin_memory=True) "
				 "with .to(\"cuda\", non_blocking=True) overlaps host copies."));
	return 0;
}

static int rules_gpu_metrics(struct diag_context *ctx, struct prof_error *err)
{
	static const char *const ids[] = { "few_sms_busy", "tensor_cores_idle", "dram_roof", "link_saturated" };
	struct gm_scan s = { .ctx = ctx };
	int rc = gm_catalog__load(ctx->store, &s.cat, err);

	if (rc)
		return rc;
	if (s.cat.nsamplers == 0) {
		for (size_t i = 0; !rc && i < sizeof ids / sizeof ids[0]; i++)
			rc = diag__skip(ctx, ids[i], NO_SAMPLES);
		gm_catalog__exit(&s.cat);
		return rc ? prof_error__set(err, PROF_E_NOMEM, "out of memory") : 0;
	}
	ctx->report->has_gpu_samples = true;
	s.lim = (struct gmj_limits){
		.min_coverage = diag__get(ctx, "gpu_metrics.min_coverage"),
		.max_sm_active = diag__get(ctx, "few_sms.max_sm_active"),
		.max_tensor = diag__get(ctx, "tensor_idle.max_tensor_active"),
		.dram_roof = diag__get(ctx, "dram_roof.min_throughput"),
		.link_roof = diag__get(ctx, "link_saturated.min_throughput"),
	};
	rc = scan(&s, err);
	if (!rc && (few_sms(&s) || tensor_idle(&s) || dram_roof(&s) || link_saturated(&s)))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	scan_exit(&s);
	return rc;
}

const struct diag_rule diag_rules_gpu_metrics[] = {
	{ "few_sms_busy+tensor_cores_idle+dram_roof+link_saturated", "Sampled GPU metrics", rules_gpu_metrics, false },
	{ NULL, NULL, NULL, false },
};
