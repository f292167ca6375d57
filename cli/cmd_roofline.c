/* cmd_roofline.c - `perfkit roofline`: per kernel, arithmetic intensity
 * against DRAM and L2, achieved FLOP/s and bandwidth, the fraction of the
 * nearer roof and a class; optionally gnuplot data files for a log-log plot.
 * A capture without hardware metrics is valid input, as a capture without
 * kernels is for `perfkit report`: the command says how to collect them
 * (text on stdout; with CSV or JSON an empty table there and the advice on
 * stderr) and exits 0. A file it cannot read exits 2 with one line. */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli.h"
#include "cli_reader.h"
#include "prof/output.h"
#include "prof/store.h"
#include "sink/sink.h"
#include "summary/summary.h"

static const char *const usage[] = {
	"perfkit roofline [--format=text|csv|json] [--plot DIR [--force]] [--rank=N[,M]] [--window=K] FILE... | DIR",
	NULL,
};

/* A capture without hardware metrics: how to collect them. */
static int no_metrics(int format)
{
	struct rpt_sink *sink;

	if (format == RPT_FORMAT_TEXT) {
		printf("This capture has no hardware metrics, so there is no roofline to draw.\n"
		       "Collect them with:  perfkit run --metrics=roofline [--metrics-sample=N] -o FILE -- ./app\n"
		       "(kernel replay serialises kernels and slows the run; --metrics-sample=N profiles every Nth launch\n"
		       "of each kernel; --metrics=memory counts DRAM and L2 bytes only, in one pass) and measure\n"
		       "this GPU's ceilings once with `perfkit peaks`.\n");
		return fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	cli_warning("this capture has no hardware metrics, so the roofline is empty; collect them "
		    "with 'perfkit run --metrics=roofline -o FILE -- ./app'");
	sink = rpt_sink__new((enum rpt_format)format, stdout);
	if (!sink || roof__rows(NULL, 0, sink) != 0) {
		rpt_sink__delete(sink);
		cli_error("cannot write the output");
		return CLI_EXIT_USAGE;
	}
	rpt_sink__delete(sink);
	return fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* The ceilings the rows are judged against: a ceiling that was neither
 * measured nor known is left out, never shown as 0; the tensor cores' only
 * for the precisions a kernel's roof is. */
static void print_ceilings(const struct roof_peaks *p, const struct roof_kernel *k, int n)
{
	bool used[ROOF_T__COUNT] = { false }, any = false;

	printf("ceilings: DRAM %.0f GB/s", p->dram_bytes_per_s / 1e9);
	if (p->l2_bytes_per_s > 0)
		printf(", L2 %.0f GB/s", p->l2_bytes_per_s / 1e9);
	printf(", FP32 %.1f TFLOP/s, FP16 %.1f TFLOP/s", p->fp32_flops_per_s / 1e12, p->fp16_flops_per_s / 1e12);
	for (int i = 0; i < n; i++)
		if (k[i].tensor_precision >= 0)
			used[k[i].tensor_precision] = true;
	for (int t = 0; t < ROOF_T__COUNT; t++) {
		if (!used[t])
			continue;
		printf("%s %s ", any ? "," : "; tensor cores", roof_tensor__name((enum roof_tensor)t));
		if (p->tensor_flops_per_s[t] > 0)
			printf("%.1f TFLOP/s%s", p->tensor_flops_per_s[t] / 1e12,
			       p->tensor_measured[t] ? "" : " (nominal)");
		else
			printf("not known (run `perfkit peaks`)");
		any = true;
	}
	printf(" (%s)\n\n", p->source);
}

/* The plot's files refused before the capture is read (they are written
 * last). */
static int check_plot_files(const char *dir, unsigned flags)
{
	struct prof_error err = { 0 };
	char path[4096];

	for (int i = 0; i < ROOF_PLOT_FILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, roof_plot_files[i]);
		if (prof_output__check(path, flags, NULL, &err) < 0) {
			cli_error("%s", err.msg);
			return -1;
		}
	}
	return 0;
}

int cmd_roofline(int argc, char **argv)
{
	const char *format_opt = "text", *plot_dir = NULL;
	struct cli_reader r = { 0 };
	static const char *const formats[] = { "text", "csv", "json" };
	const struct cli_option opts[] = {
		CLI_FORMAT_OPTION(&format_opt, formats, "text, csv or json"),
		CLI_STRING(0, "plot", &plot_dir, "DIR", "write gnuplot data files and script into DIR"),
		CLI_FLAG('f', "force", &r.force, "replace the --plot files in DIR if they exist"
			 CLI_READ_AS_ONE_JOB_HELP),
		CLI_RANK_OPTION(&r.ranks),
		CLI_WINDOW_OPTION(&r.window),
		CLI_END(),
	};
	struct roof_kernel *k = NULL;
	struct roof_peaks peaks;
	struct prof_error err = { 0 };
	struct rpt_sink *sink = NULL;
	int n, nk = 0, format, status = CLI_EXIT_USAGE;
	unsigned plot_flags;
	int64_t measured;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	/* one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0())
		return CLI_EXIT_OK;
	if (n < 1) {
		cli_error("roofline needs a capture: a file, or the captures of a job");
		cli_usage__print(usage, opts, true);
		return CLI_EXIT_USAGE;
	}
	format = cli_format__parse(format_opt, formats, 3);
	if (format < 0)
		return CLI_EXIT_USAGE;
	plot_flags = PROF_OUTPUT_FORCE_IS_LONG | (r.force ? PROF_OUTPUT_REPLACE : 0);
	if (plot_dir && check_plot_files(plot_dir, plot_flags) < 0)
		return CLI_EXIT_USAGE;
	if (cli_reader__open(&r, argv, n))
		goto out;
	if (roof__count_measured(r.store, &measured, &err) < 0) {
		cli_reader__fail(&err);
		goto out;
	}
	if (measured == 0) {
		if (!cli_reader__check_read(&r))
			status = no_metrics(format);
		goto out;
	}
	if (roof_peaks__load(r.store, &peaks, &err) ||
	    roof__load(r.store, &peaks, 0, 0, &k, &nk, &err)) {
		cli_reader__fail(&err);
		goto out;
	}
	if (cli_reader__check_read(&r))
		goto out;
	sink = rpt_sink__new((enum rpt_format)format, stdout);
	if (!sink) {
		cli_error("out of memory");
		goto out;
	}
	if (format == RPT_FORMAT_TEXT)
		print_ceilings(&peaks, k, nk);
	if (roof__rows(k, nk, sink)) {
		cli_error("cannot write the output");
		goto out;
	}
	if (format == RPT_FORMAT_TEXT && roof__tensor_unknown(k, nk) > 0)
		printf("\n%d kernel(s) ran tensor-pipe instructions, but this capture has no tensor-core FLOP "
		       "counts (its collector\npredates them, or the GPU has no such counters): their GFLOP/s, "
		       "intensity and class count\nCUDA-core FLOPs alone. Capture again with --metrics=roofline "
		       "to count them.\n", roof__tensor_unknown(k, nk));
	if (format == RPT_FORMAT_TEXT && nk > 0 && !roof__any_flops(k, nk))
		printf("\nNo FLOP counts (captured with --metrics=memory): the classes follow from the DRAM "
		       "bandwidth alone,\nand --plot has no points; for intensities and FLOP/s capture with "
		       "--metrics=roofline.\n");
	rpt_sink__delete(sink);
	sink = NULL;
	if (plot_dir) {
		if (roof__write_plot(plot_dir, k, nk, &peaks, plot_flags, &err)) {
			cli_reader__fail(&err);
			goto out;
		}
		fprintf(stderr, "perfkit: plot data in %s (gnuplot roofline.gp there draws roofline.svg)\n", plot_dir);
	}
	status = fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
out:
	rpt_sink__delete(sink);
	roof__free(k, nk);
	cli_reader__close(&r);
	return status;
}
