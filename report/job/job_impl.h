/* job_impl.h - internals of report/job: probing one capture, the time base
 * arithmetic (pure, tested on values) and the job's metadata. */
#ifndef REPORT_JOB_IMPL_H
#define REPORT_JOB_IMPL_H

#include "analysis/ranks/rank_report.h"
#include "job.h"
#include "model/groups.h"
#include "model/overview.h"
#include "model/ranks.h"

/* Probe the capture at path, read whole first (prof_store__check_whole);
 * with_pids: also the processes that left rows, which a merge needs to
 * keep them apart. */
int job_capture__probe(const char *path, bool with_pids, struct job_capture *c, struct prof_error *err);
/* job_plan__make for the map and reduce of MPI process rank of size: each
 * capture is probed, and its collectives read, only by the process that
 * maps it (its share: every size-th from rank, job_share__count), on
 * every core, and the probes of every share gathered to every process,
 * which then work out the same plan from them. */
int job_plan__make_share(const struct job_inputs *in, int rank, int size, struct job_plan *plan,
			 struct prof_error *err);
void job_capture__exit(struct job_capture *c);
/* How many of n captures MPI process rank of size takes: rank, rank +
 * size, rank + 2 size, ... */
int job_share__count(int n, int rank, int size);
/* What of a share's probes travels between MPI processes: each capture's
 * probe (host, run metadata, clock pairs, ranks, processes), or the ends of
 * its NCCL collectives. */
enum job_probe_part { JOB_PROBE_META, JOB_PROBE_COLLECTIVES };
/* The part of the probes of share rank of size of p as bytes (job_pack.c),
 * or where the share failed (failed: the capture that failed first, -1:
 * none) that capture and its error, rc and err (read only then). */
int job_share__pack(const struct job_plan *p, int rank, int size, enum job_probe_part part, int failed,
		    int rc, const struct prof_error *err, char **buf, size_t *len);
/* Those bytes into the same captures of p (their paths and file states
 * are p's own), or *failed (-1: none), *rc and *err as packed (p NULL:
 * only those). Returns 0, or PROF_E_CORRUPT for bytes that are no such
 * share. */
int job_share__unpack(struct job_plan *p, int rank, int size, enum job_probe_part part, const char *buf,
		      size_t len, int *failed, int *rc, struct prof_error *err);
/* Whether the probed captures of p belong together (job_together.c): one
 * capture given twice is refused; unless force, so are captures of two
 * jobs or of runs that do not overlap in time. PROF_E_USAGE with one line
 * naming two captures and what tells them apart. */
int job_plan__check_together(const struct job_plan *p, bool force, struct prof_error *err);
/* Read the ends of the capture's NCCL kernels (c->nccl). */
int job_capture__read_collectives(struct job_capture *c, struct prof_error *err);
/* Whether two captures hold a process of the same pid. */
bool job_capture__shares_pid(const struct job_capture *a, const struct job_capture *b);

/* One host's clock: its earliest start pair and latest end pair. */
struct job_host_clock {
	struct job_clock_pair start, end;
	bool has_start, has_end;
};

/* How a collective is known on every rank that took part: by its
 * communicator and its place among the process's calls of that
 * communicator where NCCL's payloads name the communicator (the
 * collective model of analysis/nccl.h), else by its kernel's name and its
 * place among the process's kernels of that name (NCCL launches one
 * communicator's kernels in the same order on every rank, but the kernels
 * of two communicators, or of one that only some ranks are in, interleave
 * differently on each rank). */
enum job_key_space { JOB_KEY_NAME, JOB_KEY_COMM };

struct job_collective_key {
	uint64_t hash;    /* the communicator, or the kernel name's hash */
	int64_t seq;      /* its place among the process's calls (kernels) of that key */
	uint8_t space;    /* enum job_key_space */
};

/* One NCCL kernel's end on its process's clock. */
struct job_collective_end {
	struct job_collective_key key;
	int64_t pid;      /* globalPid without the host bits */
	int64_t end_ns;
	int64_t dur_ns;   /* how long its kernel ran: how long it waited for the others */
};

/* One observation for the solver: a collective's end on a process of a host
 * group, already moved by that host's clock mapping. */
struct job_end_obs {
	struct job_collective_key key;
	int group;
	int64_t end_ns;
	int64_t dur_ns;   /* its kernel's duration (0: not known) */
	bool late;        /* set by the fit: the rank the others waited for */
};

/* How a host group's times move onto the time base, relative to the
 * collectives' mean time: t' = t + offset_ns + rate * (t - pivot). */
struct job_time_line {
	double offset_ns, rate;
};

/* The fit of the host groups' lines (lines[0] = { 0, 0 }: the time base)
 * that brings the matched ends of the same collective together, by least
 * squares over every collective seen on at least two groups: an offset per
 * group, and a rate where the group's collectives show one (its clock and
 * the first group's drift apart: the recorded clock pairs only tie each
 * host's capture clock to its own realtime clock). The ranks of a
 * collective do not leave it at once: the one the others waited for (its
 * kernel the shortest, theirs far longer) leaves it a fixed time after
 * them, which the fit finds too where different hosts were the late one;
 * left in, it reads as an offset that flips with whoever is late, and as a
 * rate where that changes over a run. */
