/* rules_managed.c - managed memory that moves on demand: pages migrated
 * between host and GPU because one side touched what the other held (CPU
 * and GPU page faults, and the driver's migrations they set off), on the
 * step's path. The change is to move them ahead of use
 * (cudaMemPrefetchAsync), say where they live (cudaMemAdvise), or copy
 * explicitly. */
#include "rules.h"

#include "analysis/diagnose/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "prof/event.h"
#include "prof/saturate.h"
#include "prof/tables.h"
#include "model/names.h"
#include "model/sql.h"
#include "prof/error.h"

/* What set a migration off, in the evidence's words. */
static const char *cause_words(int cause)
{
	switch (cause) {
	case PROF_UM_CAUSE_USER: return "asked for (prefetch)";
	case PROF_UM_CAUSE_COHERENCE: return "on a page fault";
	case PROF_UM_CAUSE_PREFETCH: return "by the driver's prefetch of nearby pages";
	case PROF_UM_CAUSE_EVICTION: return "to evict pages";
	case PROF_UM_CAUSE_ACCESS_COUNTERS: return "by access counters";
	default: return "for an unknown reason";
	}
}

struct um_totals {
	int64_t demand_n, demand_bytes, demand_ns; /* not asked for: faults, evictions */
	int64_t asked_n, asked_bytes;              /* cudaMemPrefetchAsync's */
	int64_t cpu_faults, gpu_groups, gpu_faults;
};

/* Migrations in the window: the demand ones' spans go into l, each
 * direction and cause into t (when given). */
static int load_migrations(struct diag_context *ctx, struct diag_intervals *l, struct diag_tally *t,
			   struct um_totals *u, struct prof_error *err)
{
	const char *sql = "SELECT m.copyKind, m.migrationCause, m.start, m.end, m.bytes FROM " PROF_T_MEMCPY
			  " m WHERE m.copyKind IN (" PROF_SQL_COPY_UVM_KINDS ") AND m.start >= ?1"
			  " AND m.start < ?2 AND NOT " SUM_BAD_SPAN("m.");
	struct prof_cursor *c;
	char key[160];
	int rc;

	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int kind = (int)prof_cursor__int64(c, 0), cause = (int)prof_cursor__int64(c, 1);
		int64_t start = prof_cursor__int64(c, 2), end = prof_cursor__int64(c, 3);
		int64_t bytes = prof_cursor__int64(c, 4), ns = prof_span_saturated(start, end);
		struct diag_tally_entry *e;

