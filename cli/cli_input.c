/* cli_input.c - the captures a reader command was given, as one capture
 * (cli_input.h): the exact way, every row of the job merged into one file,
 * so that a job read from its per-rank files reports as the one capture
 * of the same run does. */
#define _GNU_SOURCE /* asprintf */
#include "cli_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "job/job.h"
#include "prof/temp_files.h"
#include "sink/sink.h"

/* A private folder for the job's merged capture, registered with the
 * capture's names so that a signal during the merge leaves none behind. */
static char *temp_dir(void)
{
	struct prof_error err;
	char dir[4096];

	if (prof_temp_dir__create("perfkit-job", dir, sizeof dir, &err) < 0)
		return NULL; /* errno says why (prof_temp_dir__create keeps it) */
	return strdup(dir);
}

/* The job's capture and SQLite's companions of it. */
static const char *const sides[] = { "", "-journal", "-wal", "-shm" };
#define NSIDES (sizeof sides / sizeof sides[0])

/* "TMPDIR=/x" or "/tmp (TMPDIR is not set)", for messages. */
static void temp_name(char *buf, size_t cap)
{
	const char *base = getenv("TMPDIR");

	if (base && *base)
		snprintf(buf, cap, "TMPDIR=%s", base);
	else
		snprintf(buf, cap, "/tmp (TMPDIR is not set)");
}

/* The merge failed: a full disk is said as the temporary folder's, not as
 * the SQLite statement that found it. */
static void merge_failed(const struct prof_error *err)
{
	char where[4200];

	if (err->code != PROF_E_FULL) {
		cli_error("%s", err->msg);
		return;
	}
	temp_name(where, sizeof where);
	cli_error("no room for temporary files in %s: a job's captures are merged into one file "
		  "there before they are read; set TMPDIR to a folder with room", where);
}

