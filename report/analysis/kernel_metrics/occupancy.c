/* occupancy.c - theoretical occupancy and its limiter (see occupancy.h). */
#include "occupancy.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "prof/tables.h"

const char *occ_limiter__name(enum occ_limiter l)
{
	switch (l) {
	case OCC_LIMIT_NONE: return "none";
	case OCC_LIMIT_WARPS: return "block size (warps per SM)";
	case OCC_LIMIT_BLOCKS: return "block size (blocks per SM)";
	case OCC_LIMIT_REGISTERS: return "registers";
	case OCC_LIMIT_SHARED: return "shared memory";
	case OCC_LIMIT_INVALID: return "does not fit";
	}
	return "?";
}

int occ_gpu__defaults(struct occ_gpu *g, int major, int minor)
{
	memset(g, 0, sizeof *g);
	g->compute_major = major;
	g->compute_minor = minor;
	g->warp_size = 32;
	g->regs_per_sm = 65536;
	g->regs_per_block = 65536;
	g->max_threads_per_block = 1024;
	g->reserved_shared_per_block_bytes = major >= 8 ? 1024 : 0;
	/* a capture's compute capability is outside input: one that no GPU
	 * has is unknown, before it can overflow the switch's key */
	if (major < 0 || major > 99 || minor < 0 || minor > 9)
		return PROF_E_USAGE;
	switch (major * 10 + minor) {
	case 70: case 72:
		g->max_warps_per_sm = 64, g->max_blocks_per_sm = 32;
		g->shared_per_sm_bytes = 98304, g->shared_per_block_bytes = 98304;
		break;
	case 75:
		g->max_warps_per_sm = 32, g->max_blocks_per_sm = 16;
		g->shared_per_sm_bytes = 65536, g->shared_per_block_bytes = 65536;
		break;
	case 80: case 87:
		g->max_warps_per_sm = 64, g->max_blocks_per_sm = 32;
		g->shared_per_sm_bytes = 167936, g->shared_per_block_bytes = 166912;
		break;
	case 86:
		g->max_warps_per_sm = 48, g->max_blocks_per_sm = 16;
		g->shared_per_sm_bytes = 102400, g->shared_per_block_bytes = 101376;
		break;
	case 89:
		g->max_warps_per_sm = 48, g->max_blocks_per_sm = 24;
		g->shared_per_sm_bytes = 102400, g->shared_per_block_bytes = 101376;
		break;
	case 90: case 100: case 103:
		g->max_warps_per_sm = 64, g->max_blocks_per_sm = 32;
		g->shared_per_sm_bytes = 233472, g->shared_per_block_bytes = 232448;
		break;
	case 120:
		g->max_warps_per_sm = 48, g->max_blocks_per_sm = 32;
		g->shared_per_sm_bytes = 102400, g->shared_per_block_bytes = 101376;
		break;
	default:
		return PROF_E_USAGE;
	}
	return 0;
}

static void lower(char *dst, size_t cap, const char *s)
{
	size_t i;
	for (i = 0; s[i] && i + 1 < cap; i++)
		dst[i] = (char)tolower((unsigned char)s[i]);
	dst[i] = 0;
}

static bool has(const char *s, const char *a) { return strstr(s, a) != NULL; }

int occ_gpu__from_store(struct prof_store *s, int device_id, struct occ_gpu *g, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc, major = 0, minor = 0;
	struct occ_gpu seen = { 0 };
	char col[96];

	memset(g, 0, sizeof *g);
	if (!prof_store__has_table(s, PROF_T_GPU))
		return prof_error__set(err, PROF_E_NOT_CAPTURE, "%s: no " PROF_T_GPU " table",
				       prof_store__path(s));
	rc = prof_cursor__open(s, "SELECT * FROM " PROF_T_GPU " ORDER BY (id = ?1) DESC, id LIMIT 1", &c,
			       err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, device_id);
	rc = prof_cursor__next(c, err);
	if (rc != 1) {
		prof_cursor__close(c);
		return rc < 0 ? rc : prof_error__set(err, PROF_E_NOT_CAPTURE, "%s: " PROF_T_GPU " is empty",
						     prof_store__path(s));
	}
	for (int i = 0; i < prof_cursor__columns(c); i++) {
		int64_t v = prof_cursor__is_null(c, i) ? 0 : prof_cursor__int64(c, i);

		lower(col, sizeof col, prof_cursor__column_name(c, i));
		if (!strcmp(col, "computemajor"))
			major = (int)v;
		else if (!strcmp(col, "computeminor"))
			minor = (int)v;
		else if (!strcmp(col, "smcount"))
			seen.sm_count = (int)v;
		else if (!strcmp(col, "clockrate"))
			seen.clock_rate_hz = v;
		else if (!strcmp(col, "memorybandwidth"))
			seen.memory_bandwidth_bytes_per_s = v;
		else if (!strcmp(col, "name") && prof_cursor__text(c, i))
			snprintf(seen.name, sizeof seen.name, "%s", prof_cursor__text(c, i));
		else if (has(col, "warpspersm") || has(col, "warpspermultiprocessor"))
			seen.max_warps_per_sm = (int)v;
		else if (has(col, "blockspersm") || has(col, "blockspermultiprocessor"))
			seen.max_blocks_per_sm = (int)v;
		else if (has(col, "reg") && (has(col, "persm") || has(col, "permultiprocessor")))
			seen.regs_per_sm = (int)v;
		else if (has(col, "reg") && has(col, "perblock"))
			seen.regs_per_block = (int)v;
		else if ((has(col, "shmem") || has(col, "shared")) &&
			 (has(col, "persm") || has(col, "permultiprocessor")))
			seen.shared_per_sm_bytes = v;
		else if ((has(col, "shmem") || has(col, "shared")) && has(col, "perblock") &&
			 (has(col, "optin") || !seen.shared_per_block_bytes))
			seen.shared_per_block_bytes = v;
		else if (has(col, "threadsperblock"))
			seen.max_threads_per_block = (int)v;
	}
	prof_cursor__close(c);
	if (occ_gpu__defaults(g, major, minor))
		return prof_error__set(err, PROF_E_USAGE, "%s: unknown GPU architecture sm_%d%d",
				       prof_store__path(s), major, minor);
	/* what the capture says wins over the table of defaults */
	if (seen.max_warps_per_sm > 0) g->max_warps_per_sm = seen.max_warps_per_sm;
	if (seen.max_blocks_per_sm > 0) g->max_blocks_per_sm = seen.max_blocks_per_sm;
	if (seen.regs_per_sm > 0) g->regs_per_sm = seen.regs_per_sm;
	if (seen.regs_per_block > 0) g->regs_per_block = seen.regs_per_block;
	if (seen.shared_per_sm_bytes > 0) g->shared_per_sm_bytes = seen.shared_per_sm_bytes;
	if (seen.shared_per_block_bytes > 0) g->shared_per_block_bytes = seen.shared_per_block_bytes;
	if (seen.max_threads_per_block > 0) g->max_threads_per_block = seen.max_threads_per_block;
	g->sm_count = seen.sm_count;
	g->clock_rate_hz = seen.clock_rate_hz;
	g->memory_bandwidth_bytes_per_s = seen.memory_bandwidth_bytes_per_s;
	memcpy(g->name, seen.name, sizeof g->name);
	return 0;
}

