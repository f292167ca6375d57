/* fuzz_cli_parse.c - the command line itself: cli_parse over an argv made
 * of the input's NUL-separated words, against a table with one option of
 * every type (flag, string, integer, number, optional value) in both
 * spellings, as every subcommand declares them. */
#include <stdbool.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const usage[] = { "perfkit fuzz [<options>] FILE...", NULL };
	const char *str = NULL, *optional = NULL;
	bool flag = false;
	int64_t count = 0;
	double number = 0;
	static const char *const former[] = { "json", "text" };
	const struct cli_option opts[] = {
		CLI_FLAG('v', "verbose", &flag, "a flag"),
		CLI_STRING('o', "output", &str, "FILE", "a string"),
		CLI_INT('n', "count", &count, "N", "an integer"),
		CLI_DOUBLE(0, "noise", &number, "X", "a number"),
		CLI_OPTIONAL("replay", &optional, "SPEED", "an optional value"),
		/* -v json: --output=json, -v's former meaning (as -f FMT is --format's) */
		CLI_FORMER_SHORT('v', "output", former, 2, "-v means --verbose"),
		CLI_END(),
	};
	char *words = fuzz_string(data, size);
	char *argv[MAX_ARGS + 2];
	int argc = 0, n;

	if (!words)
		return 0;
	argv[argc++] = "fuzz";
	for (size_t at = 0; at < size && argc <= MAX_ARGS; at += strlen(words + at) + 1)
		argv[argc++] = words + at;
	argv[argc] = NULL;
	n = cli_parse(argc, argv, opts, usage, size % 2 ? CLI_STOP_AT_NON_OPTION : 0);
	if (n >= 0) {
		FUZZ_CHECK(n < argc && argv[n] == NULL);
		for (int i = 0; i < n; i++)
			FUZZ_CHECK(argv[i] != NULL);
	} else {
		FUZZ_CHECK(n == CLI_HELP || n == CLI_USAGE);
	}
	free(words);
	return 0;
}
