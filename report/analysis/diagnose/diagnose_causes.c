/* diagnose_causes.c - findings as causes: the findings that explain the same
 * part of the step's budget become one, and the finding of the verdict's
 * bound comes first.
 *
 * A launch-bound step is seen by five rules at once: the GPU is idle
 * (gpu_util), idle between launches (gpu_gaps), the host's work fills the
 * gaps (cpu_bound), its launch calls are many (launch_bound), and the
 * critical path runs through them (critical_path). Each is right, and a
 * reader handed all five must work out that they are one cause with one
 * change. So they are folded into the one that names the largest part of
 * the budget (the host's own work: cpu_bound; launch calls and the GPU's
 * latency between kernels: launch_bound), the others kept as its evidence
 * ("also"), their changes dropped. */
#include "diagnose.h"

#include <stdlib.h>
#include <string.h>

/* The rules that see the GPU waiting on the host, most specific first
 * where the host's own work is the larger part; launch first otherwise. */
static const char *const host_rules_work[] = { "cpu_bound", "launch_bound", "gpu_gaps",
					       "critical_path", "gpu_util" };
static const char *const host_rules_launch[] = { "launch_bound", "cpu_bound", "gpu_gaps",
						 "critical_path", "gpu_util" };
#define NHOST_RULES (sizeof host_rules_work / sizeof host_rules_work[0])

static int find_rule(const struct diag_report *r, const char *rule)
{
	for (int i = 0; i < r->nfindings; i++)
		if (!strcmp(r->findings[i].rule_id, rule))
			return i;
	return -1;
}

static void finding_exit(struct diag_finding *f)
{
	free(f->evidence);
	free(f->change);
	for (int j = 0; j < f->ntop; j++)
		free(f->top[j].name);
	free(f->ranks);
	diag_finding__free_also(f);
}

void diag_finding__free_also(struct diag_finding *f)
{
	for (int i = 0; i < f->nalso; i++)
		free(f->also[i].evidence);
	free(f->also);
	f->also = NULL;
	f->nalso = 0;
}

int diag_finding__add_also(struct diag_finding *f, const char *rule_id, const char *title,
			   double share, const char *evidence)
{
	struct diag_also *n = realloc(f->also, sizeof *n * (size_t)(f->nalso + 1));

	if (!n)
		return PROF_E_NOMEM;
	f->also = n;
	n[f->nalso] = (struct diag_also){ rule_id, title, share, strdup(evidence ? evidence : "") };
	if (!n[f->nalso].evidence)
		return PROF_E_NOMEM;
	f->nalso++;
	return 0;
}

int diag_finding__copy_also(struct diag_finding *to, const struct diag_finding *from)
{
	for (int i = 0; i < from->nalso; i++)
		if (diag_finding__add_also(to, from->also[i].rule_id, from->also[i].title, from->also[i].share,
					   from->also[i].evidence))
			return PROF_E_NOMEM;
	return 0;
}

static void cap_by_budget(const struct diag_context *ctx, struct diag_report *r);

/* The critical path describes the step; it is not a cause. Where a finding
 * names the cause of its longest part outside GPU work (an allocation on
 * the path: alloc_churn), the path is that finding's evidence. Where none
 * does, it stands alone, but leads only when a fifth of the step or more
 * (severity.high) lies outside GPU work: below that the step is the GPU's,
 * and the rest of the path is what the verdict's budget already shows. */
static int fold_critical_path(const struct diag_context *ctx, struct diag_report *r)
{
	int path = find_rule(r, "critical_path"), cause = -1;
	struct diag_finding *f;

	if (path < 0)
		return 0;
	for (int k = 0; r->path_causes && r->path_causes[k] && cause < 0; k++)
		cause = find_rule(r, r->path_causes[k]);
	f = &r->findings[path];
	if (cause < 0) {
		if (f->share < diag__get(ctx, "severity.high") && f->severity > DIAG_LOW)
			f->severity = DIAG_LOW;
		return 0;
	}
	if (diag_finding__add_also(&r->findings[cause], f->rule_id, f->title, f->share, f->evidence) ||
	    diag_finding__copy_also(&r->findings[cause], f))
		return PROF_E_NOMEM;
	finding_exit(f);
	memmove(f, f + 1, sizeof *f * (size_t)(r->nfindings - path - 1));
	r->nfindings--;
	return 0;
}

