/* ranks.h - the processes and ranks of a capture (ranks.c) and --rank's
 * choice and views (rank_choice.c, rank_filter.c). */
#ifndef REPORT_MODEL_RANKS_H
#define REPORT_MODEL_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* A GPU a process used, by its own device number. */
struct sum_gpu {
	int32_t device_id;
	char *uuid;             /* PERFKIT_PROCESS_GPUS; NULL when not recorded */
	char *name;             /* TARGET_INFO_GPU's; NULL when unknown */
};

/* A process of the capture. A rank is a process its launcher numbered
 * (PERFKIT_PROCESS_INFO); in a capture that does not say (nsys exports,
 * earlier perfkit captures, a program run without a launcher), every
 * process with CUDA work (kernels, copies, memsets), numbered in pid order.
 * A launcher or data-loader worker without CUDA work is kept, not a rank. */
struct sum_process {
	int64_t global_pid;     /* as the tables hold it (pid << 24 for perfkit) */
	uint32_t pid;
	int rank;               /* -1: not a rank */
	int world_size, local_rank; /* -1: unknown */
	char *host, *name, *launcher; /* NULL: unknown */
	bool has_cuda;          /* kernels, copies or memsets */
	struct sum_gpu *gpus;   /* by device number */
	int ngpus;
	bool selected;          /* chosen by --rank (every process without it) */
};

struct sum_ranks {
	struct sum_process *p;  /* ranks in rank order, then the other processes by pid */
	int n;
	int nranks;
	bool from_process_info; /* numbers from the launcher, not from CUDA work */
	bool several_hosts;     /* a job merged from captures of several hosts */
	bool filtered;          /* --rank chose some of them */
};

/* The whole capture's processes, whatever --rank shows the reports. */
int sum_ranks__load(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
/* In parts, for a job's captures read one by one (report/job): each
 * capture's processes as it records them (ranks a launcher gave, else -1;
 * hosts where PERFKIT_PROCESS_INFO says them), then the job's processes
 * together numbered as sum_ranks__load numbers a capture's, those without
 * a host given host (NULL: none). No GPU names, every process selected. */
int sum_ranks__read(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
int sum_ranks__number(struct sum_ranks *r, const char *host, struct prof_error *err);
void sum_ranks__exit(struct sum_ranks *r);
/* Whether the capture is a job: several processes with CUDA work, or ranks
 * a launcher numbered. The traces, the folded stacks and the HTML report
 * then show each process as its rank. */
bool sum_ranks__is_job(const struct sum_ranks *r);
/* False when s cannot be a job, known without reading its GPU work (a
 * perfkit capture of one process, whose launcher numbered none): readers
 * that only need the answer skip the model's scans then. */
bool sum_ranks__may_be_job(struct prof_store *s);
/* The process of a globalPid, or of a rank; NULL when there is none. */
const struct sum_process *sum_ranks__process(const struct sum_ranks *r, int64_t global_pid);
const struct sum_process *sum_ranks__rank(const struct sum_ranks *r, int rank);
/* "rank 1 · node7 · GPU 1 (GPU-8c1f2a3b)": how a process is named
 * wherever one is shown (a process that is no rank: "torchrun (pid 812)
 * · node7"). */
void sum_process__label(const struct sum_process *p, char *buf, size_t cap);
/* "rank 1", or "pid 812" for a process that is no rank. */
void sum_process__rank_name(const struct sum_process *p, char *buf, size_t cap);

/* `--rank=N[,M]`: from here on every report, diagnosis and export of s
 * sees only those ranks' rows (ranks as struct sum_ranks numbers them).
 * PROF_E_USAGE with a one-line message for a malformed list or a rank the
 * capture does not have (rank_filter.c; reached by cli/ through
 * summary/summary.h, as the reports' choice). */
int summary__select_ranks(struct prof_store *s, const char *list, struct prof_error *err);
/* The first start and last end of table's real rows (as the capture's
 * extent counts them) that the views show, where they show whole
 * processes (a rank's scope or --rank, no --window) and their rows were
 * noted when the views were made, with each process's times: 1 and *lo,
 * *hi (INT64_MAX, INT64_MIN: none); 0 where that cannot be told here (the
 * table is read), < 0 an error. */
int sum_ranks__shown_extent(struct prof_store *s, const char *table, int64_t *lo, int64_t *hi,
			    struct prof_error *err);
/* --rank (rank_choice.c; summary__select_ranks chooses): set
 * each process's selected from the choice. */
int sum_ranks__mark_selected(struct prof_store *s, struct sum_ranks *r, struct prof_error *err);
/* Narrow every table the reports read to one process's rows, for an
 * analysis that works one rank at a time; no cursor may be open. */
int sum_ranks__scope(struct prof_store *s, int64_t global_pid, struct prof_error *err);
/* Back to what --rank chose (the whole capture without it). */
int sum_ranks__unscope(struct prof_store *s, struct prof_error *err);
/* Whether every row sum_ranks__scope would narrow to a process is that
 * process's: an analysis of it then reads s as it is, without the views'
 * setup (which reads every table once to bound each process's rows; a
 * job's map reads each capture of one process so). */
int sum_ranks__holds_only(struct prof_store *s, int64_t global_pid, bool *only, struct prof_error *err);

#endif