static int64_t round_up(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

/* no GPU has a terabyte of shared memory per block */
#define OCC_SHARED_PAST_ANY_GPU ((int64_t)1 << 40)

/* a count of blocks too large for an int is as good as unlimited */
static int blocks_of(int64_t n) { return n > INT_MAX ? INT_MAX : (int)n; }

int occ__compute(const struct occ_gpu *g, const struct occ_launch *l, struct occ_result *r)
{
	int warp = g->warp_size > 0 ? g->warp_size : 32;
	int64_t warps_per_block, regs_per_warp, smem_sm, smem_block;
	int min;

	memset(r, 0, sizeof *r);
	if (l->threads_per_block <= 0 || g->max_warps_per_sm <= 0)
		return PROF_E_USAGE;
	/* a recorded launch did fit; only nonsense input is refused (the
	 * arithmetic below is 64-bit because a capture is outside input) */
	if (l->registers_per_thread > 255 || l->registers_per_thread < 0 ||
	    l->shared_per_block_bytes < 0 || l->shared_per_block_bytes > OCC_SHARED_PAST_ANY_GPU) {
		r->limiter = OCC_LIMIT_INVALID;
		return 0;
	}
	warps_per_block = ((int64_t)l->threads_per_block + warp - 1) / warp;
	r->blocks_by_warps = blocks_of(g->max_warps_per_sm / warps_per_block);
	r->blocks_by_blocks = g->max_blocks_per_sm;

	/* registers go to warps in 256-register units, per sub-partition (4) */
	regs_per_warp = round_up((int64_t)l->registers_per_thread * warp, 256);
	if (regs_per_warp == 0) {
		r->blocks_by_regs = INT_MAX;
	} else if (regs_per_warp * round_up(warps_per_block, 4) > g->regs_per_block) {
		r->blocks_by_regs = 0;
	} else {
		int64_t warps_per_partition = (g->regs_per_sm / 4) / regs_per_warp;
		r->blocks_by_regs = blocks_of(warps_per_partition * 4 / warps_per_block);
	}

	smem_sm = l->shared_config_bytes > 0 ? l->shared_config_bytes : g->shared_per_sm_bytes;
	smem_block = l->shared_per_block_bytes + g->reserved_shared_per_block_bytes;
	smem_block = (smem_block + 127) / 128 * 128;
	r->blocks_by_shared = smem_block > 0 ? blocks_of(smem_sm / smem_block) : INT_MAX;

	min = r->blocks_by_warps;
	r->limiter = OCC_LIMIT_WARPS;
	if (r->blocks_by_blocks < min)
		min = r->blocks_by_blocks, r->limiter = OCC_LIMIT_BLOCKS;
	if (r->blocks_by_regs < min)
		min = r->blocks_by_regs, r->limiter = OCC_LIMIT_REGISTERS;
	if (r->blocks_by_shared < min)
		min = r->blocks_by_shared, r->limiter = OCC_LIMIT_SHARED;
	if (min <= 0) {
		r->limiter = OCC_LIMIT_INVALID;
		return 0;
	}
	r->active_blocks = min;
	r->active_warps = min * warps_per_block > g->max_warps_per_sm
		? g->max_warps_per_sm : (int)(min * warps_per_block);
	r->occupancy = (double)r->active_warps / g->max_warps_per_sm;
	if (r->active_warps == g->max_warps_per_sm)
		r->limiter = OCC_LIMIT_NONE;
	return 0;
}
