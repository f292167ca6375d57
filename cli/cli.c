/* cli.c - option parsing, usage printing, suggestions, error reporting and
 * the -o output file, shared by every subcommand (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof/escape.h"
#include "prof/output.h"

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof msg, fmt, ap);
	fputs(prefix, stderr);
	/* Messages quote file names and arguments: keep control bytes off the terminal. */
	prof_fputs_term(stderr, msg);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("perfkit: ", fmt, ap);
	va_end(ap);
}

void cli_warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("perfkit: warning: ", fmt, ap);
	va_end(ap);
}

int cli_output__open(struct cli_output *o, const char *path, bool force)
{
	struct prof_error err = { 0 };

	memset(o, 0, sizeof *o);
	o->f = stdout;
	if (!path || strcmp(path, "-") == 0)
		return 0;
	o->path = path;
	/* the refusal names --force, the spelling every command shares; an
	 * export of millions of events is written while the next are read */
	if (prof_output__open(path, PROF_OUTPUT_FORCE_IS_LONG | PROF_OUTPUT_WRITE_BEHIND |
					    (force ? PROF_OUTPUT_REPLACE : 0),
			      NULL, &o->file, &err) < 0) {
		cli_error("%s", err.msg);
		return -1;
	}
	o->f = prof_output__stream(o->file);
	return 0;
}

int cli_output__refuse_terminal(const char *path, const char *what)
{
	if ((!path || strcmp(path, "-") == 0) && isatty(STDOUT_FILENO)) {
		cli_error("%s is binary; write it to a file with -o FILE or pipe it", what);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_output__close(struct cli_output *o, int status)
{
	struct prof_error err = { 0 };

	if (o->file) {
		if (status == CLI_EXIT_OK && prof_output__commit(o->file, &err) < 0) {
			cli_error("%s", err.msg);
			status = CLI_EXIT_USAGE;
		}
		/* not committed: the temporary file goes, what was at the path stays */
		prof_output__delete(o->file);
	} else if (fflush(stdout) != 0 && status == CLI_EXIT_OK) {
		cli_error("cannot write the output: %s", strerror(errno));
		status = CLI_EXIT_USAGE;
	}
	memset(o, 0, sizeof *o);
	o->f = stdout;
	return status;
}

size_t cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *buf, *row0, *row1, *row2, d;

	/* Three rolling rows: the swap rule looks two rows back. */
	buf = calloc(3 * (lb + 1), sizeof *buf);
	if (!buf)
		return (size_t)-1;
	row0 = buf;
	row1 = row0 + (lb + 1);
	row2 = row1 + (lb + 1);
	for (size_t j = 0; j <= lb; j++)
		row1[j] = j;
	for (size_t i = 1; i <= la; i++) {
		row2[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = row1[j - 1] + cost;

			if (row1[j] + 1 < best)
				best = row1[j] + 1;
			if (row2[j - 1] + 1 < best)
				best = row2[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    row0[j - 2] + 1 < best)
				best = row0[j - 2] + 1;
			row2[j] = best;
		}
		size_t *t = row0;
		row0 = row1;
		row1 = row2;
		row2 = t;
	}
	d = row1[lb];
	free(buf);
	return d;
}

const char *cli_nearest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL, *prefix = NULL;
	size_t best_d = (size_t)-1, len = strlen(word), nprefix = 0;

	for (size_t i = 0; i < n; i++) {
		size_t d = cli_edit_distance(word, candidates[i]);

		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
		if (len > 0 && strncmp(word, candidates[i], len) == 0) {
			prefix = candidates[i];
			nprefix++;
		}
	}
	if (nprefix == 1)
		return prefix;
	/* Beyond a third of the word's length an edit is a different word, not a typo. */
	if (best && best_d > 0 && best_d <= 1 + len / 3)
		return best;
	return NULL;
}