struct job_time_fit {
	struct job_time_line *lines; /* ngroups, the caller's */
	int64_t pivot_ns;            /* the mean end of the collectives fitted */
	double late_ns;              /* how much later the rank the others waited for leaves
				      * a collective than they do (0: not fitted) */
	double error_ns;             /* the estimated error: the spread of a collective's
				      * aligned ends about their mean (RMS) and what a host's
				      * rate, as uncertain as it is, adds at its farthest
				      * collective; < 0: not refined */
	int matched;                 /* collectives that spanned two groups or more */
};

/* obs is sorted in place. A group that no collective joins to the others
 * leaves the fit unrefined (error_ns < 0, every line 0). */
int job_time__fit_collectives(struct job_end_obs *obs, size_t n, int ngroups,
			      struct job_time_fit *fit);
/* Compose a host's line (fitted on times map had moved) onto map: the
 * capture's times then move by both. span_ns: how long the host's captures
 * last (a rate that moves no time by half a ns over it is left out). */
void job_time__refine(struct prof_merge_map *map, const struct job_time_line *line,
		      int64_t pivot_ns, int64_t span_ns);

/* Fold a capture's pairs into its host's clock. */
void job_host_clock__add(struct job_host_clock *h, const struct job_capture *c);
/* The mapping of host h's times onto the time base of host ref, from their
 * clock pairs: both hosts' realtime clocks are taken to agree, each
 * timestamp's offset from its realtime clock moving linearly between its
 * start and end pairs. span_ns: how long the capture lasts (a rate that
 * moves no time by half a ns over it is left out, so nothing but a shift
 * is applied). Returns false (map a plain copy) when either lacks a pair. */
bool job_time__clock_map(const struct job_host_clock *ref, const struct job_host_clock *h,
			 int64_t span_ns, struct prof_merge_map *map);
/* Where time t of a capture mapped by map lands (t + shift at t). */
int64_t job_time__apply(const struct prof_merge_map *map, int64_t t);

/* ---- map and reduce (job_summary.c) -------------------------------------- */

/* A group (kernel name, range name and style) with its durations as
 * ascending runs. */
struct js_group {
	char *label, *label2;
	bool key_is_null;
	struct sum_run *runs;
	size_t n, cap;
};

/* Sorted by (label, label2, key_is_null). */
struct js_groups {
	struct js_group *g;
	size_t n, cap;
	int64_t rows_left_out;
};

struct js_interval {
	int64_t start, end;
};

/* A device's busy time as ascending, disjoint union intervals on the job's
 * time base (not yet clipped to the job's span). */
struct js_device {
	int64_t id;
	struct js_interval *iv;
	size_t n, cap;
};

struct js_gpu {
	int64_t id;
	char *name;
	int capture; /* the first capture that has it wins */
};

/* A process of a capture, as the job's rank model, rank_sum and nccl_sum
 * need it (job_ranks.c). */
struct js_process {
	int64_t gpid;               /* its globalPid in the job (the capture's host index above
				     * the pid bits, as the merge writes it) */
	int capture;                /* the capture that holds it (the first, for globalPid 0) */
	int64_t local_gpid;         /* its globalPid there */
	int launcher_rank;          /* the rank its launcher gave it; -1: none */
	bool has_cuda;              /* kernels, copies or memsets */
	bool in_model;              /* false: the NCCL kernels of no process (globalPid 0) */
	char *host;                 /* PERFKIT_PROCESS_INFO's; NULL: not said */
	struct sum_gpu *gpus;       /* device numbers and UUIDs (no names) */
	int ngpus;
	bool has_time;              /* time holds its steps and time split (steps freed) */
	struct rank_time time;      /* with JOB_PART_DIAGNOSE: its window, hidden and
				     * slowed_ns too, on the job's time base */
	struct nccl_sum nccl;       /* its NCCL calls by kind and size, and each one's arrival
				     * on the job's time base (rank not yet known) */
};

/* The processes of a job's captures, by gpid. */
struct js_ranks {
	struct js_process *p;
	size_t n, cap;
	struct nccl_size_evidence nccl_sizes; /* why NCCL kernels have no size, of every capture */
	int link_capture;           /* the first capture with a measured link; -1: none */
	double link;                /* its bandwidth, bytes per ns */
	/* JOB_PART_DIAGNOSE: the first record of any capture on the job's
	 * time base (has_first: there is one), which the job's time zero may
	 * be, and the rows with an impossible span, which diagnose's header
	 * counts */
	int64_t first_ns;
	bool has_first;
	int64_t bad_rows;
};

/* What a job's map reads of each capture: the overview's and
 * cuda_gpu_kern_sum's parts, rank_sum's, nccl_sum's. */
