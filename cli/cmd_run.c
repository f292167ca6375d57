/* cmd_run.c - `perfkit run`: run a program with the collector injected and
 * fold what every one of its processes recorded into one capture. The steps
 * (shared with `perfkit top -- PROGRAM`) are in run_session.c. */
#include <stdio.h>

#include "cli.h"
#include "cli_capture.h"

static const char *const run_usage[] = {
	"perfkit run [<options>] [--] PROGRAM [ARGS...]",
	NULL,
};

int cmd_run(int argc, char **argv)
{
	struct run_options opt = RUN_OPTIONS_INIT;
	const struct cli_option opts[] = {
		RUN_CLI_CAPTURE_OPTIONS(&opt),
		CLI_STRING(0, "metrics", &opt.metrics, "roofline|memory",
			   "hardware metrics per kernel launch (kernel replay: kernels serialised, slower)"),
		CLI_INT(0, "metrics-sample", &opt.metrics_sample, "N",
			"with --metrics, profile every Nth launch of each kernel (default 1)"),
		CLI_END(),
	};
	static const struct run_messages msg = RUN_CLI_MESSAGES;
	struct run_session s;
	int n, rc;

	n = cli_parse(argc, argv, opts, run_usage, CLI_STOP_AT_NON_OPTION);
	if (n < 0)
		return cli_parse_status(n);
	if (n == 0) {
		cli_error("run needs a program: perfkit run [<options>] -- PROGRAM [ARGS...]");
		return CLI_EXIT_USAGE;
	}
	run_session__init(&s, &opt, "run", &msg);
	rc = run_session__prepare(&s, argv);
	if (!rc)
		rc = run_session__start(&s);
	if (rc)
		return rc;
	run_session__wait(&s, true);
	if (run_session__finish(&s) < 0)
		return s.exit_status; /* the program's, whatever became of the capture */
	run_session__report(&s);
	return s.exit_status;
}
