/* job.h - report/job, jobs of many captures: the captures a command was
 * given (files or a directory), what each says of its place in the job
 * (host, processes, clock pairs, run metadata), the job's one time base, and
 * the merge of them all into one capture (`perfkit merge`, and the
 * temporary capture every reader command makes of a job).
 *
 * This is what cli/ includes. What the folder may use: summary/, model/, registry/, analysis/
 * (NCCL's collective model, which keys the collectives that align hosts),
 * sink/ and libprof. Nothing else in report/ uses job/. */
#ifndef REPORT_JOB_H
#define REPORT_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"
#include "summary/summary.h"
#include "model/job_time.h"

/* ---- the captures of a job ------------------------------------------------ */

/* The capture files a command was given: each argument a capture, or a
 * directory whose *.sqlite files (in natural order: rank 2 before rank 10)
 * are the captures. name says what the job is in reports: the argument when
 * there is one, else the arguments joined. One file given twice (by two
 * names, or as an argument and in a directory) is refused: it would count
 * twice. A directory's capture that an earlier `perfkit merge` made (its
 * JOB_META_CAPTURES) is left out, into skipped, for the caller to say:
 * the directory's other captures are what it holds, and would count twice
 * (unless the directory holds nothing else). */
struct job_inputs {
	char **paths;
	int n;
	char *name;
	char **skipped;
	int nskipped;
	/* Read captures as one job that do not look like one job's (of two
	 * runs, or of a rank twice): job_plan__make refuses them otherwise. */
	bool force;
};

/* job_inputs__collect's flags. */
enum job_inputs_flags {
	JOB_INPUTS_FORCE = 1 << 0, /* in->force */
};

/* Under an MPI launcher every process of a command that shares its work
 * collects the inputs, and joins the MPI job to open its share of a
 * directory's captures (whether a merge made them); a process that works
 * alone (job_mpi__not_rank0 asked first) opens them all. */
int job_inputs__collect(char *const *args, int nargs, unsigned flags, struct job_inputs *in,
			struct prof_error *err);
void job_inputs__exit(struct job_inputs *in);

/* ---- what each capture says ---------------------------------------------- */

/* A clock pair: the host's realtime clock and the capture's timestamp read
 * together (PERFKIT_CLOCKS, or an nsys export's session start). */
struct job_clock_pair {
	int64_t realtime_ns, timestamp_ns;
};

struct job_collective_end;

/* A rank as its launcher numbered it (PERFKIT_PROCESS_INFO). */
struct job_rank {
	int rank;
	int world_size;  /* -1: not recorded */
	char *launcher;  /* "" when not recorded */
};

struct job_capture {
	char *path;
	struct prof_file_state state; /* the file when it was probed: which, and as it was */
	char *host;            /* "" when the capture does not say */
	bool nsys;             /* an Nsight Systems export */
	/* run metadata (NULL when absent) */
	char *command, *gpu, *exit_status, *trace;
	char *python_sampling_hz; /* PERFKIT_META's python_sampling_hz; NULL: none */
	int64_t start_ns, duration_ns;
	bool has_span;         /* start_ns and duration_ns both recorded */
	int64_t pid;           /* the run's program (PERFKIT_META pid); 0 when not recorded */
	/* When it ran, on its host's realtime clock: the run's metadata, else
	 * its clock pairs, else an nsys export's session and analysis span.
	 * Captures of one job ran at the same time. */
	int64_t ran_from_ns, ran_to_ns;
	bool has_ran;
	/* the ranks its processes were given by a launcher */
	struct job_rank *ranks;
	int nranks;
	/* the first clock pair at its start and the last at its end */
	struct job_clock_pair clock_start, clock_end;
	bool has_clock_start, has_clock_end;
	/* the processes with activity, globalPid without the host bits */
	int64_t *pids;
	int npids;
	/* the ends of its NCCL kernels, matched across ranks to refine the
	 * time base (struct job_collective_end, job_impl.h) */
	struct job_collective_end *nccl;
	int nnccl;
	int group;             /* index of its host among the job's hosts (time base) */
	int id_index;          /* what its processes get above the pid bits */
};

/* How the captures are put on one time base. */
enum job_time_base {
	JOB_TIME_ONE_HOST,    /* one host: one clock, nothing moved */
	JOB_TIME_CLOCKS,      /* hosts' recorded clock pairs */
	JOB_TIME_COLLECTIVES, /* clock pairs, refined from the ends of matched NCCL collectives */
	JOB_TIME_UNALIGNED,   /* several hosts, not all with clock pairs: left as they are */
};

/* The plan of a job: each capture probed, hosts numbered in the order they
 * first appear, each capture's mapping onto the time base of the first
 * host (whose captures never move: nor do those of one host against each
 * other). */
