/* nccl.h - NCCL's collectives in a capture: every NCCL kernel matched to
 * the NCCL call that launched it, and the same call on each rank of the
 * job matched into one collective.
 *
 * A kernel's call is the NVTX range of domain "NCCL" open on the
 * launching thread when the kernel's launch API call ran (kernel ->
 * correlationId -> runtime or driver call -> innermost NCCL push/pop
 * range on that globalTid enclosing the call's start). A kernel launched
 * by ncclGroupEnd carries the calls of its group (the ncclSend and
 * ncclRecv of a send/recv pair, the all-reduces of a coalesced bucket).
 * The call's extended payload (prof/nvtx_payload.h) gives the message
 * size, the communicator, the peer or root and the reduction operation;
 * the communicator's size and the caller's rank in it come from its
 * ncclCommInitRank (or Split) call. Without payloads (NCCL before 2.23,
 * exports made without them, other libraries) the kernel's name gives
 * the kind, operation, datatype, algorithm and protocol, and the message
 * size is unknown (-1).
 *
 * Matching across ranks: the k-th call of a communicator (or, without
 * one, of a kind) on each rank is the same collective; a rank arrives at
 * it when its kernel starts on its GPU, and the collective runs once the
 * last rank has arrived. */
#ifndef REPORT_NCCL_H
#define REPORT_NCCL_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "model/ranks.h"
#include "analysis/core/name_ids.h"
#include "prof/tables.h"

enum nccl_kind {
	NCCL_KIND_UNKNOWN = 0,
	NCCL_ALL_REDUCE,
	NCCL_ALL_GATHER,
	NCCL_REDUCE_SCATTER,
	NCCL_BROADCAST,
	NCCL_REDUCE,
	NCCL_SEND_RECV,
	NCCL_ALL_TO_ALL,
	NCCL_KIND__COUNT,
};

/* SQL true for a kernel row of alias K that is NCCL's (its demangled name
 * as nccl_kernel__parse recognises it, roughly): the communication in a
 * rank's time. */
#define NCCL_KERNEL_SQL(K)                                                     \
	PROF_SQL_KERNEL_NAME_ID(K ".") " IN (SELECT id FROM " PROF_T_STRINGS    \
	" WHERE value GLOB '" NCCL_KERNEL_NAME_GLOB "')"

/* "AllReduce", ...; "unknown" for NCCL_KIND_UNKNOWN. */
const char *nccl_kind__name(enum nccl_kind k);

/* What an NCCL kernel's name says: ncclDevKernel_AllReduce_Sum_f32_RING_LL,
 * ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv,
 * ncclDevKernel_Generic. "" where the name does not say. */
struct nccl_kernel_name {
	enum nccl_kind kind;
	char op[16];    /* Sum, Prod, Min, Max, MinMax, PreMulSum, SumPostDiv */
	char dtype[16]; /* i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2 */
	char algo[16];  /* RING, TREE, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT */
	char proto[8];  /* LL, LL128, SIMPLE */
};

/* Whether name (demangled, possibly with its parameters) is an NCCL
 * kernel; *out says what the name tells. */
bool nccl_kernel__parse(const char *name, struct nccl_kernel_name *out);
/* The kind an NCCL API call's name ("ncclAllReduce", "ncclSend") stands
 * for; NCCL_KIND_UNKNOWN for the others (ncclGroupEnd, ncclCommInitRank). */
enum nccl_kind nccl_call__kind(const char *range_name);

/* nccl-tests' bus bandwidth factor for a collective of n ranks:
 * all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, all-to-all
 * (n-1)/n, broadcast, reduce and send/recv 1. 0 when n < 1 or the kind is
 * unknown. busbw = algbw * factor, algbw = bytes / time. */
double nccl_busbw_factor(enum nccl_kind kind, int nranks);

/* Message sizes in buckets by powers of 16 from 4 KiB (up to 4 KiB, 4-64
 * KiB, 64 KiB-1 MiB, 1-16 MiB, 16-256 MiB, more): latency-bound at the
 * small end, bandwidth-bound at the large. nccl_sum's rows and the
 * diagnosis's offenders group collectives by them. */
#define NCCL_SIZE_BUCKETS 6
/* The bucket of a message size; NCCL_SIZE_BUCKETS for an unknown one (< 0). */
int nccl_size_bucket(int64_t bytes);
/* "<= 4 KiB", ..., "unknown". */
const char *nccl_size_bucket__label(int bucket);

/* The link's bandwidth `perfkit peaks` measured between two GPUs
 * (PERFKIT_PEAKS p2p_bytes_per_s, one direction), in bytes per ns (GB/s);
 * 0 when the capture holds none. */
double nccl_link_bytes_per_ns(struct prof_store *s);

/* One NCCL kernel and the call that launched it. */
struct nccl_call {
	int64_t global_pid;
	int rank;                      /* the process's rank (struct sum_ranks), -1: none */
	int64_t start_ns, end_ns;      /* the kernel on its GPU */
	int32_t device_id, stream_id;
	int64_t launch_ns;             /* the launching API call's start; -1: not in the capture */
	int64_t call_start_ns;         /* the NCCL range (host); -1: no range found */
	int64_t call_end_ns;
	struct nccl_kernel_name name;  /* what the kernel's name says */
	enum nccl_kind kind;           /* the name's kind, else the call's */
	bool has_payload;              /* the call's payload was decoded */
	int64_t bytes;                 /* message size; -1: unknown */
	uint64_t comm;                 /* communicator id; 0: unknown */
	int comm_ranks, comm_rank;     /* the communicator's size and this rank in it; -1 */
	int peer, root;                /* -1: none or unknown */
	char op[16];                   /* the payload's reduction operation ("" none) */
	int ncalls;                    /* NCCL calls the kernel carries (a group: several) */
	int64_t seq;                   /* its place among this process's calls of the
					* same communicator (or kind, without one) */
};

