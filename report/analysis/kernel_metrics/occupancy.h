/* occupancy.h - theoretical occupancy of a kernel launch from its block size,
 * registers per thread and shared memory per block against the GPU's per-SM
 * limits, with the limiter that sets it. Pure C, the same arithmetic as
 * CUDA's cuda_occupancy.h (register allocation per warp in 256-register
 * units spread over 4 sub-partitions, shared memory in 128-byte units plus
 * the 1 KiB the driver reserves per block on sm_80 and newer). */
#ifndef REPORT_OCCUPANCY_H
#define REPORT_OCCUPANCY_H

#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

struct occ_gpu {
	int compute_major, compute_minor;
	int warp_size;
	int max_warps_per_sm, max_blocks_per_sm;
	int regs_per_sm, regs_per_block;
	int max_threads_per_block;
	int64_t shared_per_sm_bytes, shared_per_block_bytes, reserved_shared_per_block_bytes;
	int sm_count;
	int64_t clock_rate_hz;
	int64_t memory_bandwidth_bytes_per_s;
	char name[128];
};

struct occ_launch {
	int threads_per_block;
	int registers_per_thread;
	int64_t shared_per_block_bytes;    /* static + dynamic */
	int64_t shared_config_bytes;       /* the SM carve-out in effect, 0: unknown */
};

enum occ_limiter {
	OCC_LIMIT_NONE = 0, /* full occupancy */
	OCC_LIMIT_WARPS,    /* block size: warps per SM */
	OCC_LIMIT_BLOCKS,   /* block size: too many small blocks for the per-SM block slots */
	OCC_LIMIT_REGISTERS,
	OCC_LIMIT_SHARED,
	OCC_LIMIT_INVALID,  /* the launch does not fit at all */
};

struct occ_result {
	double occupancy; /* active warps / max warps, 0..1 */
	int active_blocks, active_warps;
	int blocks_by_warps, blocks_by_blocks, blocks_by_regs, blocks_by_shared;
	enum occ_limiter limiter;
};

const char *occ_limiter__name(enum occ_limiter l);
/* Limits of a compute capability (used when the capture lacks a column).
 * Returns PROF_E_USAGE for an unknown architecture. */
int occ_gpu__defaults(struct occ_gpu *g, int major, int minor);
/* The first GPU in TARGET_INFO_GPU (or the one with id device_id), columns
 * read by name so nsys exports and perfkit captures both work. */
int occ_gpu__from_store(struct prof_store *s, int device_id, struct occ_gpu *g, struct prof_error *err);
int occ__compute(const struct occ_gpu *g, const struct occ_launch *l, struct occ_result *r);

#endif
