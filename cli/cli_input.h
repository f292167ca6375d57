/* cli_input.h - the captures a reader command was given, as one capture:
 * one file is read as it is; several files, or a directory of captures,
 * are one job, merged (report/job) into a temporary capture on disk that
 * goes by the arguments' names and is removed when the command ends.
 * Commands reach it through cli_reader.h's preamble. */
#ifndef PERFKIT_CLI_INPUT_H
#define PERFKIT_CLI_INPUT_H

#include <stdbool.h>

#include "prof/store.h"

struct job_inputs;

struct cli_input {
	char *path;   /* the capture to read */
	char *name;   /* what reports call it */
	char *tmpdir; /* the temporary capture's folder; NULL when path is an argument */
};

/* Make the capture of args[0..n) (n >= 1). Several captures that do not
 * look like one job's are refused unless force (report/job's
 * job_plan__make says why); a directory's earlier merge output left among
 * its captures is skipped, with a warning. On failure the error is printed
 * and CLI_EXIT_USAGE returned; cli_input__close may follow either way. */
int cli_input__make(struct cli_input *in, char *const *args, int n, bool force);
/* When a capture is checked whole (prof_store__check_whole): before any
 * read; on a thread of its own beside the reading
 * (prof_store__check_whole_apart); or put off for the reader to run when
 * it has idle time (prof_store__check_whole_later). The last two only for
 * an output nobody sees before cli_reader__check_read. */
enum cli_check { CLI_CHECK_FIRST, CLI_CHECK_APART, CLI_CHECK_LATER };

/* Open in's capture as every reader does, under in's name, checked whole
 * as check says; prints the error and returns CLI_EXIT_USAGE on failure. A
 * temporary capture is removed as soon as it is open (the store reads on
 * from it). */
int cli_input__open(struct cli_input *in, enum cli_check check, struct prof_store **out);
/* Whether in is several captures merged. */
bool cli_input__is_merged(const struct cli_input *in);
/* Print the reports[0..nreports) of the job args[0..n) from its map and
 * reduce (report/job) when it is a job of several captures and each
 * report is one a map and reduce prints; under an MPI launcher only rank
 * 0 prints. Returns -1 when it does not apply (the caller reads the job
 * as one capture), else the exit status. sink_format: enum rpt_format;
 * output and force: -o and --force (cli_output__open; force as cli_input__make's too). */
int cli_input__report_job(char *const *args, int n, const char *const *reports, int nreports,
			  int sink_format, bool full_names, const char *output, bool force);
/* `perfkit diagnose` of the job args[0..n) by map and reduce (report/job),
 * when it is a job of several captures whose processes are a job's ranks:
 * 0 with *out the diagnosis; 0 with *out NULL in an MPI process other
 * than rank 0, which prints nothing; CLI_EXIT_USAGE after the error is
 * printed; -1 when it does not apply (the caller reads the captures as
 * one). force: as cli_input__make's. */
struct diag_settings;
struct diag_report;
int cli_input__diagnose_job(char *const *args, int n, bool force, const struct diag_settings *settings,
			    struct diag_report **out);
/* job_inputs__collect of args[0..n), its error printed (CLI_EXIT_USAGE),
 * and a warning for each earlier merge output it skipped. */
int cli_input__collect(char *const *args, int n, bool force, struct job_inputs *in);

/* Remove the temporary capture, if any, and free in. */
void cli_input__close(struct cli_input *in);

#endif
