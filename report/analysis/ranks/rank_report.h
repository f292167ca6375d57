/* rank_report.h - the rows of rank_sum and nccl_sum (rank_report.c) from
 * their parts: each rank's time (rank_time.h), and NCCL's calls grouped by
 * kind, message size and rank. summary__rank_sum and summary__nccl_sum
 * print them of one store; a job's map and reduce (report/job) puts them
 * together from its captures, one at a time, and prints them through the
 * same functions, so that both print the same bytes. */
#ifndef REPORT_RANK_REPORT_H
#define REPORT_RANK_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "nccl.h"
#include "rank_time.h"
#include "sink/table.h"

/* rank_sum's table of t's ranks, in their order. */
int rank_sum__emit(const struct rank_times *t, struct rpt_sink *sink, struct prof_error *err);

/* NCCL's calls of one kind, message size bucket and rank. */
struct nccl_sum_group {
	enum nccl_kind kind;
	int bucket, rank;
	int64_t calls, bytes, time_ns;
	int64_t wait_ns, transfer_ns;  /* of the calls whose wait is known (nccl_sum__emit) */
	int64_t waits_known;           /* calls matched into a collective of several ranks */
	int comm_ranks;                /* the largest communicator of its calls; -1: unknown */
	bool bytes_known;              /* its first call's size was known */
	int64_t *dur;                  /* each call's kernel time */
	int ndur, cap;
	struct nccl_kernel_name name;  /* its first call's: variant, protocol, datatype */
};

struct nccl_sum {
	struct nccl_sum_group *g;
	int n, cap;
	/* every call, for its collective's waits: these need the other
	 * ranks' calls, so they are found when all are in (nccl_sum__emit) */
	struct nccl_arrival *arrivals;
	int narrivals, arrivals_cap;
	int64_t left_out;              /* kernels whose end precedes their start */
	int64_t unknown;               /* calls without a message size */
	struct nccl_size_evidence sizes; /* why, and the kernels launched outside any NCCL call */
};

/* c's calls into s, a group per kind, size bucket and k->rank (a new
 * group's first call is the first of c's order, by process then start),
 * and each one's arrival; s->sizes is the caller's
 * (nccl_calls__size_evidence). */
int nccl_sum__add_calls(struct nccl_sum *s, const struct nccl_calls *c, struct prof_error *err);
/* b's calls into a, a group of the same kind and size whose first call
 * came before b's; b is emptied. */
int nccl_sum_group__absorb(struct nccl_sum_group *a, struct nccl_sum_group *b);
/* nccl_sum's table of s (its groups sorted, each one's waits found from
 * s's arrivals as one job's, the same call on each rank one collective),
 * world the job's ranks (the communicator's size where its calls do not
 * say), link the link's bandwidth in bytes per ns (0: not measured). */
int nccl_sum__emit(struct nccl_sum *s, int world, double link, struct rpt_sink *sink,
		   struct prof_error *err);
void nccl_sum__exit(struct nccl_sum *s);

#endif
