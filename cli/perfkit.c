/* perfkit.c - the perfkit command: global options, help and dispatch to the
 * subcommands listed in commands.def. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "prof/store.h"

#define PERFKIT_COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef PERFKIT_COMMAND

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define PERFKIT_COMMAND(name, fn, summary) { #name, fn, summary },
#include "commands.def"
#undef PERFKIT_COMMAND
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char *const global_options[] = { "--help", "--version", "--list-cmds" };

static void print_help(FILE *f)
{
	fputs("usage: perfkit [--version] [--help] <command> [<args>]\n"
	      "       perfkit help <command>\n\n"
	      "Profile CUDA programs and analyse their captures.\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nExit status: 0 success, 1 a gate failed, 2 a usage or input error.\n"
	      "'perfkit help <command>' or 'perfkit <command> --help' shows a command's options.\n",
	      f);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[NCOMMANDS + 1];

	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	return cli_unknown("command", name, names, NCOMMANDS);
}

/* perfkit(1): the commands and where each one's page is. */
static void print_man(FILE *f)
{
	fputs(".TH \"PERFKIT\" \"1\" \"\" \"perfkit " PERFKIT_VERSION "\" \"perfkit manual\"\n"
	      ".SH NAME\nperfkit \\- profile CUDA programs and analyse their captures\n"
	      ".SH SYNOPSIS\n.nf\nperfkit [\\-\\-version] [\\-\\-help] <command> [<args>]\n"
	      "perfkit help <command>\n.fi\n.SH COMMANDS\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fputs(".TP\n\\fBperfkit\\-", f);
		cli_troff__puts(f, commands[i].name);
		fputs("\\fR(1)\n", f);
		cli_troff__puts(f, commands[i].summary);
		fputc('\n', f);
	}
	fputs(".SH \"EXIT STATUS\"\n0 success, 1 a gate found a regression, "
	      "2 a usage or input error.\n.SH \"SEE ALSO\"\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fputs("\\fBperfkit\\-", f);
		cli_troff__puts(f, commands[i].name);
		fputs(i + 1 < NCOMMANDS ? "\\fR(1),\n" : "\\fR(1)\n", f);
	}
}

/* `perfkit help --man [CMD]` and `perfkit help --options CMD`, which the
 * build and the shell's completion ask: CMD's option table as a man page or
 * as bare names. Not in the help: they are for tools, not for people. */
static int help_for_tools(const char *what, int argc, char **argv)
{
	enum cli_usage_style style = strcmp(what, "--man") == 0 ? CLI_USAGE_MAN : CLI_USAGE_NAMES;
	const struct command *cmd;
	char command[64], *args[3];

	if (argc < 2 && style == CLI_USAGE_MAN) {
		print_man(stdout);
		return CLI_EXIT_OK;
	}
	if (argc != 2) {
		cli_error("help %s takes one command name", what);
		return CLI_EXIT_USAGE;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	snprintf(command, sizeof command, "perfkit %s", cmd->name);
	cli_usage__set_style(style, command, cmd->summary);
	args[0] = (char *)cmd->name;
	args[1] = "--help";
	args[2] = NULL;
	return cmd->fn(2, args);
}

/* `perfkit help CMD` is `perfkit CMD --help`: each command owns its usage. */
static int help_command(int argc, char **argv)
{
	const struct command *cmd;
	char *args[3];

	if (argc >= 2 && (strcmp(argv[1], "--man") == 0 || strcmp(argv[1], "--options") == 0))
		return help_for_tools(argv[1], argc - 1, argv + 1);
	if (argc < 2) {
		print_help(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2) {
		cli_error("help takes one command name");
		return CLI_EXIT_USAGE;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	args[0] = (char *)cmd->name;
	args[1] = "--help";
	args[2] = NULL;
	return cmd->fn(2, args);
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	const char *first;

	(void)prof_sqlite__setup_process();
	if (argc < 2) {
		print_help(stderr);
		return CLI_EXIT_USAGE;
	}
	first = argv[1];
	if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0)
		return help_command(1, argv + 1);
	if (strcmp(first, "help") == 0)
		return help_command(argc - 1, argv + 1);
	if (strcmp(first, "--version") == 0) {
		printf("perfkit %s\n", PERFKIT_VERSION);
		return CLI_EXIT_OK;
	}
	if (strcmp(first, "--list-cmds") == 0) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			printf("%s\n", commands[i].name);
		return CLI_EXIT_OK;
	}
	if (first[0] == '-')
		return cli_unknown("option", first, global_options,
				   sizeof global_options / sizeof global_options[0]);
	cmd = find_command(first);
	if (!cmd)
		return unknown_command(first);
	return cmd->fn(argc - 1, argv + 1);
}
