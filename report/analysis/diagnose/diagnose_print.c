/* diagnose_print.c - the renderers of a diagnosis: text for people, JSON for
 * tools, and flat rows (one per finding) for CSV and the HTML report. Every
 * string from the capture goes through the sink's escaping function. */
#include "diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks/job_judge.h"
#include "diag_job.h"
#include "prof/escape.h"
#include "sink/symbol.h"
#include "sink/table.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* ranks listed one by one up to this many */
#define LIST_RANKS 8

/* "+4.315 s": t on the capture's time base (sum_capture__time), as the
 * rules' "+x s" and --from/--to count. */
static const char *at(char *buf, size_t cap, const struct sum_window *w, int64_t t)
{
	snprintf(buf, cap, "+%.3f s", (double)prof_span_saturated(w->zero_ns, t) / 1e9);
	return buf;
}

/* How long the capture ran: from its start (the zero) to its last record. */
static int64_t captured_ns(const struct sum_window *w)
{
	return w->capture_end_ns > w->zero_ns ? prof_span_saturated(w->zero_ns, w->capture_end_ns) : 0;
}

/* A job's windows, each rank's own loop. */
static void print_job_window_text(const struct diag_report *r, FILE *out)
{
	const struct sum_window *w = &r->window;
	char b1[32], b2[32];

	fprintf(out, "window: each rank's own loop (of %s captured): ", diag__ns(b1, sizeof b1, captured_ns(w)));
	for (int i = 0; i < r->nranks && i < LIST_RANKS; i++) {
		const struct sum_window *rw = &r->ranks[i].window;

		fprintf(out, "%srank %d ", i ? ", " : "", r->ranks[i].rank);
		prof_fputs_term(out, rw->source);
		fprintf(out, " (%s from %s)", diag__ns(b1, sizeof b1, prof_span_saturated(rw->start_ns, rw->end_ns)),
			at(b2, sizeof b2, rw, rw->start_ns));
	}
	if (r->nranks > LIST_RANKS)
		fprintf(out, " and %d ranks more", r->nranks - LIST_RANKS);
	fprintf(out, "%s\n", r->replayed ? "; shares are of each rank's GPU busy time in its window (kernel replay)"
					  : "; shares are of each rank's window");
}

/* The ranks the rules of one process ran on, where they are not every
 * rank: "ranks diagnosed alone: 2 of 12, rank 1 (the slowest step), ..." */
static void print_diagnosed_text(const struct diag_report *r, FILE *out)
{
	char why[160];
	int n = 0;

	if (r->ndiagnosed >= r->nranks)
		return;
	fprintf(out, "ranks diagnosed alone: %d of %d,", r->ndiagnosed, r->nranks);
	for (int i = 0; i < r->nranks; i++) {
		if (!r->ranks[i].diagnosed)
			continue;
		diag_job__why_words(r->ranks[i].diagnosed, why, sizeof why);
		fprintf(out, "%s rank %d (%s)", n++ ? "," : "", r->ranks[i].rank, why);
	}
	fprintf(out, "; the job's rules read every rank (--set job.every_rank_up_to=%d diagnoses each alone)\n",
		r->nranks);
}

/* "program: pytorch, torch.compile; in use: cuda graphs, 16-bit kernels" */
static void print_program_text(const struct prog_model *m, FILE *out)
{
	int n = 0;

	fputs("program: ", out);
	for (int f = 0; f < PROG_NFRAMEWORKS; f++)
		if (m->framework[f])
			fprintf(out, "%s%s", n++ ? ", " : "", prog_framework__name(f));
	fputs(n ? "" : "plain cuda", out);
	n = 0;
	for (int u = 0; u < USE_NPRACTICES; u++)
		if (m->uses[u])
			fprintf(out, "%s%s", n++ ? ", " : "; in use: ", prog_practice__name(u));
	fputc('\n', out);
}

