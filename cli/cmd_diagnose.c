/* cmd_diagnose.c - `perfkit diagnose`: the findings of a capture (or of an
 * nsys SQLite export): what is slow, why, how much it touches, what to change. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli.h"
#include "cli_input.h"
#include "cli_reader.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "sink/sink.h"
#include "summary/summary.h"

static const char *const usage[] = {
	"perfkit diagnose [--format=text|json|csv] [--set KEY=VALUE,...] [--thresholds FILE.json] [--save] "
	"[--full-names] [--rank=N[,M]] [--window=K] FILE... | DIR",
	"perfkit diagnose --list-settings",
	NULL,
};

/* Defaults as they are written: a whole number in full (a size in bytes,
 * 1048576, not %g's 1.04858e+06), a fraction as %g has it. */
static void list_settings(void)
{
	for (int i = 0; i < diag_nsetting_defs; i++) {
		double v = diag_setting_defs[i].value;
		char value[64];

		if (v == (double)(long long)v && fabs(v) < 1e15)
			snprintf(value, sizeof value, "%lld", (long long)v);
		else
			snprintf(value, sizeof value, "%g", v);
		printf("%-36s %-10s %s\n", diag_setting_defs[i].key, value, diag_setting_defs[i].doc);
	}
}

/* --set takes a comma-separated list, since options are not repeated. */
static int apply_sets(struct diag_settings *s, const char *list)
{
	struct prof_error err = { 0 };
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	if (!copy) {
		cli_error("out of memory");
		return CLI_EXIT_USAGE;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (diag_settings__parse(s, tok, &err)) {
			cli_error("%s", err.msg);
			rc = CLI_EXIT_USAGE;
			break;
		}
	}
	free(copy);
	return rc;
}

/* The report in the format asked for; CLI_EXIT_OK or, when it cannot be
 * written, CLI_EXIT_USAGE. */
static int print_report(const struct diag_report *report, int format, bool full_names)
{
	if (format == CLI_FORMAT_JSON) {
		diag_report__print_json(report, stdout);
	} else if (format == CLI_FORMAT_CSV) {
		struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_CSV, stdout);

		if (!sink) {
			cli_error("out of memory");
			return CLI_EXIT_USAGE;
		}
		diag_report__rows(report, sink);
		rpt_sink__delete(sink);
	} else {
		diag_report__print_text(report, full_names, stdout);
	}
	if (fflush(stdout)) {
		cli_error("cannot write the output");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int cmd_diagnose(int argc, char **argv)
{
	const char *format_opt = "text", *sets = NULL, *thresholds = NULL;
	bool list = false, save = false, full_names = false;
	struct cli_reader r = { 0 };
	static const char *const formats[] = { "text", "json", "csv" };
	const struct cli_option opts[] = {
		CLI_FORMAT_OPTION(&format_opt, formats, "text, json or csv"),
		CLI_STRING(0, "set", &sets, "KEY=VALUE,...", "override thresholds (see --list-settings)"),
		CLI_STRING(0, "thresholds", &thresholds, "FILE", "a JSON object of threshold overrides"),
		CLI_FLAG(0, "list-settings", &list, "list every threshold with its default"),
		CLI_FLAG(0, "save", &save, "also store the findings in the capture (" PROF_T_FINDINGS ")"),
		CLI_FLAG(0, "full-names", &full_names, "text: kernel names in full, not in their short form"),
		CLI_RANK_OPTION(&r.ranks),
		CLI_WINDOW_OPTION(&r.window),
		CLI_READER_FORCE_OPTION(&r.force),
		CLI_END(),
	};
	struct diag_settings settings = { 0 };
	struct diag_report *report = NULL;
	struct prof_error err = { 0 };
	int n, format, status = CLI_EXIT_USAGE;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	if (list) {
		list_settings();
		return CLI_EXIT_OK;
	}
	if (n < 1) {
		cli_error("diagnose needs a capture file, or the captures of a job");
		cli_usage__print(usage, opts, true);
		return CLI_EXIT_USAGE;
	}
	format = cli_format__parse(format_opt, formats, 3);
	if (format < 0)
		return CLI_EXIT_USAGE;
	if (diag_settings__init(&settings)) {
		cli_error("out of memory");
		return CLI_EXIT_USAGE;
	}
	if (thresholds && diag_settings__load_json(&settings, thresholds, &err)) {
		cli_reader__fail(&err);
		goto out;
	}
	if (sets && apply_sets(&settings, sets))
		goto out;
	/* A job of many captures by map and reduce, without merging them:
	 * shared by every MPI process under mpirun, printed by rank 0. --rank
	 * and --window narrow the merged capture's rows, --save writes into
	 * one capture: those read it merged. */
	if (!r.ranks && !r.window && !save) {
		int job = cli_input__diagnose_job(argv, n, r.force, &settings, &report);

		if (job >= 0) {
			status = job ? job : report ? print_report(report, format, full_names) : CLI_EXIT_OK;
			goto out;
		}
	}
	/* one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0()) {
		status = CLI_EXIT_OK;
		goto out;
	}
	if (save)
		r.one_capture_only = "--save stores findings in one capture; merge the job first "
				     "(perfkit merge -o JOB.sqlite ...)";
	/* the whole file checked on a connection and a thread of its own
	 * while the rules read it (a pass over every page: 1.2 s of 14 at 1M
	 * kernels); nothing is printed before cli_reader__check_read, and a
	 * failure of the rules is told as the damage the check found, if it
	 * found any */
	r.check = CLI_CHECK_APART;
	if (cli_reader__open(&r, argv, n))
		goto out;
	/* every rule read the whole file, as it was opened */
	if (diag__run(r.store, &settings, &report, &err)) {
		cli_reader__fail_read(&r, &err);
		goto out;
	}
	if (cli_reader__check_read(&r))
		goto out;
	report->has_job_time = sum_job_time__load(r.store, &report->job_time);
	if (save && diag_report__save(report, r.input.path, &err)) {
		cli_reader__fail(&err);
		goto out;
	}
	status = print_report(report, format, full_names);
out:
	diag_report__delete(report);
	cli_reader__close(&r);
	diag_settings__exit(&settings);
	return status;
}
