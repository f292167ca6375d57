/* cmd_report.c - `perfkit report`: the summary reports of a capture (or of an
 * nsys SQLite export) as text, CSV or JSON (without --report, the overview);
 * or the whole capture as a Chrome or Perfetto trace, folded stacks or an
 * HTML report. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_reader.h"
#include "export/export.h"
#include "prof/store.h"
#include "prof/units.h"
#include "sink/sink.h"
#include "registry/registry.h"
#include "summary/summary.h"

#define MAX_REPORTS 32

static const char *const usage[] = {
	"perfkit report [--report=NAME,...] [--format=text|csv|json] [--full-names] [--rank=N[,M]] "
	"[--window=K] [-o FILE] FILE... | DIR",
	"perfkit report --report=module_sum|python_sum[,...] [--from=T] [--to=T] [--format=text|csv|json] "
	"FILE... | DIR",
	"perfkit report --format=chrome [--from=T] [--to=T] [--range=NAME] [-o FILE] FILE... | DIR",
	"perfkit report --format=perfetto [--from=T] [--to=T] [--range=NAME] -o FILE.pftrace FILE... | DIR",
	"perfkit report --format=folded [--weight=gpu|api] [--from=T] [--to=T] [--range=NAME] "
	"[-o FILE] FILE... | DIR",
	"perfkit report --format=html [--weight=gpu|api] -o report.html FILE... | DIR",
	"perfkit report --list",
	NULL,
};

/* The formats that print the rows of --report, then the whole-capture
 * exports. */
static const char *const formats[] = { "text", "csv", "json", "chrome", "folded", "html",
				       "perfetto" };
static const char *const weights[] = { "gpu", "api" };

/* What the export options asked for. */
struct export_args {
	const char *from, *to, *range, *weight;
};

static void list_reports(void)
{
	size_t n;
	const char *const *names = registry__names(&n);

	for (size_t i = 0; i < n; i++)
		printf("%-24s %s\n", names[i], registry__title(names[i]));
}

