/* diff_fixture.h - writing small stores with known kernels, copies, NVTX
 * ranges and allocations through the writer API, for the diff, baseline and
 * gate tests. Each helper lays its records end to end on one timeline, so a
 * test knows every count, total and median it wrote, and fx_steps lays out
 * a loop whose iterations the loop finder counts. */
#ifndef PERFKIT_DIFF_FIXTURE_H
#define PERFKIT_DIFF_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "prof/store.h"

struct fx {
	struct prof_writer *w;
	int64_t t_ns;
	int32_t corr;
};

/* A store for program (the PERFKIT_META command) on a GPU named gpu. */
static inline void fx_open(struct fx *f, const char *path, const char *command, const char *gpu)
{
	struct prof_error err = { 0 };
	struct prof_gpu_info g = { 0 };

	memset(f, 0, sizeof *f);
	f->t_ns = 1000000000;
	ck_assert_msg(prof_writer__create(path, PROF_WRITER_OVERWRITE, &f->w, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(prof_writer__meta(f->w, "command", command), 0);
	g.id = 0;
	g.name = gpu;
	ck_assert_int_eq(prof_writer__gpu(f->w, &g), 0);
}

/* count launches of name with a 1-D grid and block, each dur_ns long. */
static inline void fx_kernels(struct fx *f, const char *name, int grid, int block, int count,
			      int64_t dur_ns)
{
	int64_t id = prof_writer__string(f->w, name);

	for (int i = 0; i < count; i++) {
		struct prof_kernel k = { 0 };

		k.start_ns = f->t_ns;
		k.end_ns = f->t_ns + dur_ns;
		k.correlation_id = ++f->corr;
		k.demangled_name = id;
		k.short_name = id;
		k.grid_x = grid;
		k.grid_y = k.grid_z = 1;
		k.block_x = block;
		k.block_y = k.block_z = 1;
		k.stream_id = 7;
		ck_assert_int_eq(prof_writer__kernel(f->w, &k), 0);
		f->t_ns = k.end_ns + 10;
	}
}

/* One kernel of a step: its name and duration. */
struct fx_step {
	const char *name;
	int64_t ns;
};

/* A loop of `steps` steps, each launching every kernel of k (up to a NULL
 * name) once, in order: the loop finder marks the iterations by the first. */
static inline void fx_steps(struct fx *f, int steps, const struct fx_step *k)
{
	for (int s = 0; s < steps; s++)
		for (const struct fx_step *x = k; x->name; x++)
			fx_kernels(f, x->name, 128, 256, 1, x->ns);
}

static inline void fx_copies(struct fx *f, int copy_kind, int src_kind, int dst_kind, int count,
			     int64_t dur_ns, int64_t bytes)
{
	for (int i = 0; i < count; i++) {
		struct prof_memcpy m = { 0 };

		m.start_ns = f->t_ns;
		m.end_ns = f->t_ns + dur_ns;
		m.correlation_id = ++f->corr;
		m.copy_kind = copy_kind;
		m.src_kind = src_kind;
		m.dst_kind = dst_kind;
		m.bytes = bytes;
		ck_assert_int_eq(prof_writer__memcpy(f->w, &m), 0);
		f->t_ns = m.end_ns + 10;
	}
}

static inline void fx_ranges(struct fx *f, const char *name, int count, int64_t dur_ns)
{
	int64_t id = prof_writer__string(f->w, name);

	for (int i = 0; i < count; i++) {
		struct prof_nvtx_event e = { 0 };

		e.start_ns = f->t_ns;
		e.end_ns = f->t_ns + dur_ns;
		e.event_type = PROF_NVTX_PUSHPOP;
		e.text_id = id;
		e.global_tid = prof_global_tid(100, 100);
		e.end_global_tid = e.global_tid;
		ck_assert_int_eq(prof_writer__nvtx(f->w, &e), 0);
		f->t_ns = e.end_ns + 10;
	}
}

static inline void fx_allocs(struct fx *f, int count)
{
	for (int i = 0; i < count; i++) {
		struct prof_memory_event e = { 0 };

		e.start_ns = f->t_ns++;
		e.address = 0x10000 * (uint64_t)(i + 1);
		e.bytes = 4096;
		e.mem_kind = PROF_MEM_DEVICE;
		e.operation = 0;
		ck_assert_int_eq(prof_writer__memory(f->w, &e), 0);
	}
}

/* Finish the store; wall_ns >= 0 is recorded as the run's duration. */
static inline void fx_close(struct fx *f, int64_t wall_ns)
{
	struct prof_error err = { 0 };
	char buf[32];

	if (wall_ns >= 0) {
		snprintf(buf, sizeof buf, "%lld", (long long)wall_ns);
		ck_assert_int_eq(prof_writer__meta(f->w, "duration_ns", buf), 0);
	}
	ck_assert_msg(prof_writer__finish(f->w, &err) == 0, "%s", err.msg);
	f->w = NULL;
}

#endif
