/* cli_reader.c - the preamble every reader command shares (cli_reader.h). */
#include "cli_reader.h"

#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "job/job.h"
#include "sink/sink.h"
#include "summary/summary.h"

_Static_assert((int)CLI_FORMAT_TEXT == (int)RPT_FORMAT_TEXT &&
		       (int)CLI_FORMAT_CSV == (int)RPT_FORMAT_CSV &&
		       (int)CLI_FORMAT_JSON == (int)RPT_FORMAT_JSON,
	       "a sink's format is handed on as --format named it");

/* Every name --format knows, by enum cli_format. */
static const char *const format_names[] = {
	[CLI_FORMAT_TEXT] = "text",	[CLI_FORMAT_CSV] = "csv",
	[CLI_FORMAT_JSON] = "json",	[CLI_FORMAT_HTML] = "html",
	[CLI_FORMAT_CHROME] = "chrome", [CLI_FORMAT_FOLDED] = "folded",
	[CLI_FORMAT_PERFETTO] = "perfetto",
};

int cli_format__parse(const char *name, const char *const *accepted, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(name, accepted[i]) != 0)
			continue;
		for (size_t f = 0; f < sizeof format_names / sizeof format_names[0]; f++)
			if (strcmp(name, format_names[f]) == 0)
				return (int)f;
	}
	cli_unknown("format", name, accepted, n);
	return -1;
}

bool cli_reader__not_rank0(void)
{
	return job_mpi__not_rank0();
}

int cli_reader__fail(const struct prof_error *err)
{
	cli_error("%s", err->msg);
	return CLI_EXIT_USAGE;
}

int cli_reader__fail_read(struct cli_reader *r, const struct prof_error *err)
{
	struct prof_error found = { 0 };

	if (r->store && prof_store__whole_check_failed(r->store, &found) < 0)
		return cli_reader__fail(&found);
	return cli_reader__fail(err);
}

/* --window=K: K into *k, 0; or CLI_EXIT_USAGE after the error. */
static int parse_window(const char *text, int *k)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (end == text || *end || v < 1 || v > 1000000000) {
		cli_error("--window=%s: a window's number, 1 for the first", text);
		return CLI_EXIT_USAGE;
	}
	*k = (int)v;
	return 0;
}

int cli_reader__open(struct cli_reader *r, char *const *args, int n)
{
	struct prof_error err = { 0 };
	int window = 0;

	r->store = NULL;
	if (r->window && parse_window(r->window, &window))
		return CLI_EXIT_USAGE;
	if (cli_input__make(&r->input, args, n, r->force))
		return CLI_EXIT_USAGE;
	if (r->one_capture_only && cli_input__is_merged(&r->input)) {
		cli_error("%s", r->one_capture_only);
		return CLI_EXIT_USAGE;
	}
	if (cli_input__open(&r->input, r->check, &r->store))
		return CLI_EXIT_USAGE;
	if (r->ranks && summary__select_ranks(r->store, r->ranks, &err) < 0)
		return cli_reader__fail_read(r, &err);
	if (window && summary__select_window(r->store, window, &err) < 0)
		return cli_reader__fail_read(r, &err);
	return 0;
}

int cli_reader__check_read(struct cli_reader *r)
{
	struct prof_error err = { 0 };

	if (prof_store__check_read(r->store, &err) < 0)
		return cli_reader__fail(&err);
	return 0;
}

void cli_reader__close(struct cli_reader *r)
{
	if (r->store)
		prof_store__close(r->store);
	r->store = NULL;
	cli_input__close(&r->input);
}

int cli_reader__profile(char *arg, const struct sum_window *like, bool force, const char *window,
			struct diff_profile *p)
{
	struct cli_reader r = { .force = force, .window = window };
	struct prof_error err = { 0 };
	int rc;

	memset(p, 0, sizeof *p);
	rc = cli_reader__open(&r, &arg, 1);
	/* the loop found again while the store is open: a job's merged capture
	 * cannot be opened again by its name */
	if (!rc && diff_profile__load_like(p, r.store, like, &err) < 0)
		rc = cli_reader__fail(&err);
	cli_reader__close(&r);
	return rc;
}