enum job_parts {
	JOB_PART_OVERVIEW = 1 << 0,
	JOB_PART_RANKS = 1 << 1,
	JOB_PART_NCCL = 1 << 2,
	JOB_PART_DIAGNOSE = 1 << 3, /* with the other two: what diagnose's job rules read */
};

/* What the reports of a job need of its captures. */
struct job_summary {
	struct js_groups kernels, ranges;
	struct js_device *dev;      /* by id */
	size_t ndev, devcap;
	int64_t busy_first_ns, busy_last_ns, busy_left_out;
	bool busy_any;
	struct sum_transfer *tr;    /* by (copy kind, host kind) */
	size_t ntr, trcap;
	int64_t tr_left_out;
	int64_t dropped, not_written;
	int64_t gm_samples_dropped; /* sampled GPU metrics lost (the overview's warning) */
	struct js_gpu *gpus;
	size_t ngpus, gpucap;
	int session_capture;        /* the first capture with a session start; -1: none */
	bool session_null;
	int64_t session_start_ns;
	int mapped;                 /* captures folded in */
	struct js_ranks ranks;
};

/* Map capture i of plan into s: the parts plan->parts names. */
int job_summary__map(const struct job_plan *p, int i, struct job_summary *s,
		     struct prof_error *err);
/* a += b; b is emptied. Exact: any order and grouping give the same a. */
int job_summary__reduce(struct job_summary *a, struct job_summary *b, struct prof_error *err);
void job_summary__exit(struct job_summary *s);
/* The overview and cuda_gpu_kern_sum's groups of the whole job. */
int job_summary__overview(const struct job_plan *p, const struct job_summary *s,
			  struct sum_overview *o, struct prof_error *err);
int job_summary__kern_sum(const struct job_summary *s, struct sum_groups *gs,
			  struct prof_error *err);
/* Map and reduce the whole job: on nthreads local threads, and across the
 * MPI processes when an MPI launcher started this one. 1: *out is the
 * job's summary (this process prints); 0: another process has it (this
 * one prints nothing); < 0: an error, in err. */
int job_summary__compute(const struct job_plan *p, int nthreads, struct job_summary *out,
			 struct prof_error *err);
/* A summary as bytes and back (between MPI processes). */
int job_summary__pack(const struct job_summary *s, char **buf, size_t *len);
int job_summary__unpack(const char *buf, size_t len, struct job_summary *s);

/* rank_sum's, nccl_sum's and diagnose's parts of capture i of plan, open
 * as st, into r (job_ranks.c): its processes, and each one's time or NCCL
 * calls as parts says, the calls' arrivals moved onto the job's time base
 * as the merge moves them (their waits span captures). A capture whose
 * times move by a rate is read from a copy of it moved so (in TMPDIR,
 * removed at once), so that every difference of times is the merged
 * capture's to the ns. */
int js_ranks__map_store(const struct job_plan *p, int i, struct prof_store *st, unsigned parts,
			struct js_ranks *r, struct prof_error *err);
/* a += b; b is emptied. */
int js_ranks__reduce(struct js_ranks *a, struct js_ranks *b);
void js_ranks__exit(struct js_ranks *r);
/* The process of gpid in r (sorted by gpid); NULL when none. */
struct js_process *js_ranks__find(const struct js_ranks *r, int64_t gpid);
/* The job's rank model: its processes numbered as the merged capture's
 * are. sum_ranks__exit frees it. */
int js_ranks__model(const struct job_plan *plan, const struct js_ranks *r, struct sum_ranks *m,
		    struct prof_error *err);
/* Every NCCL call's arrival of the job under its rank in m, in the merged
 * capture's order (by process, then start), those of no process numbered
 * as the merged capture numbers them. */
int js_ranks__arrivals(const struct js_ranks *r, const struct sum_ranks *m, struct nccl_arrival **out,
		       int *n, int *cap, struct prof_error *err);
/* Capture i of p as the merge moves it, in a folder of its own in TMPDIR
 * (the capture itself where it does not move by a rate: *dir and *path
 * NULL); js_ranks__remove_copy removes it. */
int js_ranks__moved_copy(const struct job_plan *p, int i, char **dir, char **path, struct prof_error *err);
void js_ranks__remove_copy(char *dir, char *path);
/* rank_sum and nccl_sum of the whole job, as summary__rank_sum and
 * summary__nccl_sum print them of its merged capture. */
int js_ranks__emit_rank_sum(const struct job_plan *p, const struct js_ranks *r,
			    struct rpt_sink *sink, struct prof_error *err);
int js_ranks__emit_nccl_sum(const struct job_plan *p, const struct js_ranks *r,
			    struct rpt_sink *sink, struct prof_error *err);

/* The job's host as its merged capture's metadata says it (malloc'd; NULL
 * when no capture says). */
char *job_meta__host(const struct job_plan *plan);

/* The PERFKIT_META rows of a merged job, through put(ctx, key, value). */
int job_meta__write(const struct job_plan *plan,
		    int (*put)(void *ctx, const char *key, const char *value), void *ctx);

#endif