static void print_program_json(const struct prog_model *m, FILE *out)
{
	int n = 0;

	fputs(",\"program\":{\"frameworks\":[", out);
	for (int f = 0; f < PROG_NFRAMEWORKS; f++)
		if (m->framework[f]) {
			fputs(n++ ? "," : "", out);
			prof_fputs_json(out, prog_framework__name(f));
		}
	if (!n)
		prof_fputs_json(out, "plain cuda");
	fputs("],\"in_use\":[", out);
	n = 0;
	for (int u = 0; u < USE_NPRACTICES; u++)
		if (m->uses[u]) {
			fputs(n++ ? "," : "", out);
			prof_fputs_json(out, prog_practice__name(u));
		}
	fprintf(out, "],\"host_copy_bytes\":%" PRId64 ",\"pinned_copy_bytes\":%" PRId64
		",\"pageable_copy_bytes\":%" PRId64 ",\"streams\":%d,\"kernels\":%" PRId64
		",\"graph_kernels\":%" PRId64 "}", m->host_copy_bytes, m->pinned_copy_bytes,
		m->pageable_copy_bytes, m->streams, m->kernels, m->graph_kernels);
}

/* "verdict: launch/host-bound: ..." and the budget, largest part first. */
static void print_verdict_text(const struct diag_verdict *v, FILE *out)
{
	char b[32];
	int order[VERDICT_NPARTS], nparts;

	if (!v->valid)
		return;
	fputs("verdict: ", out);
	prof_fputs_term(out, v->summary);
	fputs("\nbudget of a step:", out);
	nparts = diag_verdict__parts_by_size(v, order);
	for (int n = 0; n < nparts; n++) {
		int best = order[n];

		fprintf(out, "%s %s %s (%.1f%%)", n ? "," : "", verdict_part__id(best),
			diag__ns(b, sizeof b, v->part_ns[best]),
			v->step_ns > 0 ? 100.0 * (double)v->part_ns[best] / (double)v->step_ns : 0.0);
	}
	fputc('\n', out);
	if (v->all_changes_ns > 0 && v->all_changes_ns < v->step_ns) {
		char b2[32];

		fprintf(out, "the changes below together: a step %s -> %s (%.2fx, estimated)\n",
			diag__ns(b, sizeof b, v->step_ns), diag__ns(b2, sizeof b2, v->all_changes_ns),
			(double)v->step_ns / (double)v->all_changes_ns);
	}
	if (v->unrecorded_step_ns > 0) {
		char b2[32], b3[32], b4[32], b5[32];

		fprintf(out, "without perfkit's recording (%s a launch, %s an allocation or free, %s a copy, "
			"%s another CUDA call, measured by `perfkit peaks`): a step about %s (replayed); "
			"the times above are as measured\n",
			diag__ns(b, sizeof b, (int64_t)(v->record_launch_ns + 0.5)),
			diag__ns(b2, sizeof b2, (int64_t)(v->record_alloc_ns + 0.5)),
			diag__ns(b3, sizeof b3, (int64_t)(v->record_copy_ns + 0.5)),
			diag__ns(b4, sizeof b4, (int64_t)(v->record_call_ns + 0.5)),
			diag__ns(b5, sizeof b5, v->unrecorded_step_ns));
	}
}

static void print_verdict_json(const struct diag_verdict *v, FILE *out)
{
	if (!v->valid) {
		fputs(",\"verdict\":null", out);
		return;
	}
	fputs(",\"verdict\":{\"bound\":", out);
	prof_fputs_json(out, verdict_bound__name(v->bound));
	fprintf(out, ",\"step_ns\":%" PRId64 ",\"steps\":%d,\"device_id\":%" PRId64 ",\"budget\":[",
		v->step_ns, v->steps, v->device_id);
	for (int p = 0; p < VERDICT_NPARTS; p++) {
		fputs(p ? ",{\"part\":" : "{\"part\":", out);
		prof_fputs_json(out, verdict_part__id(p));
		fprintf(out, ",\"ns\":%" PRId64 "}", v->part_ns[p]);
	}
	fputs("],\"summary\":", out);
	prof_fputs_json(out, v->summary);
	if (v->all_changes_ns > 0)
		fprintf(out, ",\"step_ns_after_all_changes\":%" PRId64, v->all_changes_ns);
	if (v->unrecorded_step_ns > 0)
		fprintf(out, ",\"step_ns_unrecorded\":%" PRId64, v->unrecorded_step_ns);
	fputc('}', out);
}