int cli_unknown(const char *what, const char *word, const char *const *candidates, size_t n)
{
	const char *near = cli_nearest(word, candidates, n);

	if (near)
		cli_error("unknown %s '%s'; did you mean '%s'?", what, word, near);
	else
		cli_error("unknown %s '%s'", what, word);
	return CLI_EXIT_USAGE;
}

static struct {
	enum cli_usage_style style;
	const char *command;
	const char *summary;
} usage_style;

void cli_usage__set_style(enum cli_usage_style style, const char *command, const char *summary)
{
	usage_style.style = style;
	usage_style.command = command;
	usage_style.summary = summary;
}

void cli_troff__puts(FILE *f, const char *s)
{
	/* a control character at a line's start would be read as a request */
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

/* The man page's heading: "perfkit run" is PERFKIT-RUN, named perfkit-run. */
static void man_heading(FILE *f)
{
	char page[64];
	size_t i;

	snprintf(page, sizeof page, "%s", usage_style.command ? usage_style.command : "perfkit");
	for (i = 0; page[i]; i++)
		if (page[i] == ' ')
			page[i] = '-';
	fputs(".TH \"", f);
	for (i = 0; page[i]; i++)
		fputc(page[i] >= 'a' && page[i] <= 'z' ? page[i] - 'a' + 'A' : page[i], f);
	fputs("\" 1 \"\" \"perfkit " PERFKIT_VERSION "\" \"perfkit manual\"\n.SH NAME\n", f);
	cli_troff__puts(f, page);
	fputs(" \\- ", f);
	cli_troff__puts(f, usage_style.summary ? usage_style.summary : "");
	fputc('\n', f);
}

static void man_option(FILE *f, char short_name, const char *long_name, const char *argh,
		       bool optional, const char *help)
{
	fputs(".TP\n", f);
	if (short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", short_name);
	fputs("\\fB\\-\\-", f);
	cli_troff__puts(f, long_name);
	fputs("\\fR", f);
	if (argh) {
		fputs(optional ? "[=\\fI" : "=\\fI", f);
		cli_troff__puts(f, argh);
		fputs(optional ? "\\fR]" : "\\fR", f);
	}
	fputc('\n', f);
	cli_troff__puts(f, help ? help : "");
	fputc('\n', f);
}

static void usage_man(FILE *f, const char *const *usage, const struct cli_option *opts)
{
	man_heading(f);
	fputs(".SH SYNOPSIS\n.nf\n", f);
	for (size_t i = 0; usage && usage[i]; i++) {
		cli_troff__puts(f, usage[i]);
		fputc('\n', f);
	}
	fputs(".fi\n.SH OPTIONS\n", f);
	for (const struct cli_option *o = opts; o && o->type != CLI_OPT_END; o++)
		man_option(f, o->short_name, o->long_name, o->argh, o->type == CLI_OPT_OPTIONAL,
			   o->help);
	man_option(f, 'h', "help", NULL, false, "show this help");
	fputs(".SH \"EXIT STATUS\"\n0 success, 1 a gate found a regression, "
	      "2 a usage or input error.\n.SH \"SEE ALSO\"\n\\fBperfkit\\fR(1)\n", f);
}

static void usage_names(FILE *f, const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o && o->type != CLI_OPT_END; o++) {
		if (o->short_name)
			fprintf(f, "-%c\n", o->short_name);
		/* "--name=": the shell leaves the cursor after '=' for the value */
		fprintf(f, "--%s%s\n", o->long_name,
			o->type == CLI_OPT_FLAG || o->type == CLI_OPT_OPTIONAL ? "" : "=");
	}
	fputs("-h\n--help\n", f);
}

void cli_usage__print(const char *const *usage, const struct cli_option *opts, bool to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	if (!to_stderr && usage_style.style == CLI_USAGE_MAN) {
		usage_man(f, usage, opts);
		return;
	}
	if (!to_stderr && usage_style.style == CLI_USAGE_NAMES) {
		usage_names(f, opts);
		return;
	}

	for (size_t i = 0; usage && usage[i]; i++)
		fprintf(f, "%s%s\n", i == 0 ? "usage: " : "   or: ", usage[i]);
	if (!opts || opts[0].type == CLI_OPT_END)
		return;
	fputc('\n', f);
	for (const struct cli_option *o = opts; o->type != CLI_OPT_END; o++) {
		char left[96];
		bool optional = o->type == CLI_OPT_OPTIONAL;

		if (o->type == CLI_OPT_FORMER_SHORT)
			continue;

		snprintf(left, sizeof left, "%c%c%s--%s%s%s%s%s",
			       o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
			       o->short_name ? ", " : "  ", o->long_name, optional ? "[" : "",
			       o->argh ? "=" : "", o->argh ? o->argh : "", optional ? "]" : "");
		fprintf(f, "    %-28s %s\n", left, o->help ? o->help : "");
	}
	fprintf(f, "    %-28s %s\n", "-h, --help", "show this help");
}

static const struct cli_option *find_long(const struct cli_option *opts, const char *name,
					  size_t name_len)
{
	for (const struct cli_option *o = opts; o->type != CLI_OPT_END; o++)
		if (o->type != CLI_OPT_FORMER_SHORT && o->long_name && strlen(o->long_name) == name_len &&
		    strncmp(o->long_name, name, name_len) == 0)
			return o;
	return NULL;
}

static const struct cli_option *find_short(const struct cli_option *opts, char c)
{
	for (const struct cli_option *o = opts; o->type != CLI_OPT_END; o++)
		if (o->type != CLI_OPT_FORMER_SHORT && o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* The former meaning of -c when the value after it is one it took then
 * (`-f json`, `-fjson`): true after setting that option with a warning;
 * false when -c means what the table says now. */
static bool parse_former_short(int argc, char **argv, int *i, const struct cli_option *opts)
{
	const char *arg = argv[*i], *value = arg[2] ? arg + 2 : *i + 1 < argc ? argv[*i + 1] : NULL;
	const struct cli_option *o, *now;

	if (!value)
		return false;
	for (o = opts; o->type != CLI_OPT_END; o++) {
		if (o->type != CLI_OPT_FORMER_SHORT || o->short_name != arg[1])
			continue;
		for (size_t v = 0; v < o->nvalues; v++) {
			if (strcmp(value, ((const char *const *)o->value)[v]) != 0)
				continue;
			now = find_long(opts, o->long_name, strlen(o->long_name));
			if (!now || now->type != CLI_OPT_STRING)
				return false;
			if (!arg[2])
				++*i;
			if (now->short_name)
				cli_warning("-%c %s is now -%c %s (--%s); %s", arg[1], value,
					    now->short_name, value, now->long_name, o->help);
			else
				cli_warning("-%c %s is now --%s=%s; %s", arg[1], value, now->long_name,
					    value, o->help);
			*(const char **)now->value = value;
			return true;
		}
	}
	return false;
}

static int unknown_option(const char *arg, const struct cli_option *opts)
{
	const char *names[64];
	char shown[80];
	char spelled[64][48];
	size_t n = 0;
	const char *near;

	for (const struct cli_option *o = opts; o->type != CLI_OPT_END && n < 63; o++) {
		if (!o->long_name || o->type == CLI_OPT_FORMER_SHORT)
			continue;
		snprintf(spelled[n], sizeof spelled[n], "--%s", o->long_name);
		names[n] = spelled[n];
		n++;
	}
	names[n++] = "--help";
	/* Compare "--fromat" with "--format", ignoring any "=value". */
	snprintf(shown, sizeof shown, "%.*s", (int)strcspn(arg, "="), arg);
	near = arg[1] == '-' ? cli_nearest(shown, names, n) : NULL;
	if (near)
		cli_error("unknown option '%s'; did you mean '%s'?", shown, near);
	else
		cli_error("unknown option '%s'; see '--help'", shown);
	return CLI_USAGE;
}

static int set_value(const struct cli_option *o, const char *spelled, const char *value)
{
	char *end;

	switch (o->type) {
	case CLI_OPT_STRING:
		*(const char **)o->value = value;
		return 0;
	case CLI_OPT_INT: {
		long long v;

		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno || end == value || *end) {
			cli_error("option '%s' expects an integer, not '%s'", spelled, value);
			return CLI_USAGE;
		}
		*(int64_t *)o->value = v;
		return 0;
	}
	case CLI_OPT_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end || !isfinite(v)) {
			cli_error("option '%s' expects a number, not '%s'", spelled, value);
			return CLI_USAGE;
		}
		*(double *)o->value = v;
		return 0;
	}
	case CLI_OPT_FLAG:
	case CLI_OPT_OPTIONAL:
	case CLI_OPT_FORMER_SHORT:
	case CLI_OPT_END:
		break;
	}
	return CLI_USAGE;
}

