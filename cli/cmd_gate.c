/* cmd_gate.c - `perfkit gate --baseline B FILE...`: the CI regression gate.
 * Exit status 0 when every key is within its budget, 1 when one regressed,
 * 2 for bad usage or input (a missing, malformed or mismatched baseline). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_reader.h"
#include "compare/compare.h"
#include "prof/escape.h"
#include "prof/output.h"
#include "prof/units.h"
#include "sink/sink.h"

static const char *const usage[] = {
	"perfkit gate --baseline=BASELINE.json [--max-regression=5%] [--max-launch-ratio=2]",
	"             [--program=any] [--ranks=common] [--full-names] [--junit=FILE [--force]] [--window=K]",
	"             CAPTURE...",
	"  (each CAPTURE a capture, or a directory of a job's captures)",
	NULL,
};

static const char *const formats[] = { "text", "json" };

/* The JUnit file, as every output is written (prof/output.h): complete or
 * not at all, never through a link, an existing one only with --force. */
static int write_junit(const struct gate_result *r, const char *path, bool force)
{
	struct prof_output *out = NULL;
	struct prof_error err = { 0 };
	int rc;

	rc = prof_output__open(path, PROF_OUTPUT_FORCE_IS_LONG | (force ? PROF_OUTPUT_REPLACE : 0),
			       NULL, &out, &err);
	if (!rc && gate__write_junit(r, prof_output__stream(out)) < 0)
		rc = prof_error__set(&err, PROF_E_IO, "cannot write %s: %s", path, strerror(errno));
	if (!rc)
		rc = prof_output__commit(out, &err);
	prof_output__delete(out);
	if (rc)
		cli_error("%s", err.msg);
	return rc;
}

static int print_result(const struct gate_result *r, int format)
{
	struct rpt_sink *sink = rpt_sink__new((enum rpt_format)format, stdout);
	int rc;

	if (!sink)
		return PROF_E_NOMEM;
	/* In text the table stays narrow; the failures' messages follow it. */
	rc = gate__report(r, sink, format == RPT_FORMAT_JSON);
	rpt_sink__delete(sink);
	if (rc < 0 || format != RPT_FORMAT_TEXT)
		return rc;
	fputc('\n', stdout);
	for (size_t i = 0; i < r->ncases; i++) {
		if (r->cases[i].verdict != GATE_FAIL)
			continue;
		fputs("FAIL ", stdout);
		prof_fputs_term(stdout, r->cases[i].message);
		fputc('\n', stdout);
	}
	if (r->nfailed)
		printf("gate FAILED: %zu of %zu keys regressed\n", r->nfailed, r->ncases);
	else
		printf("gate passed: %zu keys within budget\n", r->ncases);
	return 0;
}