static void print_window_text(const struct diag_report *r, FILE *out)
{
	const struct sum_window *w = &r->window;
	char b1[32], b2[32], b3[32];

	fputs("perfkit diagnose: ", out);
	prof_fputs_term(out, r->path);
	if (r->chosen_label) {
		fputs(", ", out);
		prof_fputs_term(out, r->chosen_label);
	}
	fputc('\n', out);
	if (r->has_job_time) {
		/* the base is the capture's metadata: text from a file */
		fputs("time base: ", out);
		prof_fputs_term(out, r->job_time.base);
		fputs("; estimated alignment error: ", out);
		prof_fputs_term(out, r->job_time.error);
		fputc('\n', out);
	}
	if (r->nranks > 0) {
		print_job_window_text(r, out);
		print_diagnosed_text(r, out);
	} else {
		char recorded[64] = "";
		int64_t len = prof_span_saturated(w->start_ns, w->end_ns);

		/* a window that spans capture windows was not recorded whole */
		if (w->span_ns < len)
			snprintf(recorded, sizeof recorded, ", %s of it recorded",
				 diag__ns(b1, sizeof b1, w->span_ns));
		fputs("window: ", out);
		prof_fputs_term(out, w->source);
		fprintf(out, " (%s from %s%s, of %s captured)%s\n", diag__ns(b1, sizeof b1, len),
			at(b3, sizeof b3, w, w->start_ns), recorded, diag__ns(b2, sizeof b2, captured_ns(w)),
			r->replayed ? "; shares are of the GPU's busy time in it (kernel replay)"
			: w->iterations ? "; shares are of this loop" : "");
	}
	print_program_text(&r->program, out);
	print_verdict_text(&r->verdict, out);
	if (r->failure[0]) {
		fputs("failure: ", out);
		prof_fputs_term(out, r->failure);
		fputc('\n', out);
	}
	if (r->failure_next[0]) {
		fputs("to find it: ", out);
		prof_fputs_term(out, r->failure_next);
		fputc('\n', out);
	}
	if (r->rows_left_out > 0)
		fprintf(out, "left out: %" PRId64 " row%s " SUM_BAD_SPAN_WORDS "\n", r->rows_left_out,
			r->rows_left_out == 1 ? "" : "s");
	if (r->untimed[0]) {
		fputs("untimed: ", out);
		prof_fputs_term(out, r->untimed);
		fputc('\n', out);
	}
	fprintf(out, "metrics: %s; peaks: %s%s\n\n",
		r->has_metrics && r->has_gpu_samples ? "yes, and sampled GPU metrics"
		: r->has_metrics ? "yes" : r->has_gpu_samples ? "sampled GPU metrics" : "none (trace-only rules)",
		r->has_peaks ? "measured" : "nominal",
		r->pytorch ? "; a PyTorch program: changes say how in PyTorch too" : "");
}

void diag_finding__rank_list(const struct diag_finding *f, char *buf, size_t cap)
{
	int *ranks = f->nranks ? malloc(sizeof *ranks * (size_t)f->nranks) : NULL;

	if (f->every_rank || (f->nranks && !ranks)) {
		snprintf(buf, cap, "%s", f->every_rank ? "every rank" : "some ranks");
		free(ranks);
		return;
	}
	for (int i = 0; i < f->nranks; i++)
		ranks[i] = f->ranks[i].rank;
	job_judge__rank_list(ranks, f->nranks, buf, cap);
	free(ranks);
}

/* "    ranks: every rank (2): rank 0 95.8%, rank 1 84.5%", "    ranks:
 * rank 1 10.1%; not on rank 0" (a rule run on each rank names those
 * without it), "    ranks: ranks 0-63: from 1.2% (rank 7) to 9.0% (rank 3)". */
