/* cli_job.h - the captures a reader command was given, as one capture:
 * one file is read as it is; several files, or a directory of captures,
 * are one job, merged (report/job) into a temporary capture on disk that
 * goes by the arguments' names and is removed when the command ends. */
#ifndef PERFKIT_CLI_JOB_H
#define PERFKIT_CLI_JOB_H

#include <stdbool.h>

#include "prof/store.h"

struct job_inputs;

/* The option of every command that reads a job (cli.h's option table):
 * captures that do not look like one job's (of two runs, a rank twice,
 * runs apart in time) read as one all the same. */
#define CLI_JOB_FORCE_OPTION(force)                                                         \
	CLI_FLAG(0, "force", (force), "read captures that do not look like one job's "      \
		 "(two runs, a rank twice, apart in time) as one all the same")

struct cli_job {
	char *path;   /* the capture to read */
	char *name;   /* what reports call it */
	char *tmpdir; /* the temporary capture's folder; NULL when path is an argument */
};

/* Make the capture of args[0..n) (n >= 1). Several captures that do not
 * look like one job's are refused unless force (report/job's
 * job_plan__make says why); a directory's earlier merge output left among
 * its captures is skipped, with a warning. On failure the error is printed
 * and CLI_EXIT_USAGE returned; cli_job__close may follow either way. */
int cli_job__make(struct cli_job *job, char *const *args, int n, bool force);
/* Open job's capture as every reader does, under job's name; prints the
 * error and returns CLI_EXIT_USAGE on failure. A temporary capture is
 * removed as soon as it is open (the store reads on from it). */
int cli_job__open(struct cli_job *job, struct prof_store **out);
/* Whether job is several captures merged. */
int cli_job__is_merged(const struct cli_job *job);
/* Print the reports[0..nreports) of the job args[0..n) from its map and
 * reduce (report/job) when it is a job of several captures and each
 * report is one a map and reduce prints; under an MPI launcher only rank
 * 0 prints. Returns -1 when it does not apply (the caller reads the job
 * as one capture), else the exit status. sink_format: enum rpt_format;
 * output and force: -o and --force (cli_output__open; force as cli_job__make's too). */
int cli_job__report(char *const *args, int n, const char *const *reports, int nreports,
		    int sink_format, bool full_names, const char *output, bool force);
/* job_inputs__collect of args[0..n), its error printed (CLI_EXIT_USAGE),
 * and a warning for each earlier merge output it skipped. */
int cli_job__collect(char *const *args, int n, bool force, struct job_inputs *in);

/* Under an MPI launcher (a build with MPI), whether this process is an
 * MPI process other than rank 0: a command that does not share its work
 * among them leaves it to rank 0, which alone prints, and ends at once
 * with status 0 (report/job's job_mpi__not_rank0). */
bool cli_job__not_rank0(void);

struct diff_profile;
struct sum_window;
/* The diff profile (report/compare) of one argument: a capture, or a
 * directory of a job's captures (force: as cli_job__make's); its loop
 * marked as like's is where that marker repeats in it (NULL: its own;
 * diff_profile__load_like). Prints the error and returns CLI_EXIT_USAGE on
 * failure (*p is then empty). */
int cli_job__profile(char *arg, const struct sum_window *like, bool force, struct diff_profile *p);
/* Remove the temporary capture, if any, and free job. */
void cli_job__close(struct cli_job *job);

#endif
