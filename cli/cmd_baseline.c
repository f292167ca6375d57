/* cmd_baseline.c - `perfkit baseline save FILE... -o baseline.json`: the
 * median and spread of every key over repeated captures of one program, for
 * `perfkit gate` to compare later runs with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_reader.h"
#include "compare/compare.h"
#include "prof/escape.h"
#include "prof/output.h"

static const char *const usage[] = {
	"perfkit baseline save -o BASELINE.json [-f] [--window=K] CAPTURE...",
	"  (each CAPTURE a capture, or a directory of a job's captures)",
	NULL,
};

static const char *const actions[] = { "save" };

static int save(int n, char **files, const char *output, bool force, const char *window,
		unsigned output_flags)
{
	struct diff_profile *p = calloc((size_t)n, sizeof *p);
	struct baseline b = { 0 };
	struct prof_error err = { 0 };
	int status = CLI_EXIT_USAGE, loaded = 0;

	if (!p) {
		cli_error("out of memory");
		return CLI_EXIT_USAGE;
	}
	for (; loaded < n; loaded++) {
		/* each capture's loop marked as the first's */
		if (cli_reader__profile(files[loaded], loaded ? &p[0].loop : NULL, force, window, &p[loaded]))
			goto out;
	}
	if (baseline__build(&b, p, (size_t)n, &err) < 0 || baseline__save(&b, output, output_flags, &err) < 0) {
		cli_error("%s", err.msg);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		char text[160];

		if (!p[i].rows_left_out)
			continue;
		diff_left_out__text(text, sizeof text, p[i].rows_left_out);
		cli_warning("%s: %s", files[i], text);
	}
	fputs("wrote ", stdout);
	prof_fputs_term(stdout, output);
	printf(": %zu keys over %d capture%s of '", b.nkeys, n, n == 1 ? "" : "s");
	prof_fputs_term(stdout, b.program);
	fputs("' on '", stdout);
	prof_fputs_term(stdout, b.gpu);
	fputs("'\n", stdout);
	status = CLI_EXIT_OK;
out:
	baseline__exit(&b);
	for (int i = 0; i < loaded; i++)
		diff_profile__exit(&p[i]);
	free(p);
	return status;
}

int cmd_baseline(int argc, char **argv)
{
	const char *output = NULL, *window = NULL;
	bool force = false;
	const struct cli_option opts[] = {
		CLI_STRING('o', "output", &output, "FILE", "where to write the baseline (JSON)"),
		CLI_FLAG('f', "force", &force, "replace FILE if it exists" CLI_READ_AS_ONE_JOB_HELP),
		CLI_WINDOW_OPTION(&window),
		CLI_END(),
	};
	struct prof_error err = { 0 };
	unsigned output_flags;
	int n = cli_parse(argc, argv, opts, usage, 0);

	if (n < 0)
		return cli_parse_status(n);
	/* one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0())
		return CLI_EXIT_OK;
	if (n == 0) {
		cli_error("baseline needs an action: 'perfkit baseline save -o FILE CAPTURE...'");
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[0], "save") != 0)
		return cli_unknown("baseline action", argv[0], actions, 1);
	if (!output) {
		cli_error("baseline save needs -o FILE for the baseline");
		return CLI_EXIT_USAGE;
	}
	if (n < 2) {
		cli_error("baseline save needs at least one capture");
		return CLI_EXIT_USAGE;
	}
	/* a refused -o before the captures are read */
	output_flags = force ? PROF_OUTPUT_REPLACE : 0;
	if (prof_output__check(output, output_flags, NULL, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	return save(n - 1, argv + 1, output, force, window, output_flags);
}