static void print_ranks_text(const struct diag_report *r, const struct diag_finding *f, FILE *out)
{
	char list[256];
	int lo = 0, hi = 0;

	fputs("    ranks: ", out);
	if (f->every_rank)
		fprintf(out, "every rank (%d): ", f->nranks);
	if (f->nranks > LIST_RANKS) {
		for (int i = 1; i < f->nranks; i++) {
			if (f->ranks[i].share < f->ranks[lo].share)
				lo = i;
			if (f->ranks[i].share > f->ranks[hi].share)
				hi = i;
		}
		if (!f->every_rank) {
			diag_finding__rank_list(f, list, sizeof list);
			fprintf(out, "%s: ", list);
		}
		fprintf(out, "from %.1f%% (rank %d) to %.1f%% (rank %d)", 100 * f->ranks[lo].share,
			f->ranks[lo].rank, 100 * f->ranks[hi].share, f->ranks[hi].rank);
	}
	for (int i = 0; f->nranks <= LIST_RANKS && i < f->nranks; i++)
		fprintf(out, "%srank %d %.1f%%", i ? ", " : "", f->ranks[i].rank, 100 * f->ranks[i].share);
	if (f->per_rank && !f->every_rank) {
		int *without = malloc(sizeof *without * (size_t)r->nranks), n = 0;

		/* of the ranks its rule ran on */
		for (int i = 0; without && i < r->nranks; i++) {
			bool has = !r->ranks[i].diagnosed;

			for (int k = 0; k < f->nranks && !has; k++)
				has = f->ranks[k].rank == r->ranks[i].rank;
			if (!has)
				without[n++] = r->ranks[i].rank;
		}
		if (n) {
			job_judge__rank_list(without, n, list, sizeof list);
			fprintf(out, "; not on %s", list);
		}
		free(without);
	}
	if (f->per_rank && r->ndiagnosed < r->nranks)
		fprintf(out, "; of the %d ranks diagnosed alone", r->ndiagnosed);
	fputc('\n', out);
}

/* What a share is of: the window, or in a job the window of one rank. */
static void print_share_base(const struct diag_report *r, const struct diag_finding *f, FILE *out)
{
	const char *what = r->replayed ? "GPU's busy time" : "window";

	if (r->nranks == 0)
		fprintf(out, "the %s", what);
	else if (f->share_rank >= 0)
		fprintf(out, "the %s of rank %d", what, f->share_rank);
	else
		fprintf(out, "the ranks' median %s", what);
}

/* Rules skipped one after another for the same reason share a line. */
int diag_report__skip_group_end(const struct diag_report *r, int i)
{
	int j = i + 1;

	while (j < r->nskips && !strcmp(r->skips[j].reason, r->skips[i].reason))
		j++;
	return j;
}

/* An offender's name as text shows it: kernel names in their short form,
 * unique among the finding's offenders (sink/symbol.h), unless full. */
static void print_offender_name(FILE *out, struct rpt_symbols *names, const char *name)
{
	size_t len;
	char *shown;

	if (!names) {
		prof_fputs_term(out, name);
		return;
	}
	len = rpt_symbols__show(names, name, NULL, 0);
	shown = malloc(len + 1);
	if (shown)
		rpt_symbols__show(names, name, shown, len + 1);
	prof_fputs_term(out, shown ? shown : name);
	free(shown);
}

/* How a gain was estimated, for people (rules/gains.c names the bases). */
static const char *gain_basis_words(const char *basis)
{
	static const struct {
		const char *id, *words;
	} bases[] = {
		{ "replay:graph", "the step replayed with its kernels as one CUDA graph (no launch calls, "
				  "no host work between them)" },
		{ "replay:host_hidden", "the step replayed with the host's own work off the launching thread" },
		{ "replay:no_sync", "the step replayed with synchronisations that do not wait" },
		{ "replay:pinned", "the step replayed with pageable copies at the pinned bandwidth measured "
				   "here, their calls returning once issued" },
		{ "replay:no_alloc", "the step replayed without its allocation and free calls" },
		{ "budget:page_migrations", "the step's budget without the kernels' and copies' stalls on "
					    "page migrations" },
		{ "wait:straggler", "the slowest rank's step without the others' wait for the late rank" },
	};

	for (size_t k = 0; basis && k < sizeof bases / sizeof bases[0]; k++)
		if (!strcmp(bases[k].id, basis))
			return bases[k].words;
	return "?";
}