/* Split "a,b,c" in place into names, checking each against the known reports. */
static int split_reports(char *list, const char **out, int *nout)
{
	size_t nnames;
	const char *const *names = registry__names(&nnames);

	*nout = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!registry__title(tok))
			return cli_unknown("report", tok, names, nnames);
		if (*nout == MAX_REPORTS) {
			cli_error("at most %d reports at once", MAX_REPORTS);
			return CLI_EXIT_USAGE;
		}
		out[(*nout)++] = tok;
	}
	if (*nout == 0) {
		cli_error("--report needs at least one report name");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* Whether format exports the whole capture rather than printing the rows
 * of --report through a sink. */
static bool is_export(int format)
{
	return format > CLI_FORMAT_JSON;
}

/* Options that only some formats take are refused elsewhere rather than
 * silently ignored. */
static int check_export_args(int format, const char *format_opt, const char *report_opt,
			     const struct export_args *a)
{
	if (is_export(format) && report_opt) {
		cli_error("--report selects tables for text, csv and json; --format=%s exports "
			  "the whole capture", format_opt);
		return CLI_EXIT_USAGE;
	}
	if (a->weight && format != CLI_FORMAT_FOLDED && format != CLI_FORMAT_HTML) {
		cli_error("--weight applies to --format=folded and --format=html");
		return CLI_EXIT_USAGE;
	}
	/* the rows of module_sum and python_sum take --from and --to too
	 * (check_span_reports, once the names are known) */
	if ((a->range || (!report_opt && (a->from || a->to)) || (format == CLI_FORMAT_HTML &&
	     (a->from || a->to))) && format != CLI_FORMAT_CHROME &&
	    format != CLI_FORMAT_FOLDED && format != CLI_FORMAT_PERFETTO) {
		cli_error("--from, --to and --range apply to --format=chrome, --format=perfetto "
			  "and --format=folded");
		return CLI_EXIT_USAGE;
	}
	if (a->weight && folded_weight__parse(a->weight) < 0)
		return cli_unknown("weight", a->weight, weights, 2);
	return 0;
}

/* --from and --to with rows: every report named reads a span of its own. */
static int check_span_reports(const struct export_args *a, const char *const *reports, int n)
{
	for (int i = 0; (a->from || a->to) && i < n; i++)
		if (!summary__takes_span(reports[i])) {
			cli_error("--from and --to apply to --format=chrome, --format=perfetto, "
				  "--format=folded and the reports module_sum and python_sum, not %s",
				  reports[i]);
			return CLI_EXIT_USAGE;
		}
	return 0;
}

/* A Perfetto trace is binary: it goes to a file (or a pipe), never to a
 * terminal; and a build without protobuf-c says so before any file is made. */
static int check_binary_output(const char *output)
{
	struct prof_error err = { 0 };

	if (perfetto_trace__supported(&err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	return cli_output__refuse_terminal(output, "--format=perfetto");
}

/* T of --from or --to into *ns: 0, or CLI_EXIT_USAGE after the error. */
static int parse_time(const char *text, int64_t *ns)
{
	if (prof_units__parse_duration(text, ns) == 0)
		return 0;
	cli_error("'%s' is not a time (examples: 2500000, 2500us, 2.5ms, 1s)", text);
	return CLI_EXIT_USAGE;
}

static int parse_filter(const struct export_args *a, struct export_filter *f)
{
	memset(f, 0, sizeof *f);
	if ((a->from && parse_time(a->from, &f->from_ns)) || (a->to && parse_time(a->to, &f->to_ns)))
		return CLI_EXIT_USAGE;
	f->has_from = a->from != NULL;
	f->has_to = a->to != NULL;
	f->range_name = a->range;
	return 0;
}

static int run_export(int format, struct prof_store *store, const struct export_args *a,
		      const struct export_filter *filter, FILE *out, struct prof_error *err)
{
	enum folded_weight weight = a->weight ? (enum folded_weight)folded_weight__parse(a->weight)
					      : FOLDED_WEIGHT_GPU;

	switch (format) {
	case CLI_FORMAT_CHROME: {
		struct chrome_options o = { .filter = *filter };

		return chrome_trace__write(store, &o, out, err);
	}
	case CLI_FORMAT_FOLDED: {
		struct folded_options o = { .weight = weight, .filter = *filter };

		return folded__export(store, &o, out, err);
	}
	case CLI_FORMAT_HTML: {
		struct html_options o = { .flame_weight = weight };

		return html_report__write(store, &o, out, err);
	}
	case CLI_FORMAT_PERFETTO: {
		struct perfetto_options o = { .filter = *filter };

		return perfetto_trace__write(store, &o, out, err);
	}
	}
	return prof_error__set(err, PROF_E_USAGE, "no export format");
}

int cmd_report(int argc, char **argv)
{
	const char *report_opt = NULL, *format_opt = "text", *output = NULL;
	struct export_args ea = { 0 };
	struct cli_reader r = { 0 };
	bool list = false, full_names = false;
	const struct cli_option opts[] = {
		CLI_STRING('r', "report", &report_opt, "NAME,...",
			   "reports to print (default: the overview); see --list"),
		CLI_FORMAT_OPTION(&format_opt, formats,
			   "text, csv, json, chrome (JSON trace), perfetto (native Perfetto trace, "
			   "several times smaller), folded (flame graph stacks) or html (one "
			   "self-contained page)"),
		CLI_STRING('o', "output", &output, "FILE", "write to FILE instead of stdout"),
		CLI_FLAG('f', "force", &r.force, "replace FILE (-o) if it exists" CLI_READ_AS_ONE_JOB_HELP),
		CLI_STRING(0, "weight", &ea.weight, "gpu|api",
			   "folded stacks weighed by kernel time (default) or API call time"),
		CLI_STRING(0, "from", &ea.from, "T", "export from T after the capture's start "
			   "(2500000, 2500us, 2.5ms, 1s); module_sum and python_sum: read from T "
			   "rather than the loop"),
		CLI_STRING(0, "to", &ea.to, "T", "export up to T after the capture's start; "
			   "module_sum and python_sum: read up to T"),
		CLI_STRING(0, "range", &ea.range, "NAME", "export only inside NVTX ranges named NAME"),
		CLI_RANK_OPTION(&r.ranks),
		CLI_WINDOW_OPTION(&r.window),
		CLI_FLAG(0, "full-names", &full_names, "text: kernel names in full, not in their short "
			 "form (other formats always carry full names)"),
		CLI_FLAG(0, "list", &list, "list the report names"),
		CLI_END(),
	};
	const char *reports[MAX_REPORTS];
	char *report_list = NULL;
	int nreports = 1, format, n, status = CLI_EXIT_USAGE;
	struct rpt_sink *sink = NULL;
	struct export_filter filter;
	struct prof_error err = { 0 };
	struct cli_output out = { .f = stdout };
	int64_t dropped;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	if (list) {
		list_reports();
		return CLI_EXIT_OK;
	}
	if (n < 1) {
		cli_error("report needs a capture file, or the captures of a job; see "
			  "'perfkit report --help'");
		return CLI_EXIT_USAGE;
	}
	format = cli_format__parse(format_opt, formats, sizeof formats / sizeof formats[0]);
	if (format < 0)
		return CLI_EXIT_USAGE;
	if (check_export_args(format, format_opt, report_opt, &ea) != 0 ||
	    parse_filter(&ea, &filter) != 0)
		return CLI_EXIT_USAGE;
	if (format == CLI_FORMAT_PERFETTO && check_binary_output(output) != 0)
		return CLI_EXIT_USAGE;
	reports[0] = "overview";
	if (report_opt) {
		report_list = strdup(report_opt);
		if (!report_list) {
			cli_error("out of memory");
			return CLI_EXIT_USAGE;
		}
		if (split_reports(report_list, reports, &nreports) != 0 ||
		    check_span_reports(&ea, reports, nreports) != 0)
			goto out;
	}
	/* a job's overview and kernel summary: by map and reduce (--rank reads
	 * the job as one capture) */
	if (!is_export(format) && !r.ranks && !filter.has_from && !filter.has_to &&
	    (status = cli_input__report_job(argv, n, reports, nreports, format, full_names, output,
					    r.force)) >= 0) {
		free(report_list);
		return status;
	}
	/* the rest is one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0()) {
		free(report_list);
		return CLI_EXIT_OK;
	}
	status = CLI_EXIT_USAGE;
	/* a file of -o is put in place only once the read is checked: the
	 * whole file's check may run beside the report. The HTML page's
	 * diagnosis has the second core already (html_apart.c), and a third
	 * thread there cost 0.6 s of wall time at 1M kernels: the page runs
	 * the check itself while it waits for its diagnosis. */
	if (output && strcmp(output, "-") != 0)
		r.check = format == CLI_FORMAT_HTML ? CLI_CHECK_LATER : CLI_CHECK_APART;
	if (cli_reader__open(&r, argv, n) || cli_output__open(&out, output, r.force) < 0)
		goto out;
	if (is_export(format)) {
		if (run_export(format, r.store, &ea, &filter, out.f, &err) < 0) {
			cli_reader__fail_read(&r, &err);
			goto out;
		}
	} else {
		sink = rpt_sink__new((enum rpt_format)format, out.f);
		if (!sink) {
			cli_error("out of memory");
			goto out;
		}
		sink->full_names = full_names;
		if (!filter.has_from && !filter.has_to)
			summary__expect(r.store, reports, nreports);
		for (int i = 0; i < nreports; i++) {
			int rc = filter.has_from || filter.has_to
					 ? summary__run_in_span(reports[i], r.store, filter.has_from,
								filter.from_ns, filter.has_to, filter.to_ns,
								sink, &err)
					 : registry__run(reports[i], r.store, sink, &err);

			if (rc < 0) {
				cli_reader__fail_read(&r, &err);
				goto out;
			}
		}
	}
	/* what was printed came from the whole file, as it was opened */
	if (cli_reader__check_read(&r))
		goto out;
	status = CLI_EXIT_OK;
	dropped = prof_store__counter(r.store, "dropped_records");
	if (dropped > 0)
		cli_warning("%" PRId64 " activity records were dropped during capture; "
			    "totals and counts are lower than what ran", dropped);
out:
	rpt_sink__delete(sink);
	status = cli_output__close(&out, status);
	cli_reader__close(&r);
	free(report_list);
	return status;
}