struct job_plan {
	struct job_capture *c;
	int n;
	int nhosts;
	struct prof_merge_map *maps;  /* one per capture */
	int64_t *host_span_ns;        /* per host: how long its captures last together */
	unsigned parts;               /* what a map and reduce reads of each capture (enum
				       * job_parts, job_impl.h): the overview's parts unless
				       * job_report__compute is asked for more */
	/* how each rank's loop is searched for (NULL: the defaults diagnose
	 * documents, as rank_sum's); diagnose's settings may change them */
	const struct sum_loop_options *loop;
	enum job_time_base time_base;
	double error_ns;              /* estimated alignment error; < 0: not known */
	int collectives;              /* collectives matched across hosts (JOB_TIME_COLLECTIVES) */
	char name[1024];              /* the job's name (struct job_inputs) */
};

/* Probe every input and work out the time base and the process ids.
 * Refused (PROF_E_USAGE, one line naming two of the captures and what
 * tells them apart): one capture twice (the same host, program pid and
 * start: a copy), and, unless in->force, captures that are not one job's
 * (the same rank of one launcher in two, ranks of different launchers or
 * world sizes, runs that do not overlap in time). */
int job_plan__make(const struct job_inputs *in, struct job_plan *plan, struct prof_error *err);
/* 0 when every capture of the plan is still the file it was when probed,
 * as it was; else PROF_E_CHANGED naming the first that is not: the job's
 * later reads open each again by its name, and would mix what they read
 * with what the plan was made of. */
int job_plan__unchanged(const struct job_plan *plan, struct prof_error *err);
void job_plan__exit(struct job_plan *plan);
/* "one host", "clock pairs", "collectives", ... for humans. */
const char *job_time_base__name(enum job_time_base b);
/* The time base and alignment error of a job of several hosts in words,
 * as its merged capture's overview says them; false for one host. */
bool job_plan__time(const struct job_plan *p, struct sum_job_time *t);

/* ---- the merged capture --------------------------------------------------- */

/* PERFKIT_META keys of a merged job. */
#define JOB_META_CAPTURES "job_captures"      /* how many captures it was made of */
#define JOB_META_HOSTS "job_hosts"            /* how many hosts */
#define JOB_META_NAME "job_name"              /* what the job was given as */
#define JOB_META_TIME_BASE "time_base"        /* job_time_base__name */
#define JOB_META_TIME_ERROR "time_error_ns"   /* estimated alignment error; absent: unknown */
#define JOB_META_COLLECTIVES "time_collectives" /* collectives matched across hosts */

/* ---- reports by map and reduce ---------------------------------------------- */

/* Whether report name ("overview", "cuda_gpu_kern_sum", "rank_sum",
 * "nccl_sum") is printed from a job's map and reduce rather than from its
 * merged capture. */
bool job_report__can(const char *name);

struct job_report;
/* Map and reduce the job of in for the reports names[0..nnames) (each one
 * job_report__can prints; report/job/job_mapreduce.c), reading of each
 * capture what they need. 1: *out holds the job's reports (this process
 * prints them); 0: an MPI process that gave its share to rank 0 (it
 * prints nothing); < 0: an error, in err. */
int job_report__compute(const struct job_inputs *in, const char *const *names, int nnames,
			struct job_report **out, struct prof_error *err);
/* Print report name of the job into sink, as registry__run prints it of
 * the job's merged capture. */
int job_report__emit(struct job_report *r, const char *name, struct rpt_sink *sink,
		     struct prof_error *err);
/* Records the job's captures dropped. */
int64_t job_report__dropped(const struct job_report *r);
void job_report__delete(struct job_report *r);

/* ---- diagnose by map and reduce (job_diagnose.c) ----------------------------- */

struct diag_settings;
struct diag_report;
/* `perfkit diagnose` of the job of in (two captures or more) without a
 * merged capture: each capture mapped into what the job's rules read of
 * its ranks (their time, their NCCL calls), the rules of one process run
 * on the ranks the diagnosis chooses, each read again from its own
 * capture, the job's rules on all. 1: *out is the job's diagnosis (this
 * process prints it); 0: an MPI process that gave its share to rank 0;
 * < 0: an error, in err. */
int job_diagnose__run(const struct job_inputs *in, const struct diag_settings *settings,
		      struct diag_report **out, struct prof_error *err);

/* Under an MPI launcher, in a build with MPI: whether this process is an
 * MPI process other than rank 0. A command that does not share its work
 * among the MPI processes (all but a report by map and reduce) runs on
 * rank 0 alone, so that it prints once; the others end at once with
 * status 0. Every process has left the MPI job when it had joined it (a
 * directory's captures looked at in shares, job_inputs__collect), and
 * joins none after. False without MPI. */
bool job_mpi__not_rank0(void);

/* Write the capture at out_path of every capture of plan, with the job's
 * metadata, as every output is written (prof/output.h; flags:
 * PROF_OUTPUT_REPLACE, PROF_OUTPUT_FORCE_IS_LONG): in a temporary file
 * beside out_path, renamed into place once finished. */
int job__merge(const struct job_plan *plan, const char *out_path, unsigned flags,
	       struct prof_error *err);

#endif