/* "gain: a step 20.200 ms -> 1.100 ms (18.4x), from ..." */
static void print_gain_text(const struct diag_report *r, const struct diag_finding *f, FILE *out)
{
	char b1[32], b2[32];
	int64_t step = r->verdict.step_ns;

	if (f->gain_step_ns <= 0 || step <= 0)
		return;
	if (f->gain_step_ns >= step)
		fprintf(out, "    gain: none predicted (a step stays %s), from ", diag__ns(b1, sizeof b1, step));
	else
		fprintf(out, "    gain: a step %s -> %s (%.2fx), from ", diag__ns(b1, sizeof b1, step),
			diag__ns(b2, sizeof b2, f->gain_step_ns), (double)step / (double)f->gain_step_ns);
	fputs(gain_basis_words(f->gain_basis), out);
	fputc('\n', out);
}

int diag_report__print_text(const struct diag_report *r, bool full_names, FILE *out)
{
	char b1[32], b2[32];

	print_window_text(r, out);
	if (r->nfindings == 0)
		fputs("No findings.\n", out);
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		fprintf(out, "%2d. [%s] %s: %s\n", i + 1, diag_severity__name(f->severity), f->rule_id, f->title);
		if (r->nranks > 0)
			print_ranks_text(r, f, out);
		fprintf(out, "    share: %.1f%% of ", 100 * f->share);
		print_share_base(r, f, out);
		fprintf(out, " (%s)\n", diag__ns(b1, sizeof b1, f->time_ns));
		print_gain_text(r, f, out);
		struct rpt_symbols *names = full_names ? NULL : rpt_symbols__new();

		fputs("    evidence: ", out);
		prof_fputs_term(out, f->evidence);
		fputc('\n', out);
		for (int j = 0; names && j < f->ntop; j++)
			rpt_symbols__add(names, f->top[j].name);
		for (int j = 0; j < f->ntop; j++) {
			fprintf(out, "      %8" PRId64 " x %12s  ", f->top[j].count,
				diag__ns(b1, sizeof b1, f->top[j].time_ns));
			if (f->top[j].bytes >= 0)
				fprintf(out, "%10s  ", diag__bytes(b2, sizeof b2, (double)f->top[j].bytes));
			print_offender_name(out, names, f->top[j].name);
			fputc('\n', out);
		}
		rpt_symbols__delete(names);
		for (int j = 0; j < f->nalso; j++) {
			fprintf(out, "    %s %s (%.1f%%): ", j ? "   " : "also:", f->also[j].rule_id,
				100 * f->also[j].share);
			prof_fputs_term(out, f->also[j].title);
			fputc('\n', out);
		}
		fputs("    change: ", out);
		prof_fputs_term(out, f->change);
		fputs("\n\n", out);
	}
	for (int i = 0, j; i < r->nskips; i = j) {
		fputs("not run: ", out);
		for (j = i; j < diag_report__skip_group_end(r, i); j++) {
			fputs(j > i ? ", " : "", out);
			prof_fputs_term(out, r->skips[j].rule_id);
		}
		fputs(": ", out);
		prof_fputs_term(out, r->skips[i].reason);
		fputc('\n', out);
	}
	return ferror(out) ? PROF_E_IO : 0;
}

/* A job's ranks, each with its own window. */
static void print_json_ranks(const struct diag_report *r, FILE *out)
{
	fputs(",\"ranks\":[", out);
	for (int i = 0; i < r->nranks; i++) {
		const struct sum_window *w = &r->ranks[i].window;

		fprintf(out, "%s{\"rank\":%d,\"process\":", i ? "," : "", r->ranks[i].rank);
		prof_fputs_json(out, r->ranks[i].label);
		fputs(",\"window\":{\"source\":", out);
		prof_fputs_json(out, w->source);
		fprintf(out, ",\"iterations\":%d,\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64
			",\"host_end_ns\":%" PRId64 ",\"gpu_busy_ns\":%" PRId64 "}}",
			w->iterations, w->start_ns, w->end_ns, w->host_end_ns, r->ranks[i].gpu_busy_ns);
	}
	fputc(']', out);
}

