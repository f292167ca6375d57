/* cmd_recover.c - `perfkit recover FILE`: finish the output of a `perfkit
 * run` that was killed before it merged what the program recorded (the
 * steps are capture/run_recover.c's). */
#include "cli.h"
#include "cli_capture.h"
#include "run_recover.h"

static const char *const recover_usage[] = {
	"perfkit recover FILE",
	NULL,
};

int cmd_recover(int argc, char **argv)
{
	const struct cli_option opts[] = { CLI_END() };
	static const struct run_messages msg = RUN_CLI_MESSAGES;
	int n = cli_parse(argc, argv, opts, recover_usage, 0);

	if (n < 0)
		return cli_parse_status(n);
	if (n != 1) {
		cli_error("recover needs one capture: perfkit recover FILE");
		return CLI_EXIT_USAGE;
	}
	return run_recover(&msg, argv[0]) < 0 ? CLI_EXIT_USAGE : 0;
}