int diag_report__fold_rank_into(struct diag_report *r, int into, int rank)
{
	int kept = 0;

	for (int i = 0; i < r->nfindings; i++) {
		struct diag_finding *o = &r->findings[i];
		bool host = false;

		for (size_t k = 0; k < NHOST_RULES; k++)
			host |= !strcmp(o->rule_id, host_rules_work[k]);
		if (i == into || !host || !o->per_rank || o->share_rank != rank)
			continue;
		if (diag_finding__add_also(&r->findings[into], o->rule_id, o->title, o->share, o->evidence) ||
		    diag_finding__copy_also(&r->findings[into], o))
			return PROF_E_NOMEM;
		o->rule_id = NULL; /* folded: dropped below */
	}
	for (int i = 0; i < r->nfindings; i++) {
		if (!r->findings[i].rule_id) {
			finding_exit(&r->findings[i]);
			continue;
		}
		r->findings[kept++] = r->findings[i];
	}
	r->nfindings = kept;
	return 0;
}

int diag_report__fold(const struct diag_context *ctx, struct diag_report *r)
{
	const struct diag_verdict *v = &r->verdict;
	const char *const *order = host_rules_work;
	int at[NHOST_RULES], primary = -1, found = 0;

	if (v->valid && v->part_ns[PART_HOST_WORK] < v->part_ns[PART_LAUNCH] + v->part_ns[PART_QUEUED_GAP])
		order = host_rules_launch;
	for (size_t k = 0; k < NHOST_RULES; k++) {
		at[k] = find_rule(r, order[k]);
		if (at[k] >= 0 && primary < 0)
			primary = at[k];
		found += at[k] >= 0;
	}
	cap_by_budget(ctx, r);
	if (found < 2)
		return fold_critical_path(ctx, r);
	for (size_t k = 0; k < NHOST_RULES; k++) {
		struct diag_finding *p = &r->findings[primary], *o;

		if (at[k] < 0 || at[k] == primary)
			continue;
		o = &r->findings[at[k]];
		if (diag_finding__add_also(p, o->rule_id, o->title, o->share, o->evidence))
			return PROF_E_NOMEM;
		/* one cause: as grave, and as large, as its gravest sign */
		if (o->severity > p->severity)
			p->severity = o->severity;
		if (o->share > p->share) {
			p->share = o->share;
			p->time_ns = o->time_ns;
		}
	}
	/* the cause's size is the budget's: the signs measure overlapping
	 * things (the critical path spans the whole step), the verdict splits
	 * the step once */
	if (v->valid && v->step_ns > 0) {
		struct diag_finding *p = &r->findings[primary];
		int64_t host = 0;

		for (int part = 0; part < VERDICT_NPARTS; part++)
			if (verdict_part__bound(part) == BOUND_LAUNCH_HOST)
				host += v->part_ns[part];
		enum diag_severity by_budget;

		p->share = (double)host / (double)v->step_ns;
		p->time_ns = v->steps > 0 ? host * v->steps : host;
		by_budget = diag__severity_of(ctx, p->share);
		if (by_budget < p->severity)
			p->severity = by_budget;
	}
	/* drop the folded ones, keeping the order of the rest */
	for (int i = 0, j = 0, n = r->nfindings; i < n; i++) {
		bool folded = false;

		for (size_t k = 0; k < NHOST_RULES; k++)
			folded |= at[k] == i && i != primary;
		if (folded) {
			finding_exit(&r->findings[i]);
			r->nfindings--;
		} else {
			r->findings[j++] = r->findings[i];
		}
	}
	return fold_critical_path(ctx, r);
}

/* What a host-side finding can cost the step is the GPU's idle time its
 * cause explains: a synchronous copy that blocks the host while the GPU
 * runs the kernels it waits for costs the step nothing the GPU was not
 * doing anyway. So the share of these findings is capped by their parts
 * of the budget (never raised). */
static const struct {
	const char *rule;
	unsigned parts; /* bits of enum verdict_part */
} costs[] = {
	{ "sync_memcpy", 1u << PART_BLOCKING_COPY | 1u << PART_SYNC },
	{ "sync_memset", 1u << PART_BLOCKING_COPY | 1u << PART_SYNC },
	{ "sync_api", 1u << PART_SYNC | 1u << PART_GPU_WAIT },
	{ "alloc_churn", 1u << PART_ALLOC },
};