/* The ranks the rules of one process ran on, where not every rank. */
static void print_json_diagnosed(const struct diag_report *r, FILE *out)
{
	char why[160];
	int n = 0;

	fputs(",\"diagnosed_ranks\":[", out);
	for (int i = 0; i < r->nranks; i++) {
		if (!r->ranks[i].diagnosed)
			continue;
		diag_job__why_words(r->ranks[i].diagnosed, why, sizeof why);
		fprintf(out, "%s{\"rank\":%d,\"why\":", n++ ? "," : "", r->ranks[i].rank);
		prof_fputs_json(out, why);
		fputc('}', out);
	}
	fputc(']', out);
}

/* The ranks a job's finding is on. */
static void print_json_finding_ranks(const struct diag_finding *f, FILE *out)
{
	fputs(",\"ranks\":[", out);
	for (int i = 0; i < f->nranks; i++)
		fprintf(out, "%s{\"rank\":%d,\"share\":%.6f,\"time_ns\":%" PRId64 "}", i ? "," : "",
			f->ranks[i].rank, f->ranks[i].share, f->ranks[i].time_ns);
	fprintf(out, "],\"every_rank\":%s,\"per_rank\":%s,\"share_rank\":", f->every_rank ? "true" : "false",
		f->per_rank ? "true" : "false");
	if (f->share_rank >= 0)
		fprintf(out, "%d", f->share_rank);
	else
		fputs("null", out);
}

