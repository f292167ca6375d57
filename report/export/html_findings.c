/* html_findings.c - the first section of the HTML report: the verdict
 * (the step's budget as one bar, the bound it names) and the findings,
 * each with its share, evidence, offenders and change, as `perfkit
 * diagnose` says them, from the page's one diagnosis. */
#include "html_report.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "prof/escape.h"
#include "sink/symbol.h"
#include "prof/error.h"
#include "prof/saturate.h"

/* A colour per part of the budget: the GPU's own work in blues, the
 * host's causes of idle time in warm colours, the rest in greys. */
static const char *const part_colour[VERDICT_NPARTS] = {
	[PART_COMPUTE] = "#4c78a8",       [PART_COMMUNICATION] = "#72b7b2",
	[PART_COPIES] = "#54a24b",        [PART_HOST_WORK] = "#f58518",
	[PART_LAUNCH] = "#e45756",        [PART_SYNC] = "#b279a2",
	[PART_BLOCKING_COPY] = "#9d755d", [PART_PAGE_MIGRATION] = "#ff9da6",
	[PART_ALLOC] = "#eeca3b",         [PART_GPU_WAIT] = "#bab0ac",
	[PART_QUEUED_GAP] = "#d8d2cf",    [PART_UNACCOUNTED] = "#79706e",
};

/* The budget of one mean step as a stacked bar, largest part first, with
 * its legend under it. */
static void write_budget(FILE *out, const struct diag_verdict *v)
{
	int order[VERDICT_NPARTS], n = diag_verdict__parts_by_size(v, order);
	double x = 0;
	char b[32];

	if (n == 0 || v->step_ns <= 0)
		return;
	fputs("<svg class=\"budget\" viewBox=\"0 0 1000 28\" preserveAspectRatio=\"none\" "
	      "role=\"img\" aria-label=\"budget of a step\">\n", out);
	for (int i = 0; i < n; i++) {
		double w = 1000.0 * (double)v->part_ns[order[i]] / (double)v->step_ns;

		fprintf(out, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"28\" fill=\"%s\"><title>", x, w,
			part_colour[order[i]]);
		prof_fputs_html(out, verdict_part__title(order[i]));
		fprintf(out, ": %s</title></rect>\n", diag__ns(b, sizeof b, v->part_ns[order[i]]));
		x += w;
	}
	fputs("</svg>\n<ul class=\"keys\">", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "<li><span class=\"swatch\" style=\"background:%s\"></span>", part_colour[order[i]]);
		prof_fputs_html(out, verdict_part__title(order[i]));
		fprintf(out, " <span class=\"num\">%s (%.1f%%)</span></li>", diag__ns(b, sizeof b, v->part_ns[order[i]]),
			100.0 * (double)v->part_ns[order[i]] / (double)v->step_ns);
	}
	fputs("</ul>\n", out);
}

static void write_verdict(FILE *out, const struct diag_report *r)
{
	const struct diag_verdict *v = &r->verdict;
	char b1[32], b2[32];

	fputs("<p class=\"window\">Analysis window: ", out);
	prof_fputs_html(out, r->window.source);
	if (r->window.iterations > 0)
		fprintf(out, " (%d steps, %s)", r->window.iterations,
			diag__ns(b1, sizeof b1, prof_span_saturated(r->window.start_ns, r->window.end_ns)));
	fputs(r->replayed ? ". The capture was made under kernel replay (--metrics): shares are of the "
			    "GPU's busy time, and the rules about host time, gaps and launch costs did not run"
	      : r->has_metrics ? "" : ". The capture has no hardware metrics, so only the trace-based "
				    "rules ran", out);
	fputs(". The same, in full: <code>perfkit diagnose FILE</code>.</p>\n", out);
	if (!v->valid)
		return;
	fputs("<p class=\"verdict\"><strong>Verdict:</strong> ", out);
	prof_fputs_html(out, v->summary);
	fputs("</p>\n", out);
	write_budget(out, v);
	if (v->all_changes_ns > 0 && v->all_changes_ns < v->step_ns)
		fprintf(out, "<p>The changes below together: a step %s &rarr; %s (%.2f&times;, estimated).</p>\n",
			diag__ns(b1, sizeof b1, v->step_ns), diag__ns(b2, sizeof b2, v->all_changes_ns),
			(double)v->step_ns / (double)v->all_changes_ns);
}