int cmd_gate(int argc, char **argv)
{
	const char *baseline_path = NULL, *junit = NULL, *format_opt = "text";
	const char *max_regression = NULL, *min_time = NULL, *min_share = NULL;
	const char *program = NULL, *min_launch_share = NULL, *ranks = NULL, *window = NULL;
	struct gate_options o;
	bool force = false;
	const struct cli_option opts[] = {
		CLI_STRING('b', "baseline", &baseline_path, "FILE", "baseline from 'perfkit baseline save'"),
		CLI_STRING(0, "max-regression", &max_regression, "PCT",
			   "allowed slowdown of a key without its own budget (default 5%)"),
		CLI_STRING(0, "min-time", &min_time, "DUR",
			   "time changes smaller than this never fail (default 100us)"),
		CLI_STRING(0, "min-share", &min_share, "PCT",
			   "nor those under this share of GPU/wall time (default 1%)"),
		CLI_DOUBLE(0, "noise", &o.noise_mads, "N",
			   "noise allowance in robust standard deviations (default 3)"),
		CLI_DOUBLE(0, "max-launch-ratio", &o.max_launch_ratio, "X",
			   "a kernel or range this many times slower per launch fails, under the"
			   " floor too (default 2; 0: off)"),
		CLI_STRING(0, "min-launch-share", &min_launch_share, "PCT",
			   "unless its time is under this share of the wall time (default 0.5%)"),
		CLI_STRING(0, "program", &program, "any",
			   "compare captures of another program than the baseline's"),
		CLI_STRING(0, "ranks", &ranks, "common",
			   "compare a job of another size than the baseline's job on the ranks both have"),
		CLI_FLAG(0, "full-names", &o.full_names, "kernel names in full in text and JUnit"),
		CLI_STRING(0, "junit", &junit, "FILE", "also write JUnit XML, one testcase per key"),
		CLI_FLAG('f', "force", &force, "replace the --junit FILE if it exists"
			 CLI_READ_AS_ONE_JOB_HELP),
		CLI_FORMAT_OPTION(&format_opt, formats, "text or json"),
		CLI_WINDOW_OPTION(&window),
		CLI_END(),
	};
	struct baseline b = { 0 };
	struct gate_result r = { 0 };
	struct diff_profile *p = NULL;
	struct prof_error err = { 0 };
	int n, loaded = 0, format, status = CLI_EXIT_USAGE;
	bool ran = false;

	gate_options__init(&o);
	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	/* one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0())
		return CLI_EXIT_OK;
	format = cli_format__parse(format_opt, formats, 2);
	if (format < 0)
		return CLI_EXIT_USAGE;
	if (!baseline_path) {
		cli_error("gate needs --baseline=FILE (made with 'perfkit baseline save')");
		return CLI_EXIT_USAGE;
	}
	if (n == 0) {
		cli_error("gate needs at least one capture to check");
		return CLI_EXIT_USAGE;
	}
	if (max_regression && baseline__parse_percent(max_regression, &o.max_regression_pct) < 0) {
		cli_error("--max-regression expects a percentage such as 5%%, not '%s'", max_regression);
		return CLI_EXIT_USAGE;
	}
	if (min_share && baseline__parse_percent(min_share, &o.min_share_pct) < 0) {
		cli_error("--min-share expects a percentage such as 1%%, not '%s'", min_share);
		return CLI_EXIT_USAGE;
	}
	if (min_time && prof_units__parse_duration(min_time, &o.min_time_ns) < 0) {
		cli_error("--min-time expects a duration such as 100us or 2ms, not '%s'", min_time);
		return CLI_EXIT_USAGE;
	}
	if (min_launch_share && baseline__parse_percent(min_launch_share, &o.min_launch_share_pct) < 0) {
		cli_error("--min-launch-share expects a percentage such as 0.5%%, not '%s'", min_launch_share);
		return CLI_EXIT_USAGE;
	}
	if (program && strcmp(program, "any") != 0) {
		cli_error("--program takes 'any', not '%s'", program);
		return CLI_EXIT_USAGE;
	}
	o.any_program = program != NULL;
	if (ranks && strcmp(ranks, "common") != 0) {
		cli_error("--ranks takes 'common', not '%s'", ranks);
		return CLI_EXIT_USAGE;
	}
	o.common_ranks = ranks != NULL;
	if (!(o.max_launch_ratio >= 0)) {
		cli_error("--max-launch-ratio must not be negative");
		return CLI_EXIT_USAGE;
	}
	if (o.noise_mads < 0) {
		cli_error("--noise must not be negative");
		return CLI_EXIT_USAGE;
	}
	/* a refused --junit before the captures are read */
	if (junit && prof_output__check(junit, PROF_OUTPUT_FORCE_IS_LONG |
					(force ? PROF_OUTPUT_REPLACE : 0), NULL, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (baseline__load(&b, baseline_path, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	p = calloc((size_t)n, sizeof *p);
	if (!p) {
		cli_error("out of memory");
		goto out;
	}
	for (; loaded < n; loaded++) {
		/* each capture's loop marked as the baseline's (the first capture's
		 * when the baseline has none) */
		const struct sum_window *like = baseline__loop(&b);

		if (!like && loaded)
			like = &p[0].loop;
		if (cli_reader__profile(argv[loaded], like, force, window, &p[loaded]))
			goto out;
	}
	if (gate__run(&r, &b, p, (size_t)n, &o, &err) < 0) {
		cli_error("%s", err.msg);
		goto out;
	}
	ran = true;
	if (junit && write_junit(&r, junit, force) < 0)
		goto out;
	if (print_result(&r, format) < 0 || fflush(stdout) != 0) {
		cli_error("cannot write the output");
		goto out;
	}
	status = r.nfailed ? CLI_EXIT_GATE_FAILED : CLI_EXIT_OK;
out:
	if (ran)
		gate__exit(&r);
	for (int i = 0; i < loaded; i++)
		diff_profile__exit(&p[i]);
	free(p);
	baseline__exit(&b);
	return status;
}