int diag_report__print_json(const struct diag_report *r, FILE *out)
{
	const struct sum_window *w = &r->window;

	fputs("{\"file\":", out);
	prof_fputs_json(out, r->path);
	if (r->chosen) {
		fputs(",\"chosen_ranks\":[", out);
		for (int i = 0; i < r->nchosen; i++)
			fprintf(out, "%s%d", i ? "," : "", r->chosen[i]);
		fputc(']', out);
	}
	if (r->has_job_time) {
		fputs(",\"time_base\":", out);
		prof_fputs_json(out, r->job_time.base);
		fputs(",\"alignment_error\":", out);
		prof_fputs_json(out, r->job_time.error);
	}
	fprintf(out, ",\"window\":{\"source\":");
	prof_fputs_json(out, w->source);
	fprintf(out, ",\"iterations\":%d,\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64
		",\"host_end_ns\":%" PRId64 ",\"capture_start_ns\":%" PRId64 ",\"capture_end_ns\":%" PRId64
		",\"zero_ns\":%" PRId64 ",\"gpu_busy_ns\":%" PRId64 "}",
		w->iterations, w->start_ns, w->end_ns, w->host_end_ns, w->capture_start_ns, w->capture_end_ns,
		w->zero_ns, r->gpu_busy_ns);
	if (r->nranks > 0)
		print_json_ranks(r, out);
	if (r->ndiagnosed < r->nranks)
		print_json_diagnosed(r, out);
	print_verdict_json(&r->verdict, out);
	print_program_json(&r->program, out);
	fputs(",\"context_failure\":", out);
	prof_fputs_json(out, r->failure[0] ? r->failure : NULL);
	fputs(",\"context_failure_next\":", out);
	prof_fputs_json(out, r->failure_next[0] ? r->failure_next : NULL);
	fputs(",\"untimed_work\":", out);
	prof_fputs_json(out, r->untimed[0] ? r->untimed : NULL);
	fprintf(out, ",\"rows_left_out\":%" PRId64, r->rows_left_out);
	fprintf(out, ",\"has_metrics\":%s,\"kernel_replay\":%s,\"pytorch\":%s,\"findings\":[",
		r->has_metrics ? "true" : "false", r->replayed ? "true" : "false", r->pytorch ? "true" : "false");
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		fputs(i ? ",{\"rule\":" : "{\"rule\":", out);
		prof_fputs_json(out, f->rule_id);
		fputs(",\"title\":", out);
		prof_fputs_json(out, f->title);
		fputs(",\"severity\":", out);
		prof_fputs_json(out, diag_severity__name(f->severity));
		fprintf(out, ",\"share\":%.6f,\"time_ns\":%" PRId64 ",\"evidence\":", f->share, f->time_ns);
		prof_fputs_json(out, f->evidence);
		fputs(",\"change\":", out);
		prof_fputs_json(out, f->change);
		if (f->gain_step_ns > 0 && r->verdict.step_ns > 0) {
			fprintf(out, ",\"gain\":{\"step_ns_after\":%" PRId64 ",\"speedup\":%.4f,\"basis\":",
				f->gain_step_ns, (double)r->verdict.step_ns / (double)f->gain_step_ns);
			prof_fputs_json(out, f->gain_basis);
			fputc('}', out);
		} else {
			fputs(",\"gain\":null", out);
		}
		fputs(",\"also\":[", out);
		for (int j = 0; j < f->nalso; j++) {
			fputs(j ? ",{\"rule\":" : "{\"rule\":", out);
			prof_fputs_json(out, f->also[j].rule_id);
			fputs(",\"title\":", out);
			prof_fputs_json(out, f->also[j].title);
			fprintf(out, ",\"share\":%.6f,\"evidence\":", f->also[j].share);
			prof_fputs_json(out, f->also[j].evidence);
			fputc('}', out);
		}
		fputs("],\"top\":[", out);
		for (int j = 0; j < f->ntop; j++) {
			fputs(j ? ",{\"name\":" : "{\"name\":", out);
			prof_fputs_json(out, f->top[j].name);
			fprintf(out, ",\"count\":%" PRId64 ",\"time_ns\":%" PRId64, f->top[j].count,
				f->top[j].time_ns);
			if (f->top[j].bytes >= 0)
				fprintf(out, ",\"bytes\":%" PRId64, f->top[j].bytes);
			fputc('}', out);
		}
		fputc(']', out);
		if (r->nranks > 0)
			print_json_finding_ranks(f, out);
		fputc('}', out);
	}
	fputs("],\"not_run\":[", out);
	for (int i = 0; i < r->nskips; i++) {
		fputs(i ? ",{\"rule\":" : "{\"rule\":", out);
		prof_fputs_json(out, r->skips[i].rule_id);
		fputs(",\"reason\":", out);
		prof_fputs_json(out, r->skips[i].reason);
		fputc('}', out);
	}
	fputs("]}\n", out);
	return ferror(out) ? PROF_E_IO : 0;
}

int diag_report__rows(const struct diag_report *r, struct rpt_sink *sink)
{
	/* a job's rows say which ranks each finding is on */
	static const struct rpt_column cols[] = {
		{ "Severity", RPT_TEXT, 0 },  { "Rule", RPT_TEXT, 0 },     { "Title", RPT_TEXT, 0 },
		{ "Share (%)", RPT_PERCENT, 1 }, { "Time (ns)", RPT_INT, 0 }, { "Evidence", RPT_TEXT, 0 },
		{ "Top", RPT_TEXT, 0 },       { "Change", RPT_TEXT, 0 },  { "Ranks", RPT_TEXT, 0 },
	};
	int ncols = r->nranks > 0 ? 9 : 8;
	int rc = sink->begin(sink, "diagnose", "Findings", cols, ncols);

	for (int i = 0; !rc && i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];
		char ranks[256];
		struct rpt_cell cells[9] = {
			{ .s = diag_severity__name(f->severity) },
			{ .s = f->rule_id },
			{ .s = f->title },
			{ .d = 100 * f->share },
			{ .i = f->time_ns },
			{ .s = f->evidence },
			{ .s = f->ntop ? f->top[0].name : "", .is_null = f->ntop == 0 },
			{ .s = f->change },
			{ .s = ranks },
		};

		diag_finding__rank_list(f, ranks, sizeof ranks);
		rc = sink->row(sink, cells);
	}
	if (!rc)
		rc = sink->end(sink);
	return rc;
}
