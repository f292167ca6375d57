/* access.h - how well each kernel's global loads and stores use the 32-byte
 * sectors they pull, from the access counters `perfkit run --metrics`
 * records per profiled launch (PERFKIT_KERNEL_METRICS: ldSectors,
 * ldRequests, ldBytesRequested, the same for stores, L1/L2 hit rates).
 *
 * A warp's request for 32 consecutive 4-byte words touches 4 sectors (128
 * bytes); when each thread's word lies in a sector of its own, the request
 * touches 32 and moves 8 bytes for each byte the threads asked for. The
 * ideal for a request follows from the bytes it asked for (32 threads x
 * the access width); without those bytes it is taken as 4 (4-byte words),
 * and where they leave out some of the requests (cp.async copies to shared
 * memory: see access.c) as 16 (the widest copy).
 *
 * The counters of one kernel may come from other launches than its duration
 * (the memory mode measures them on alternate launches): they are summed per
 * kernel name, and only their ratios are used. */
#ifndef REPORT_ACCESS_H
#define REPORT_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

#define ACCESS_SECTOR_BYTES 32
#define ACCESS_WARP_THREADS 32
/* Sectors per request of 32 threads reading consecutive 4-byte words. */
#define ACCESS_DEFAULT_IDEAL_SECTORS 4.0
/* ... and of 32 threads copying 16 bytes each (the widest cp.async). */
#define ACCESS_CP_ASYNC_IDEAL_SECTORS 16.0

/* One direction (loads or stores) of one kernel, summed over its measured
 * launches. */
struct access_counts {
	double sectors, requests;
	double bytes_requested; /* what the instructions asked for; < 0: not measured */
};

struct access_kernel {
	char *name;
	int64_t launches, time_ns;  /* every launch in the window */
	int64_t measured;           /* launches with access counters */
	struct access_counts ld, st;
	double l1_hit_pct, l2_hit_pct; /* means over the measured launches; < 0: not measured */
};

enum access_verdict {
	ACCESS_UNKNOWN,     /* no counters for this kernel */
	ACCESS_EFFICIENT,   /* moves at most max_overfetch bytes per useful byte */
	ACCESS_WASTEFUL,    /* uncoalesced or scattered */
};

double access__sectors_per_request(const struct access_counts *c);
/* Whether the bytes asked for leave some requests out: fewer than a byte
 * per thread of each request (cp.async copies come without theirs). */
bool access__bytes_left_out(const struct access_counts *c);
/* The bytes the direction's instructions asked for (0 without requests), or
 * -1 where they were not measured or leave some requests out. */
double access__bytes_asked(const struct access_counts *c);
/* The sectors a request of this kernel would touch if its threads read
 * consecutive addresses: the bytes per request over 32 (at least 1);
 * ACCESS_DEFAULT_IDEAL_SECTORS when the bytes were not measured,
 * ACCESS_CP_ASYNC_IDEAL_SECTORS when they leave requests out. */
double access__ideal_sectors_per_request(const struct access_counts *c);
/* The access width per thread in bytes when it reads as a power of two
 * from 1 to 16 (the bytes per request over 32 threads), else 0. */
int access__word_bytes(const struct access_counts *c);
/* Bytes moved in sectors for each byte asked for, loads and stores
 * together: sectors x 32 / bytes requested where the bytes were measured,
 * else sectors per request against the ideal of 4. 0 when nothing was
 * measured. */
double access__overfetch(const struct access_kernel *k);
enum access_verdict access__judge(const struct access_kernel *k, double max_overfetch);

/* Whether the capture records access counters at all (captures from before
 * they existed lack the columns). */
bool access__recorded(struct prof_store *s);
/* Kernels with access counters, summed per name over the launches starting
 * in [from_ns, to_ns), sorted by total time. An empty list when the capture
 * has no counters. */
int access__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct access_kernel **out,
		 int *n, struct prof_error *err);
void access__free(struct access_kernel *k, int n);
/* The entry named name, or NULL. */
const struct access_kernel *access__find(const struct access_kernel *k, int n, const char *name);

#endif