static int merge_job(struct cli_input *input, const struct job_inputs *in)
{
	struct job_plan plan = { 0 };
	struct prof_error err = { 0 };
	char where[4200];
	int rc;

	input->tmpdir = temp_dir();
	if (!input->tmpdir) {
		temp_name(where, sizeof where);
		if (errno == ENOSPC || errno == EDQUOT)
			cli_error("no room for temporary files in %s: %s", where, strerror(errno));
		else
			cli_error("cannot make a temporary folder in %s: %s", where, strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (asprintf(&input->path, "%s/job.sqlite", input->tmpdir) < 0) {
		input->path = NULL;
		cli_error("out of memory");
		return CLI_EXIT_USAGE;
	}
	for (size_t i = 0; i < NSIDES; i++) {
		char path[4096];

		snprintf(path, sizeof path, "%s%s", input->path, sides[i]);
		if (prof_temp__add(path, PROF_TEMP_FILE) < 0) {
			cli_error("out of memory");
			return CLI_EXIT_USAGE;
		}
	}
	rc = job_plan__make(in, &plan, &err);
	if (!rc)
		rc = job__merge(&plan, input->path, 0, &err);
	job_plan__exit(&plan);
	if (rc) {
		merge_failed(&err);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* A directory's earlier merge output, left out of the job. */
static void tell_skipped(const struct job_inputs *in)
{
	for (int i = 0; i < in->nskipped; i++)
		cli_warning("%s: left out, an earlier perfkit merge's output (the directory's other "
			    "captures are what it holds)", in->skipped[i]);
}

int cli_input__collect(char *const *args, int n, bool force, struct job_inputs *in)
{
	struct prof_error err = { 0 };

	if (job_inputs__collect(args, n, force ? JOB_INPUTS_FORCE : 0, in, &err)) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	tell_skipped(in);
	return 0;
}

int cli_input__make(struct cli_input *input, char *const *args, int n, bool force)
{
	struct job_inputs in = { 0 };
	struct stat st;
	int rc = 0;

	memset(input, 0, sizeof *input);
	/* one file: as it is, whatever it holds (the reader says what is wrong) */
	if (n == 1 && !(stat(args[0], &st) == 0 && S_ISDIR(st.st_mode))) {
		input->path = strdup(args[0]);
		input->name = strdup(args[0]);
		if (!input->path || !input->name) {
			cli_error("out of memory");
			return CLI_EXIT_USAGE;
		}
		return 0;
	}
	if (cli_input__collect(args, n, force, &in))
		return CLI_EXIT_USAGE;
	input->name = strdup(in.name);
	if (!input->name) {
		cli_error("out of memory");
		rc = CLI_EXIT_USAGE;
	} else if (in.n == 1) {
		/* a directory of one capture: that capture */
		input->path = strdup(in.paths[0]);
		if (!input->path) {
			cli_error("out of memory");
			rc = CLI_EXIT_USAGE;
		}
	} else {
		rc = merge_job(input, &in);
	}
	job_inputs__exit(&in);
	return rc;
}

/* The temporary capture and its folder removed (its name kept). */
static void remove_temp(struct cli_input *input)
{
	char path[4096];

	if (!input->tmpdir)
		return;
	for (size_t i = 0; input->path && i < NSIDES; i++) {
		snprintf(path, sizeof path, "%s%s", input->path, sides[i]);
		unlink(path);
	}
	rmdir(input->tmpdir);
	prof_temp__forget_tree(input->tmpdir);
}

static int check_whole(struct prof_store *s, enum cli_check check, struct prof_error *err)
{
	switch (check) {
	case CLI_CHECK_APART:
		return prof_store__check_whole_apart(s, err);
	case CLI_CHECK_LATER:
		return prof_store__check_whole_later(s);
	case CLI_CHECK_FIRST:
		break;
	}
	return prof_store__check_whole(s, err);
}

int cli_input__open(struct cli_input *input, enum cli_check check, struct prof_store **out)
{
	struct prof_error err = { 0 };

	*out = NULL;
	/* a job's merged capture is made of captures its probe checked whole */
	if (prof_store__open_capture(input->path, out, &err) ||
	    (!input->tmpdir && check_whole(*out, check, &err)) ||
	    (input->tmpdir && prof_store__set_name(*out, input->name, &err))) {
		cli_error("%s", err.msg);
		if (*out)
			prof_store__close(*out);
		*out = NULL;
		return CLI_EXIT_USAGE;
	}
	/* The open store reads on from the removed file: nothing is left
	 * behind, however the command ends (a closed pipe, Ctrl-C). */
	remove_temp(input);
	return 0;
}

int cli_input__report_job(char *const *args, int n, const char *const *reports, int nreports,
		    int sink_format, bool full_names, const char *output, bool force)
{
	struct job_inputs in = { 0 };
	struct job_report *r = NULL;
	struct prof_error err = { 0 };
	struct rpt_sink *sink = NULL;
	struct stat st;
	struct cli_output out = { .f = stdout };
	int rc, status = CLI_EXIT_USAGE;

	for (int i = 0; i < nreports; i++)
		if (!job_report__can(reports[i]))
			return -1;
	if (n == 1 && !(stat(args[0], &st) == 0 && S_ISDIR(st.st_mode)))
		return -1;
	/* the skipped merge outputs are told by whoever reads the job */
	if (job_inputs__collect(args, n, force ? JOB_INPUTS_FORCE : 0, &in, &err)) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (in.n < 2) {
		job_inputs__exit(&in);
		return -1;
	}
	tell_skipped(&in);
	rc = job_report__compute(&in, reports, nreports, &r, &err);
	job_inputs__exit(&in);
	if (rc < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (rc == 0)
		return CLI_EXIT_OK; /* another MPI process prints */
	if (cli_output__open(&out, output, force) < 0)
		goto out;
	sink = rpt_sink__new((enum rpt_format)sink_format, out.f);
	if (!sink) {
		cli_error("out of memory");
		goto out;
	}
	sink->full_names = full_names;
	for (int i = 0; i < nreports; i++) {
		if (job_report__emit(r, reports[i], sink, &err) < 0) {
			cli_error("%s", err.msg);
			goto out;
		}
	}
	status = CLI_EXIT_OK;
	if (job_report__dropped(r) > 0)
		cli_warning("%lld activity records were dropped during capture; "
			    "totals and counts are lower than what ran", (long long)job_report__dropped(r));
out:
	rpt_sink__delete(sink);
	status = cli_output__close(&out, status);
	job_report__delete(r);
	return status;
}

int cli_input__diagnose_job(char *const *args, int n, bool force, const struct diag_settings *settings,
			    struct diag_report **out)
{
	struct job_inputs in = { 0 };
	struct prof_error err = { 0 };
	struct stat st;
	int rc;

	*out = NULL;
	if (n == 1 && !(stat(args[0], &st) == 0 && S_ISDIR(st.st_mode)))
		return -1;
	if (job_inputs__collect(args, n, force ? JOB_INPUTS_FORCE : 0, &in, &err)) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (in.n < 2) {
		job_inputs__exit(&in);
		return -1;
	}
	rc = job_diagnose__run(&in, settings, out, &err);
	/* the captures are read as one below, which tells what it skipped */
	if (rc == 1)
		tell_skipped(&in);
	job_inputs__exit(&in);
	if (rc < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	return rc == 2 ? -1 : 0;
}

bool cli_input__is_merged(const struct cli_input *input)
{
	return input->tmpdir != NULL;
}

void cli_input__close(struct cli_input *input)
{
	remove_temp(input);
	free(input->path);
	free(input->name);
	free(input->tmpdir);
	memset(input, 0, sizeof *input);
}
