/* cmd_report.c - `perfkit report`: the summary reports of a capture (or of an
 * nsys SQLite export) as text, CSV or JSON; without --report, the overview. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prof/store.h"
#include "summary.h"
#include "table.h"

#define MAX_REPORTS 32

static const char *const usage[] = {
	"perfkit report [--report=NAME,...] [--format=text|csv|json] [-o FILE] FILE",
	"perfkit report --list",
	NULL,
};

static const char *const formats[] = { "text", "csv", "json" };

static void list_reports(void)
{
	size_t n;
	const char *const *names = summary__names(&n);

	for (size_t i = 0; i < n; i++)
		printf("%-24s %s\n", names[i], summary__title(names[i]));
}

/* Split "a,b,c" in place into names, checking each against the known reports. */
static int split_reports(char *list, const char **out, int *nout)
{
	size_t nnames;
	const char *const *names = summary__names(&nnames);

	*nout = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!summary__title(tok))
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

int cmd_report(int argc, char **argv)
{
	const char *report_opt = NULL, *format_opt = "text", *output = NULL;
	bool list = false;
	const struct cli_option opts[] = {
		CLI_STRING('r', "report", &report_opt, "NAME,...",
			   "reports to print (default: the overview); see --list"),
		CLI_STRING('f', "format", &format_opt, "FMT", "text, csv or json"),
		CLI_STRING('o', "output", &output, "FILE", "write to FILE instead of stdout"),
		CLI_FLAG(0, "list", &list, "list the report names"),
		CLI_END(),
	};
	const char *reports[MAX_REPORTS];
	char *report_list = NULL;
	int nreports = 1, format, n, status = CLI_EXIT_USAGE;
	struct prof_store *store = NULL;
	struct rpt_sink *sink = NULL;
	struct prof_error err = { 0 };
	FILE *out = stdout;
	int64_t dropped;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	if (list) {
		list_reports();
		return CLI_EXIT_OK;
	}
	if (n != 1) {
		cli_error(n == 0 ? "report needs a capture file; see 'perfkit report --help'"
				 : "report takes one capture file; see 'perfkit report --help'");
		return CLI_EXIT_USAGE;
	}
	format = rpt_format__parse(format_opt);
	if (format < 0)
		return cli_unknown("format", format_opt, formats, 3);
	reports[0] = "overview";
	if (report_opt) {
		report_list = strdup(report_opt);
		if (!report_list) {
			cli_error("out of memory");
			return CLI_EXIT_USAGE;
		}
		if (split_reports(report_list, reports, &nreports) != 0)
			goto out;
	}
	if (prof_store__open(argv[0], &store, &err) < 0) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (output && strcmp(output, "-") != 0) {
		out = fopen(output, "w");
		if (!out) {
			cli_error("cannot write '%s': %s", output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	sink = rpt_sink__new((enum rpt_format)format, out);
	if (!sink) {
		cli_error("out of memory");
		goto out;
	}
	for (int i = 0; i < nreports; i++) {
		if (summary__run(reports[i], store, sink, &err) < 0) {
			cli_error("%s", err.msg);
			goto out;
		}
	}
	status = CLI_EXIT_OK;
	dropped = prof_store__counter(store, "dropped_records");
	if (dropped > 0)
		cli_warning("%" PRId64 " activity records were dropped during capture; "
			    "totals and counts are lower than what ran", dropped);
out:
	rpt_sink__delete(sink);
	if (out != stdout) {
		if (fclose(out) != 0 && status == CLI_EXIT_OK) {
			cli_error("cannot write '%s': %s", output, strerror(errno));
			status = CLI_EXIT_USAGE;
		}
	} else if (fflush(stdout) != 0 && status == CLI_EXIT_OK) {
		cli_error("cannot write the output: %s", strerror(errno));
		status = CLI_EXIT_USAGE;
	}
	if (store)
		prof_store__close(store);
	free(report_list);
	return status;
}