		if (cause == PROF_UM_CAUSE_USER) {
			u->asked_n++, u->asked_bytes = prof_add_saturated(u->asked_bytes, bytes);
			continue;
		}
		u->demand_n++, u->demand_bytes = prof_add_saturated(u->demand_bytes, bytes);
		u->demand_ns = prof_add_saturated(u->demand_ns, ns);
		if (diag_intervals__push(l, start, end) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		if (!t)
			continue;
		snprintf(key, sizeof key, "%s %s", sum_copy_short(kind), cause_words(cause));
		e = diag_tally__get(t, key);
		if (!e) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		e->count++, e->time_ns = prof_add_saturated(e->time_ns, ns);
		e->bytes = prof_add_saturated(e->bytes, bytes);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* GPU fault groups: from the driver taking them up to the replay of the
 * accesses, the kernel that faulted waits. */
static int load_gpu_faults(struct diag_context *ctx, struct diag_intervals *l, struct um_totals *u,
			   struct prof_error *err)
{
	const char *sql = "SELECT f.start, f.end, f.numberOfPageFaults FROM " PROF_T_UM_GPU_FAULTS
			  " f WHERE f.start >= ?1 AND f.start < ?2 AND NOT " SUM_BAD_SPAN("f.");
	struct prof_cursor *c;
	int rc;

	if (!prof_store__has_table(ctx->store, PROF_T_UM_GPU_FAULTS))
		return 0;
	rc = diag__open_window(ctx, sql, DIAG_GPU_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		u->gpu_groups++;
		u->gpu_faults = prof_add_saturated(u->gpu_faults, prof_cursor__int64(c, 2));
		if (diag_intervals__push(l, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1)) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* CPU faults have a start only. A run of them no further apart than
 * um.cpu_fault_gap_ms is host code stalled on pages coming back, fault
 * after fault: the run's span counts, with the host's own work between
 * the faults (which the faults spread out; prefetched, the same writes
 * take a fraction of it). The offenders name the faulting function. */
static int load_cpu_faults(struct diag_context *ctx, struct diag_intervals *l, struct diag_tally *t,
			   struct um_totals *u, struct prof_error *err)
{
	const char *sql = "SELECT f.start, coalesce(s.value, '?'), m.value FROM " PROF_T_UM_CPU_FAULTS
			  " f LEFT JOIN " PROF_T_STRINGS " s ON s.id = f.CpuInstruction"
			  " LEFT JOIN " PROF_T_STRINGS " m ON m.id = f.module"
			  " WHERE f.start >= ?1 AND f.start < ?2 ORDER BY f.start";
	int64_t gap = (int64_t)(diag__get(ctx, "um.cpu_fault_gap_ms") * 1e6), run_start = -1, last = -1;
	struct prof_cursor *c;
	char key[300];
	int rc;

	if (!prof_store__has_table(ctx->store, PROF_T_UM_CPU_FAULTS))
		return 0;
	rc = diag__open_window(ctx, sql, DIAG_HOST_SIDE, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t at = prof_cursor__int64(c, 0);

		const char *module = prof_cursor__text(c, 2), *slash = module ? strrchr(module, '/') : NULL;
		struct diag_tally_entry *e = NULL;

		if (t) {
			snprintf(key, sizeof key, "CPU faults in %s (%s)", prof_cursor__text(c, 1),
				 slash ? slash + 1 : module ? module : "?");
			e = diag_tally__get(t, key);
			if (!e) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				break;
			}
			e->count++;
			e->bytes = -1; /* a fault moves nothing itself */
		}
		u->cpu_faults++;
		if (last >= 0 && at - last <= gap) {
			if (e)
				e->time_ns = prof_add_saturated(e->time_ns, at - last);
		} else {
			if (run_start >= 0 && diag_intervals__push(l, run_start, last) < 0) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				break;
			}
			run_start = at;
		}
		last = at;
	}
	prof_cursor__close(c);
	if (rc >= 0 && run_start >= 0 && diag_intervals__push(l, run_start, last) < 0)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	return rc < 0 ? rc : 0;
}

/* The faulting stretches of the window: on-demand migrations, GPU fault
 * groups and runs of CPU faults, as one union. */
static int load_stretches(struct diag_context *ctx, struct diag_intervals *l, struct diag_tally *t,
			  struct um_totals *u, struct prof_error *err)
{
	int rc = load_migrations(ctx, l, t, u, err);

	if (!rc)
		rc = load_gpu_faults(ctx, l, u, err);
	if (!rc)
		rc = load_cpu_faults(ctx, l, t, u, err);
	return rc;
}

int diag_managed__stretch_ns(struct diag_context *ctx, int64_t *ns, struct prof_error *err)
{
	struct diag_intervals l = { 0 };
	struct um_totals u = { 0 };
	int rc = 0;

	*ns = 0;
	if (ctx->has_memcpy)
		rc = load_stretches(ctx, &l, NULL, &u, err);
	if (!rc)
		*ns = diag_intervals__union_ns(&l, ctx->w->start_ns, ctx->w->end_ns);
	diag_intervals__exit(&l);
	return rc;
}

static int rule_managed_memory(struct diag_context *ctx, struct prof_error *err)
{
	struct diag_intervals l = { 0 };
	struct diag_tally t = { 0 };
	struct um_totals u = { 0 };
	int64_t ns;
	char b1[32], b2[32], b3[32], b4[32];
	double share, iters = diag__per_iter(ctx);
	int rc;

	if (!ctx->has_memcpy)
		return 0;
	rc = load_stretches(ctx, &l, &t, &u, err);
	if (rc)
		goto out;
	ns = diag_intervals__union_ns(&l, ctx->w->start_ns, ctx->w->end_ns);
	share = diag__share(ctx, ns);
	if (!u.demand_n && !u.cpu_faults && !u.gpu_groups)
		goto out;
	if (share < diag__get(ctx, "um.min_share"))
		goto out;
	diag_tally__sort_by_time(&t);
	diag_tally__offenders(&t, diag__add(ctx, "managed_memory",
		"Managed memory migrates on demand inside the step", share, ns, DIAG_HIGH,
		diag__fmt("Pages of managed memory move on demand: per iteration %.0f CPU page faults, "
			  "%.0f GPU page faults (in %.0f groups) and %.0f migrations (%s) that no "
			  "prefetch asked for, %s of copy time; the faulting stretches take %s per "
			  "iteration, %.1f%% of the window%s%s%s.",
			  (double)u.cpu_faults / iters, (double)u.gpu_faults / iters,
			  (double)u.gpu_groups / iters, (double)u.demand_n / iters,
			  diag__bytes(b1, sizeof b1, (double)u.demand_bytes / iters),
			  diag__ns(b2, sizeof b2, (int64_t)((double)u.demand_ns / iters)),
			  diag__ns(b3, sizeof b3, (int64_t)((double)ns / iters)), 100 * share,
			  u.asked_n ? "; prefetches asked for moved " : "",
			  u.asked_n ? diag__bytes(b4, sizeof b4, (double)u.asked_bytes / iters) : "",
			  u.asked_n ? " per iteration" : ""),
		diag__fmt("Move the pages before they are touched: cudaMemPrefetchAsync(ptr, bytes, "
			  "the device) before the kernels that use them, and to the host "
			  "(cudaMemLocationTypeHost) before host code reads or writes them, on the "
			  "stream of that work; or tell the driver where they live with cudaMemAdvise "
			  "(SetPreferredLocation, SetAccessedBy, SetReadMostly for data both sides "
			  "read); or keep the data in device memory and move what the host needs "
			  "with explicit cudaMemcpyAsync copies.")));
out:
	diag_tally__exit(&t);
	diag_intervals__exit(&l);
	return rc;
}

const struct diag_rule diag_rules_managed[] = {
	{ "managed_memory", "Managed memory migrates on demand inside the step", rule_managed_memory,
	  true },
	{ NULL, NULL, NULL, false },
};