static void cap_by_budget(const struct diag_context *ctx, struct diag_report *r)
{
	const struct diag_verdict *v = &r->verdict;

	if (!v->valid || v->step_ns <= 0)
		return;
	for (int i = 0; i < r->nfindings; i++) {
		struct diag_finding *f = &r->findings[i];

		for (size_t k = 0; k < sizeof costs / sizeof costs[0]; k++) {
			int64_t ns = 0;
			double share;
			enum diag_severity by_budget;

			if (strcmp(costs[k].rule, f->rule_id))
				continue;
			for (int part = 0; part < VERDICT_NPARTS; part++)
				if (costs[k].parts & 1u << part)
					ns += v->part_ns[part];
			share = (double)ns / (double)v->step_ns;
			if (share >= f->share)
				break;
			f->share = share;
			by_budget = diag__severity_of(ctx, share);
			if (by_budget < f->severity)
				f->severity = by_budget;
			break;
		}
	}
}

/* The rules whose finding names the verdict's bound, first the one that
 * leads: what a reader of the verdict looks for first. */
static int bound_rank(const struct diag_report *r, const struct diag_finding *f)
{
	static const char *const leads[VERDICT_NBOUNDS][6] = {
		[BOUND_GPU_COMPUTE] = { "tensor_cores_idle", "repeated_kernel", "low_occupancy", "few_sms_busy" },
		[BOUND_GPU_MEMORY] = { "dram_roof", "uncoalesced_access", "bandwidth_below_roof", "fp32_memory_bound" },
		[BOUND_LAUNCH_HOST] = { "cpu_bound", "launch_bound", "repeated_kernel", "gpu_gaps", "critical_path", "gpu_util" },
		[BOUND_SYNC] = { "sync_api", "sync_memcpy", "sync_memset" },
		[BOUND_TRANSFER] = { "managed_memory", "pageable_async_copy", "sync_memcpy", "small_htod_copies", "transfer_volume", "link_saturated" },
		[BOUND_COMMUNICATION] = { "exposed_communication", "straggler", "small_collectives", "collective_bandwidth" },
		[BOUND_ANOTHER_RANK] = { "straggler", "rank_imbalance" },
	};

	if (!r->verdict.valid)
		return 6;
	for (int k = 0; k < 6 && leads[r->verdict.bound][k]; k++)
		if (!strcmp(leads[r->verdict.bound][k], f->rule_id))
			return k;
	return 6;
}

/* qsort has no context argument: the array the comparator reads, one a
 * thread (the ranks of a job are diagnosed on several). */
static _Thread_local const struct diag_report *sorting;

/* What f's change gives, as a fraction of the step: its estimated gain
 * (rules/gains.c), else its share (the most it could give). */
static double gain_of(const struct diag_report *r, const struct diag_finding *f)
{
	int64_t step = r->verdict.valid ? r->verdict.step_ns : 0;

	if (f->gain_step_ns > 0 && step > 0)
		return f->gain_step_ns >= step ? 0 : (double)(step - f->gain_step_ns) / (double)step;
	return f->share;
}

/* Findings of medium severity or more first, by what their change gives
 * the step, those that name the verdict's bound first where that is
 * equal; then the rest by severity, then by what they give: a [low]
 * heuristic never ranks above a [high] measurement. */
static int by_cause(const void *a, const void *b)
{
	const struct diag_finding *x = a, *y = b;
	bool xs = x->severity >= DIAG_MEDIUM, ys = y->severity >= DIAG_MEDIUM;
	double xg = gain_of(sorting, x), yg = gain_of(sorting, y);
	int xr = xs ? bound_rank(sorting, x) : 6, yr = ys ? bound_rank(sorting, y) : 6;

	if (xs != ys)
		return xs ? -1 : 1;
	if (!xs && x->severity != y->severity)
		return x->severity < y->severity ? 1 : -1;
	if (xg != yg)
		return xg < yg ? 1 : -1;
	if (xr != yr)
		return xr < yr ? -1 : 1;
	if (x->severity != y->severity)
		return x->severity < y->severity ? 1 : -1;
	return strcmp(x->rule_id, y->rule_id);
}

void diag_report__order(struct diag_report *r)
{
	if (r->nfindings < 2)
		return;
	sorting = r;
	qsort(r->findings, (size_t)r->nfindings, sizeof *r->findings, by_cause);
	sorting = NULL;
}