struct nccl_calls {
	struct nccl_call *v;           /* by process, then kernel start */
	int n, cap;
	int64_t with_payload;          /* kernels whose call's payload was decoded */
	int64_t without_call;          /* kernels no NCCL range was open for */
	int64_t payloads_unreadable;   /* payloads that did not decode (damaged, unknown schema) */
};

/* Every NCCL kernel of the reports' view of s (--rank applies), with its
 * call; ranks names the processes. */
int nccl_calls__load(struct prof_store *s, const struct sum_ranks *ranks, struct nccl_calls *out,
		     struct prof_error *err);
void nccl_calls__exit(struct nccl_calls *c);

/* What matching a call into its collective, its wait and the job's rules
 * of diagnose read of it (64 bytes where struct nccl_call is about 200): a
 * job's map and reduce carries these of every capture's calls, on the
 * job's process ids and time base, to the process that matches them
 * (report/job/job_ranks.c). */
struct nccl_arrival {
	uint64_t comm;                 /* 0: unknown, matched by kind */
	int64_t seq;
	int64_t global_pid;
	int64_t start_ns, end_ns;      /* the kernel on its GPU */
	int64_t bytes;                 /* -1: unknown */
	int32_t rank;
	int32_t kind;                  /* enum nccl_kind */
	int32_t comm_ranks;            /* the communicator's size; -1: unknown */
};

/* k's arrival. */
struct nccl_arrival nccl_call__arrival(const struct nccl_call *k);
/* The calls of n arrivals (what an arrival does not say unknown: no
 * launch, range, device or peer), into out (set). PROF_E_NOMEM. */
int nccl_calls__of_arrivals(const struct nccl_arrival *v, int n, struct nccl_calls *out);

/* One collective of the job: the same call on each rank that took part. */
struct nccl_collective {
	enum nccl_kind kind;
	uint64_t comm;
	int64_t seq;
	int64_t bytes;                 /* -1: unknown */
	int *calls;                    /* indexes into nccl_calls.v, one per rank, by rank */
	int ncalls;
	int64_t first_arrival_ns;      /* the earliest kernel start */
	int64_t last_arrival_ns;       /* the latest: the collective runs from here */
	int last_rank;                 /* who arrived last (-1 when unknown) */
};

struct nccl_collectives {
	struct nccl_collective *v;
	int n, cap;
};

/* Group calls into collectives (calls of one process are never grouped
 * with each other). */
int nccl_collectives__match(const struct nccl_calls *c, struct nccl_collectives *out,
			    struct prof_error *err);
/* The same of n arrivals (a collective's calls index v). */
int nccl_arrivals__match(const struct nccl_arrival *v, int n, struct nccl_collectives *out,
			 struct prof_error *err);
void nccl_collectives__exit(struct nccl_collectives *cs);
/* Each call's wait for the last rank of its collective (job_judge__waits)
 * into wait_ns (c->n of them; -1 where its collective has one call, or a
 * call with a bad span), and each collective's last arrival into
 * last_call (cs->n; -1: none). 0, or PROF_E_NOMEM. */
int nccl_collectives__waits(const struct nccl_calls *c, const struct nccl_collectives *cs, int64_t *wait_ns,
			    int *last_call);
/* The same of the n arrivals cs was matched from. */
int nccl_arrivals__waits(const struct nccl_arrival *v, int n, const struct nccl_collectives *cs,
			 int64_t *wait_ns, int *last_call);

/* A call's transfer time: its kernel's, less what it waited (wait_ns, as
 * nccl_collectives__waits gives it; below 0: unknown, nothing taken). */
int64_t nccl_call__transfer_ns(const struct nccl_call *c, int64_t wait_ns);
int64_t nccl_arrival__transfer_ns(const struct nccl_arrival *a, int64_t wait_ns);

/* What says why kernels have no message size, in numbers that add up
 * over a job's captures (nccl_size_evidence__add) to the merged
 * capture's. */
struct nccl_size_evidence {
	int64_t no_payload;            /* kernels in an NCCL call whose payload gave no size */
	int64_t unreadable;            /* payloads that did not decode */
	int64_t without_call;          /* kernels in no NCCL call */
	bool nvtx;                     /* the capture holds NVTX events */
};

/* c's evidence, s's NVTX events, into e (set, not added). */
void nccl_calls__size_evidence(struct prof_store *s, const struct nccl_calls *c,
			       struct nccl_size_evidence *e);
void nccl_size_evidence__add(struct nccl_size_evidence *a, const struct nccl_size_evidence *b);
/* Why kernels have no message size, as one clause ("their NCCL calls
 * carry no NVTX payload (NCCL before 2.23)"; the capture holds no NVTX
 * events ...), into buf. */
void nccl_size_evidence__why(const struct nccl_size_evidence *e, char *buf, size_t cap);
/* The same of c's kernels in s. */
void nccl_calls__why_no_size(struct prof_store *s, const struct nccl_calls *c, char *buf, size_t cap);

/* What nccl_sum and collective_bandwidth say without a measured link. */
#define NCCL_NO_LINK                                                                            \
	"the capture holds no measured link bandwidth (PERFKIT_PEAKS p2p_bytes_per_s): run "      \
	"`perfkit peaks` on a machine with several GPUs and `perfkit peaks --store FILE`"

#endif
