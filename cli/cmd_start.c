/* cmd_start.c - `perfkit start FILE|PID`: open a capture window on a
 * running capture, and the body `perfkit stop` shares
 * (capture/run_control.c does the work). */
#include "cli.h"
#include "cli_capture.h"
#include "run_control.h"

int cmd_start_or_stop(int argc, char **argv, bool open)
{
	const char *const usage[] = {
		open ? "perfkit start FILE|PID" : "perfkit stop FILE|PID",
		NULL,
	};
	const struct cli_option opts[] = { CLI_END() };
	static const struct run_messages msg = RUN_CLI_MESSAGES;
	int n = cli_parse(argc, argv, opts, usage, 0);

	if (n < 0)
		return cli_parse_status(n);
	if (n != 1) {
		cli_error("%s needs one running capture: perfkit %s FILE|PID", open ? "start" : "stop",
			  open ? "start" : "stop");
		return CLI_EXIT_USAGE;
	}
	return run_control(&msg, argv[0], open) < 0 ? CLI_EXIT_USAGE : 0;
}

int cmd_start(int argc, char **argv)
{
	return cmd_start_or_stop(argc, argv, true);
}
