/* cmd_diagnose.c - `perfkit diagnose`: the findings of a capture (or of an
 * nsys SQLite export): what is slow, why, how much it touches, what to change. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli.h"
#include "cli_job.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "sink/sink.h"
#include "summary/summary.h"

static const char *const usage[] = {
	"perfkit diagnose [--format=text|json|csv] [--set KEY=VALUE,...] [--thresholds FILE.json] [--save] "
	"[--full-names] [--rank=N[,M]] FILE... | DIR",
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

int cmd_diagnose(int argc, char **argv)
{
	const char *format = "text", *sets = NULL, *thresholds = NULL, *ranks = NULL;
	bool list = false, save = false, full_names = false, force = false;
	const struct cli_option opts[] = {
		CLI_STRING('f', "format", &format, "FMT", "text, json or csv"),
		CLI_STRING(0, "set", &sets, "KEY=VALUE,...", "override thresholds (see --list-settings)"),
		CLI_STRING(0, "thresholds", &thresholds, "FILE", "a JSON object of threshold overrides"),
		CLI_FLAG(0, "list-settings", &list, "list every threshold with its default"),
		CLI_FLAG(0, "save", &save, "also store the findings in the capture (" PROF_T_FINDINGS ")"),
		CLI_FLAG(0, "full-names", &full_names, "text: kernel names in full, not in their short form"),
		CLI_STRING(0, "rank", &ranks, "N[,M]", "only these ranks (processes with CUDA work, or as "
			   "the launcher numbered them; see --report=rank_sum)"),
		CLI_JOB_FORCE_OPTION(&force),
		CLI_END(),
	};
	struct diag_settings settings = { 0 };
	struct prof_store *store = NULL;
	struct cli_job job = { 0 };
	struct diag_report *report = NULL;
	struct prof_error err = { 0 };
	int n, status = CLI_EXIT_USAGE;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	if (list) {
		list_settings();
		return CLI_EXIT_OK;
	}
	/* one process's work: under mpirun, rank 0's */
	if (cli_job__not_rank0())
		return CLI_EXIT_OK;
	if (n < 1) {
		cli_error("diagnose needs a capture file, or the captures of a job");
		cli_usage__print(usage, opts, true);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv")) {
		static const char *const formats[] = { "text", "json", "csv" };
		return cli_unknown("format", format, formats, 3);
	}
	if (diag_settings__init(&settings)) {
		cli_error("out of memory");
		return CLI_EXIT_USAGE;
	}
	if (thresholds && diag_settings__load_json(&settings, thresholds, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (sets && apply_sets(&settings, sets))
		goto out;
	if (cli_job__make(&job, argv, n, force))
		goto out;
	if (save && cli_job__is_merged(&job)) {
		cli_error("--save stores findings in one capture; merge the job first "
			  "(perfkit merge -o JOB.sqlite ...)");
		goto out;
	}
	if (cli_job__open(&job, &store))
		goto out;
	if (ranks && summary__select_ranks(store, ranks, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	/* every rule read the whole file, as it was opened */
	if (diag__run(store, &settings, &report, &err) || prof_store__check_read(store, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	report->has_job_time = sum_job_time__load(store, &report->job_time);
	if (save && diag_report__save(report, job.path, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (!strcmp(format, "json")) {
		diag_report__print_json(report, stdout);
	} else if (!strcmp(format, "csv")) {
		struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_CSV, stdout);
		if (!sink) {
			cli_error("out of memory");
			goto out;
		}
		diag_report__rows(report, sink);
		rpt_sink__delete(sink);
	} else {
		diag_report__print_text(report, full_names, stdout);
	}
	status = fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	if (status)
		cli_error("cannot write the output");
out:
	diag_report__delete(report);
	if (store)
		prof_store__close(store);
	cli_job__close(&job);
	diag_settings__exit(&settings);
	return status;
}
