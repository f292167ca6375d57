/* diagnose_print.c - the renderers of a diagnosis: text for people, JSON for
 * tools, and flat rows (one per finding) for CSV and the HTML report. Every
 * string from the capture goes through the sink's escaping function. */
#include "diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "sink/symbol.h"
#include "sink/table.h"
#include "summary/query.h"

static void print_window_text(const struct diag_report *r, FILE *out)
{
	const struct sum_window *w = &r->window;
	char b1[32], b2[32];

	fputs("perfkit diagnose: ", out);
	prof_fputs_term(out, r->path);
	fputc('\n', out);
	fputs("window: ", out);
	prof_fputs_term(out, w->source);
	fprintf(out, " (%s of %s captured)%s\n",
		diag__ns(b1, sizeof b1, sum_span_saturated(w->start_ns, w->end_ns)),
		diag__ns(b2, sizeof b2, sum_span_saturated(w->capture_start_ns, w->capture_end_ns)),
		r->replayed ? "; shares are of the GPU's busy time in it (kernel replay)"
		: w->iterations ? "; shares are of this loop" : "");
	fprintf(out, "metrics: %s; peaks: %s%s\n\n", r->has_metrics ? "yes" : "none (trace-only rules)",
		r->has_peaks ? "measured" : "nominal",
		r->pytorch ? "; a PyTorch program: changes say how in PyTorch too" : "");
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

int diag_report__print_text(const struct diag_report *r, bool full_names, FILE *out)
{
	char b1[32], b2[32];

	print_window_text(r, out);
	if (r->nfindings == 0)
		fputs("No findings.\n", out);
	for (int i = 0; i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];

		fprintf(out, "%2d. [%s] %s: %s\n", i + 1, diag_severity__name(f->severity), f->rule_id, f->title);
		fprintf(out, "    share: %.1f%% of the %s (%s)\n", 100 * f->share,
			r->replayed ? "GPU's busy time" : "window",
			diag__ns(b1, sizeof b1, f->time_ns));
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

int diag_report__print_json(const struct diag_report *r, FILE *out)
{
	const struct sum_window *w = &r->window;

	fputs("{\"file\":", out);
	prof_fputs_json(out, r->path);
	fprintf(out, ",\"window\":{\"source\":");
	prof_fputs_json(out, w->source);
	fprintf(out, ",\"iterations\":%d,\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64
		",\"host_end_ns\":%" PRId64 ",\"capture_start_ns\":%" PRId64 ",\"capture_end_ns\":%" PRId64
		",\"gpu_busy_ns\":%" PRId64 "}",
		w->iterations, w->start_ns, w->end_ns, w->host_end_ns, w->capture_start_ns, w->capture_end_ns,
		r->gpu_busy_ns);
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
		fputs(",\"top\":[", out);
		for (int j = 0; j < f->ntop; j++) {
			fputs(j ? ",{\"name\":" : "{\"name\":", out);
			prof_fputs_json(out, f->top[j].name);
			fprintf(out, ",\"count\":%" PRId64 ",\"time_ns\":%" PRId64, f->top[j].count,
				f->top[j].time_ns);
			if (f->top[j].bytes >= 0)
				fprintf(out, ",\"bytes\":%" PRId64, f->top[j].bytes);
			fputc('}', out);
		}
		fputs("]}", out);
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
	static const struct rpt_column cols[] = {
		{ "Severity", RPT_TEXT, 0 },  { "Rule", RPT_TEXT, 0 },     { "Title", RPT_TEXT, 0 },
		{ "Share (%)", RPT_PERCENT, 1 }, { "Time (ns)", RPT_INT, 0 }, { "Evidence", RPT_TEXT, 0 },
		{ "Top", RPT_TEXT, 0 },       { "Change", RPT_TEXT, 0 },
	};
	int rc = sink->begin(sink, "diagnose", "Findings", cols, (int)(sizeof cols / sizeof cols[0]));

	for (int i = 0; !rc && i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];
		struct rpt_cell cells[8] = {
			{ .s = diag_severity__name(f->severity) },
			{ .s = f->rule_id },
			{ .s = f->title },
			{ .d = 100 * f->share },
			{ .i = f->time_ns },
			{ .s = f->evidence },
			{ .s = f->ntop ? f->top[0].name : "", .is_null = f->ntop == 0 },
			{ .s = f->change },
		};
		rc = sink->row(sink, cells);
	}
	if (!rc)
		rc = sink->end(sink);
	return rc;
}
