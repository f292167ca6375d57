/* html_sections.c - the optional sections of the HTML report: Verdict and
 * findings (html_findings.c), One step (html_step.c), Ranks
 * (html_ranks.c), GPU idle time and critical path,
 * Sampled GPU Metrics (captures with them: html_gpu_metrics.c) and Roofline
 * (captures with hardware metrics). Each renders the rows its
 * command prints, through the page's HTML sink. A section that cannot be
 * computed for a capture says why in a note instead of failing the whole
 * page. */
#include "html_gpu_metrics.h"

#include "analysis/kernel_metrics/roofline.h"
#include "analysis/timeline/timeline_reports.h"
#include "analysis/timeline/timeline_units.h"
#include "prof/escape.h"
#include "summary/summary.h"

#include "prof/tables.h"

static void note_failure(struct html_page *p, const char *what, const struct prof_error *err)
{
	char msg[PROF_ERROR_MSG_MAX + 64];

	snprintf(msg, sizeof msg, "%s: %s", what, err->msg);
	html_page__note(p, msg);
}

static bool has_metrics(struct prof_store *s)
{
	return prof_store__count(s, PROF_T_KERNEL_METRICS) > 0;
}

static int render_roofline(struct html_page *p, struct prof_error *err)
{
	struct prof_store *s = html_page__store(p);
	struct roof_kernel *k = NULL;
	struct prof_error why = { 0 };
	struct roof_peaks peaks;
	char dir[4096];
	int n = 0, rc;

	if (roof_peaks__load(s, &peaks, &why) < 0 || roof__load(s, &peaks, 0, 0, &k, &n, &why) < 0) {
		note_failure(p, "The roofline could not be computed", &why);
		return 0;
	}
	fputs("<p>Ceilings: ", html_page__out(p));
	prof_fputs_html(html_page__out(p), peaks.source);
	fputs(".</p>\n", html_page__out(p));
	rc = roof__rows(k, n, html_page__tables(p));
	if (rc < 0) {
		roof__free(k, n);
		return prof_error__set(err, rc, "cannot write the roofline");
	}
	if (html_page__mkdir(p, "roofline", dir, sizeof dir, &why) < 0 ||
	    html_page__expect(p, dir, roof_plot_files, ROOF_PLOT_FILES, &why) < 0 ||
	    roof__write_plot(dir, k, n, &peaks, 0, &why) < 0)
		note_failure(p, "The roofline plot could not be prepared", &why);
	else
		html_page__plot(p, dir, "roofline.gp", "roofline.svg",
				"Roofline: each kernel's achieved GFLOP/s against its DRAM arithmetic "
				"intensity, under the DRAM and L2 roofs (point size: total time).");
	roof__free(k, n);
	return 0;
}

/* Why the GPU is idle and what sets a step's length: the rows of
 * `perfkit report --report=gpu_idle_sum,critical_path`, from the analyses
 * the page's diagnosis made. */
static int render_gpu_idle(struct html_page *p, struct prof_error *err)
{
	struct prof_error why = { 0 };
	struct timeline_units *memo = html_page__timeline(p);

	(void)err;
	if (timeline_units__analyse(html_page__store(p), memo, TIMELINE_IDLE | TIMELINE_PATH, &why) < 0 ||
	    timeline__gpu_idle_sum(html_page__store(p), memo, html_page__tables(p), &why) < 0 ||
	    timeline__critical_path(html_page__store(p), memo, html_page__tables(p), &why) < 0)
		note_failure(p, "The idle-time analysis could not run", &why);
	return 0;
}

const struct html_section html_report__default_sections[] = {
	{ "findings", "Verdict and findings", NULL, html_findings__render, false, false, false },
	{ "step", "One step", NULL, html_step__render, false, true, false },
	{ "ranks", "Ranks", html_ranks__applies, html_ranks__render, false, false, false },
	{ "gpu-idle", "GPU Idle Time and Critical Path", NULL, render_gpu_idle, false, true, false },
	{ "gpu-metrics", "Sampled GPU Metrics", html_gpu_metrics__applies, html_gpu_metrics__section,
	  true, false, false },
	/* drawn after the plots section, as the page numbers its plots in
	 * the order they are drawn */
	{ "kernel-roofline", "Roofline", has_metrics, render_roofline, false, false, false },
};
const size_t html_report__ndefault_sections =
	sizeof html_report__default_sections / sizeof html_report__default_sections[0];