/* A kernel or call name in its short form, the full name on hover. */
static void write_name(FILE *out, const char *name)
{
	char small[512];

	rpt_symbol__shorten(name, RPT_SYMBOL_SHORT, small, sizeof small);
	if (strcmp(small, name) == 0) {
		prof_fputs_html(out, name);
		return;
	}
	fputs("<span class=\"symbol\" title=\"", out);
	prof_fputs_html(out, name);
	fputs("\">", out);
	prof_fputs_html(out, small);
	fputs("</span>", out);
}

static void write_finding(FILE *out, const struct diag_report *r, const struct diag_finding *f, int i)
{
	char b1[32], b2[32], list[256];

	fprintf(out, "<article class=\"finding sev-%s\">\n<h3><span class=\"sev\">%s</span> %d. ",
		diag_severity__name(f->severity), diag_severity__name(f->severity), i + 1);
	prof_fputs_html(out, f->title);
	fputs(" <code>", out);
	prof_fputs_html(out, f->rule_id);
	fprintf(out, "</code></h3>\n<p class=\"share\">%.1f%% of the %s (%s)", 100 * f->share,
		r->replayed ? "GPU's busy time" : "window", diag__ns(b1, sizeof b1, f->time_ns));
	if (r->nranks > 0 && f->nranks > 0) {
		diag_finding__rank_list(f, list, sizeof list);
		fputs("; on ", out);
		prof_fputs_html(out, list);
	}
	if (f->gain_step_ns > 0 && r->verdict.step_ns > f->gain_step_ns)
		fprintf(out, "; a step %s &rarr; %s (%.2f&times;) after the change",
			diag__ns(b1, sizeof b1, r->verdict.step_ns), diag__ns(b2, sizeof b2, f->gain_step_ns),
			(double)r->verdict.step_ns / (double)f->gain_step_ns);
	fputs(".</p>\n<p><strong>Evidence:</strong> ", out);
	prof_fputs_html(out, f->evidence);
	fputs("</p>\n", out);
	if (f->ntop > 0) {
		fputs("<ul class=\"offenders\">\n", out);
		for (int j = 0; j < f->ntop; j++) {
			fprintf(out, "<li><span class=\"num\">%" PRId64 " &times; %s", f->top[j].count,
				diag__ns(b1, sizeof b1, f->top[j].time_ns));
			if (f->top[j].bytes >= 0)
				fprintf(out, ", %s", diag__bytes(b2, sizeof b2, (double)f->top[j].bytes));
			fputs("</span> ", out);
			write_name(out, f->top[j].name);
			fputs("</li>\n", out);
		}
		fputs("</ul>\n", out);
	}
	for (int j = 0; j < f->nalso; j++) {
		fputs(j ? "<br>" : "<p class=\"also\">Also: ", out);
		prof_fputs_html(out, f->also[j].title);
		fputs(" (<code>", out);
		prof_fputs_html(out, f->also[j].rule_id);
		fprintf(out, "</code>, %.1f%%)", 100 * f->also[j].share);
		if (j == f->nalso - 1)
			fputs("</p>\n", out);
	}
	fputs("<p class=\"change\"><strong>Change:</strong> ", out);
	prof_fputs_html(out, f->change);
	fputs("</p>\n</article>\n", out);
}

int html_findings__render(struct html_page *p, struct prof_error *err)
{
	const char *why = NULL;
	const struct diag_report *r = html_page__diagnosis(p, &why);
	FILE *out = html_page__out(p);

	(void)err;
	if (!r) {
		char msg[PROF_ERROR_MSG_MAX + 64];

		snprintf(msg, sizeof msg, "The diagnosis could not run: %s", why);
		html_page__note(p, msg);
		return 0;
	}
	write_verdict(out, r);
	if (r->nfindings == 0)
		html_page__note(p, "No findings.");
	for (int i = 0; i < r->nfindings; i++)
		write_finding(out, r, &r->findings[i], i);
	if (r->nskips > 0) {
		fputs("<details><summary>Rules not run</summary>\n<ul>\n", out);
		for (int i = 0, j; i < r->nskips; i = j) {
			fputs("<li>", out);
			for (j = i; j < diag_report__skip_group_end(r, i); j++) {
				fputs(j > i ? ", <code>" : "<code>", out);
				prof_fputs_html(out, r->skips[j].rule_id);
				fputs("</code>", out);
			}
			fputs(": ", out);
			prof_fputs_html(out, r->skips[i].reason);
			fputs("</li>\n", out);
		}
		fputs("</ul>\n</details>\n", out);
	}
	return ferror(out) ? prof_error__set(err, PROF_E_IO, "cannot write the findings") : 0;
}