/* One option token at argv[*i]; consumes a separate value token if needed. */
static int parse_one(int argc, char **argv, int *i, const struct cli_option *opts,
		     const char *const *usage)
{
	const char *arg = argv[*i];
	const struct cli_option *o;
	const char *value = NULL;
	char spelled[80];

	if (arg[1] == '-') {
		const char *name = arg + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);

		if (len == 4 && strncmp(name, "help", 4) == 0 && !eq) {
			cli_usage__print(usage, opts, false);
			return CLI_HELP;
		}
		o = find_long(opts, name, len);
		if (!o)
			return unknown_option(arg, opts);
		snprintf(spelled, sizeof spelled, "--%s", o->long_name);
		if (eq)
			value = eq + 1;
		if (o->type == CLI_OPT_OPTIONAL) {
			*(const char **)o->value = value ? value : "";
			return 0;
		}
		if (o->type == CLI_OPT_FLAG) {
			if (value) {
				cli_error("option '%s' takes no value", spelled);
				return CLI_USAGE;
			}
			*(bool *)o->value = true;
			return 0;
		}
	} else {
		if (arg[1] == 'h' && !arg[2]) {
			cli_usage__print(usage, opts, false);
			return CLI_HELP;
		}
		if (parse_former_short(argc, argv, i, opts))
			return 0;
		o = find_short(opts, arg[1]);
		if (!o)
			return unknown_option(arg, opts);
		snprintf(spelled, sizeof spelled, "-%c", o->short_name);
		if (o->type == CLI_OPT_FLAG) {
			if (arg[2]) {
				cli_error("option '%s' takes no value", spelled);
				return CLI_USAGE;
			}
			*(bool *)o->value = true;
			return 0;
		}
		if (arg[2])
			value = arg + 2;
	}
	if (!value) {
		if (*i + 1 >= argc) {
			cli_error("option '%s' needs a value (%s)", spelled, o->argh ? o->argh : "value");
			return CLI_USAGE;
		}
		value = argv[++*i];
	}
	return set_value(o, spelled, value);
}

int cli_parse(int argc, char **argv, const struct cli_option *opts,
	      const char *const *usage, unsigned flags)
{
	int npos = 0;
	bool only_positional = false;

	for (int i = 1; i < argc; i++) {
		char *arg = argv[i];

		if (only_positional || arg[0] != '-' || arg[1] == '\0') {
			/* A lone "-" is positional (stdin/stdout by convention). */
			argv[npos++] = arg;
			if (flags & CLI_STOP_AT_NON_OPTION)
				only_positional = true;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_positional = true;
			continue;
		}
		int rc = parse_one(argc, argv, &i, opts, usage);
		if (rc < 0)
			return rc;
	}
	argv[npos] = NULL;
	return npos;
}

int cli_parse_status(int parse_result)
{
	return parse_result == CLI_HELP ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
