/* cmd_diff.c - `perfkit diff BASE NEW`: what changed between two captures
 * (perfkit captures or nsys exports), kernel by kernel, copy kind by copy
 * kind and NVTX range by range, with a one-line verdict first. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_reader.h"
#include "compare/compare.h"
#include "sink/sink.h"

static const char *const usage[] = {
	"perfkit diff [--format=text|csv|json|html] [--full-names] [--window=K] [-o FILE] BASE NEW",
	"  (BASE and NEW: a capture each, or a directory of a job's captures)",
	NULL,
};

static const char *const formats[] = { "text", "csv", "json", "html" };

int cmd_diff(int argc, char **argv)
{
	const char *format_opt = "text", *output = NULL, *window = NULL;
	bool full_names = false, force = false;
	const struct cli_option opts[] = {
		CLI_FORMAT_OPTION(&format_opt, formats, "text, csv, json or html"),
		CLI_STRING('o', "output", &output, "FILE", "write to FILE instead of stdout"),
		CLI_FLAG('f', "force", &force, "replace FILE (-o) if it exists" CLI_READ_AS_ONE_JOB_HELP),
		CLI_FLAG(0, "full-names", &full_names, "text: kernel names in full, not in their short form"),
		CLI_WINDOW_OPTION(&window),
		CLI_END(),
	};
	struct diff_profile base = { 0 }, new = { 0 };
	struct diff_result result = { 0 };
	struct rpt_sink *sink = NULL;
	bool computed = false;
	int n, format, status = CLI_EXIT_USAGE, rc;
	struct cli_output out = { .f = stdout };

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	/* one process's work: under mpirun, rank 0's */
	if (cli_reader__not_rank0())
		return CLI_EXIT_OK;
	if (n != 2) {
		cli_error("diff takes two captures, BASE and NEW; see 'perfkit diff --help'");
		return CLI_EXIT_USAGE;
	}
	format = cli_format__parse(format_opt, formats, 4);
	if (format < 0)
		return CLI_EXIT_USAGE;
	/* NEW's loop marked as BASE's: the two count the same iterations */
	if (cli_reader__profile(argv[0], NULL, force, window, &base) ||
	    cli_reader__profile(argv[1], &base.loop, force, window, &new))
		goto out;
	if (diff__compute(&result, &base, &new) < 0) {
		cli_error("out of memory");
		goto out;
	}
	computed = true;
	if (cli_output__open(&out, output, force) < 0)
		goto out;
	if (format == CLI_FORMAT_HTML) {
		rc = diff__write_html(&result, out.f);
	} else {
		sink = rpt_sink__new((enum rpt_format)format, out.f);
		if (sink)
			sink->full_names = full_names;
		rc = sink ? diff__report(&result, sink) : PROF_E_NOMEM;
	}
	if (rc < 0) {
		cli_error("cannot write the diff (error %d)", rc);
		goto out;
	}
	status = CLI_EXIT_OK;
out:
	rpt_sink__delete(sink);
	status = cli_output__close(&out, status);
	if (computed)
		diff__exit(&result);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
	return status;
}
