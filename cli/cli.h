/* cli.h - what every subcommand shares: the declarative option table and its
 * parser, usage printing, "did you mean" suggestions, the one function that
 * reports an error to the user, and opening and closing the -o file.
 *
 * A subcommand declares its options and usage lines, then:
 *
 *	static const char *const usage[] = { "perfkit report [<options>] FILE", NULL };
 *	const char *format = "text";
 *	const struct cli_option opts[] = {
 *		CLI_STRING('F', "format", &format, "FMT", "text, csv or json"),
 *		CLI_END(),
 *	};
 *	int n = cli_parse(argc, argv, opts, usage, 0);
 *	if (n < 0)
 *		return cli_parse_status(n);
 *	// argv[0..n-1] are now the positional arguments
 *
 * `-h`/`--help` prints the usage to stdout (cli_parse returns CLI_HELP, exit
 * 0); an unknown option or a missing/malformed value prints one line naming
 * the nearest valid option (cli_parse returns CLI_USAGE, exit 2). */
#ifndef PERFKIT_CLI_H
#define PERFKIT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prof_output;

/* Exit statuses of the perfkit command. */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_GATE_FAILED = 1, /* only a failed gate exits 1 */
	CLI_EXIT_USAGE = 2,       /* bad usage or bad input */
};

enum cli_option_type {
	CLI_OPT_END = 0,
	CLI_OPT_FLAG,   /* bool *: set to true, no value */
	CLI_OPT_STRING, /* const char **: points into argv */
	CLI_OPT_INT,    /* int64_t *: decimal integer */
	CLI_OPT_DOUBLE, /* double *: finite number */
	/* const char **: `--name` alone sets "", `--name=value` sets value; the
	 * next argument is never taken as the value (for `--replay[=SPEED]`,
	 * which may be followed by a file name). Long form only. */
	CLI_OPT_OPTIONAL,
	/* Not shown in help: what short_name meant before it meant what the
	 * table now gives it. When the value after it is one of
	 * value[0..nvalues) (const char *const *), it still sets long_name's
	 * option, with a warning naming the new spelling and help's sentence
	 * of what short_name means now; else short_name is the table's. */
	CLI_OPT_FORMER_SHORT,
};

struct cli_option {
	enum cli_option_type type;
	char short_name;       /* 0: long form only */
	const char *long_name; /* without the leading "--" */
	void *value;
	const char *argh;      /* value placeholder in help, e.g. "FILE" */
	const char *help;
	size_t nvalues;        /* CLI_OPT_FORMER_SHORT: the values it still takes */
};

#define CLI_FLAG(s, l, v, h)        { CLI_OPT_FLAG, (s), (l), (v), NULL, (h), 0 }
#define CLI_STRING(s, l, v, a, h)   { CLI_OPT_STRING, (s), (l), (v), (a), (h), 0 }
#define CLI_INT(s, l, v, a, h)      { CLI_OPT_INT, (s), (l), (v), (a), (h), 0 }
#define CLI_DOUBLE(s, l, v, a, h)   { CLI_OPT_DOUBLE, (s), (l), (v), (a), (h), 0 }
#define CLI_OPTIONAL(l, v, a, h)    { CLI_OPT_OPTIONAL, 0, (l), (v), (a), (h), 0 }
/* names: an array of the values, n of them; now: what s means today */
#define CLI_FORMER_SHORT(s, l, names, n, now)                                                \
	{ CLI_OPT_FORMER_SHORT, (s), (l), (void *)(names), NULL, (now), (n) }
#define CLI_END()                   { CLI_OPT_END, 0, NULL, NULL, NULL, NULL, 0 }

enum cli_parse_flags {
	/* Stop at the first positional argument: everything from it on is
	 * positional (for `perfkit run ./app --app-option`). */
	CLI_STOP_AT_NON_OPTION = 1 << 0,
};

/* cli_parse results below zero. */
enum cli_parse_result {
	CLI_HELP = -1,  /* usage was printed on request */
	CLI_USAGE = -2, /* an error line was printed */
};

/* Parse argv[1..argc-1] (argv[0] is the subcommand name) against opts.
 * Options may come before or after positional arguments; `--` ends option
 * parsing. Long options take `--name=value` or `--name value`, short ones
 * `-o value` or `-ovalue`. On success the positional arguments are moved to
 * argv[0..n-1], argv[n] is set to NULL, and n is returned. */
int cli_parse(int argc, char **argv, const struct cli_option *opts,
	      const char *const *usage, unsigned flags);
/* The exit status for a negative cli_parse result (0 for CLI_HELP). */
int cli_parse_status(int parse_result);

/* Print the usage lines and the option table (stdout for help, stderr after
 * an error). */
void cli_usage__print(const char *const *usage, const struct cli_option *opts, bool to_stderr);

/* What a help request (--help, to stdout) prints: the text above, a man page
 * in troff (the build makes perfkit-CMD.1 so) or the option names one a line
 * (for the shell's completion; "--name=" where the option takes a value), so
 * that the man pages and the completion come from the tables --help prints. */
enum cli_usage_style {
	CLI_USAGE_TEXT = 0,
	CLI_USAGE_MAN,
	CLI_USAGE_NAMES,
};
/* command: "perfkit run"; summary: its line in commands.def. */
void cli_usage__set_style(enum cli_usage_style style, const char *command, const char *summary);
/* Write s for troff: backslashes, hyphens and a leading '.' or '\'' escaped. */
void cli_troff__puts(FILE *f, const char *s);

/* The one way perfkit reports an error: "perfkit: <message>" on stderr,
 * sanitised for the terminal. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "perfkit: warning: <message>" on stderr. */
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The output of a subcommand's -o: the file at path (written as
 * prof/output.h says: refused when it is a link, a device or another
 * non-regular file, or exists and force is not set; written to a temporary
 * file beside it until cli_output__close), or stdout when path is NULL or
 * "-". */
struct cli_output {
	FILE *f;                  /* write here */
	const char *path;         /* NULL: stdout */
	struct prof_output *file; /* NULL: stdout */
};

/* 0, or -1 after the error is printed (o->f is stdout then, so
 * cli_output__close can always follow). force: the command's --force. */
int cli_output__open(struct cli_output *o, const char *path, bool force);
/* For an output that is binary (what names it, e.g. "--format=perfetto"):
 * 0, or CLI_EXIT_USAGE after one line when it would go to stdout and
 * stdout is a terminal (bytes that garble the screen and help no one);
 * a pipe or a file takes it. Before anything is written. */
int cli_output__refuse_terminal(const char *path, const char *what);
/* With status CLI_EXIT_OK put the file in place (for stdout: flush it) and
 * return status, unless the data did not reach the file (a full disk
 * shows only here) or another file took its name: that is reported and
 * CLI_EXIT_USAGE returned. With any other status the file is abandoned,
 * whatever was at the path left as it was, and status returned. */
int cli_output__close(struct cli_output *o, int status);

/* Optimal string alignment distance (Levenshtein plus adjacent swaps). */
size_t cli_edit_distance(const char *a, const char *b);
/* The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo. A unique prefix match counts as close. */
const char *cli_nearest(const char *word, const char *const *candidates, size_t n);

/* Report "unknown <what> '<word>'" with the nearest candidate, if any, and
 * return CLI_EXIT_USAGE. */
int cli_unknown(const char *what, const char *word, const char *const *candidates, size_t n);

#endif
