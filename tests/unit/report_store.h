/* report_store.h - helpers for report unit tests: write small stores through
 * the writer API, and compute the statistics a report should print from the
 * values the test wrote (sorting and two-pass sums, independent of the
 * streaming code under test). */
#ifndef PERFKIT_REPORT_STORE_H
#define PERFKIT_REPORT_STORE_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "testutil.h"

struct ref_stats {
	int64_t n, total, min, max;
	double mean, median, stddev;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static inline struct ref_stats ref_stats(const int64_t *v, int n)
{
	struct ref_stats r = { .n = n };
	int64_t *s = malloc(sizeof *s * (size_t)n);
	double ss = 0;

	memcpy(s, v, sizeof *s * (size_t)n);
	qsort(s, (size_t)n, sizeof *s, cmp_i64);
	for (int i = 0; i < n; i++)
		r.total += s[i];
	r.min = s[0];
	r.max = s[n - 1];
	r.mean = (double)r.total / n;
	r.median = n % 2 ? (double)s[n / 2] : ((double)s[n / 2 - 1] + (double)s[n / 2]) / 2.0;
	for (int i = 0; i < n; i++)
		ss += ((double)s[i] - r.mean) * ((double)s[i] - r.mean);
	r.stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
	free(s);
	return r;
}

static char store_path[512];

static inline struct prof_writer *store_new(const char *name)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };

	snprintf(store_path, sizeof store_path, "%s", testutil_tmp_path(name));
	ck_assert_msg(prof_writer__create(store_path, PROF_WRITER_OVERWRITE, &w, &err) == 0,
		      "create %s: %s", store_path, err.msg);
	return w;
}

static inline struct prof_store *store_finish(struct prof_writer *w)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_writer__finish(w, &err) == 0, "finish: %s", err.msg);
	ck_assert_msg(prof_store__open(store_path, &s, &err) == 0, "open: %s", err.msg);
	return s;
}

static inline void add_kernel(struct prof_writer *w, const char *name, int64_t start_ns,
			      int64_t end_ns, int32_t corr, uint32_t pid)
{
	struct prof_kernel k = {
		.start_ns = start_ns, .end_ns = end_ns, .correlation_id = corr,
		.global_pid = prof_global_pid(pid), .stream_id = 7,
		.grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1,
	};

	k.demangled_name = k.short_name = prof_writer__string(w, name);
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
}

static inline void add_api(struct prof_writer *w, enum prof_api_domain dom, const char *name,
			   int64_t start_ns, int64_t end_ns, int32_t corr, int64_t global_tid)
{
	struct prof_api_call a = {
		.start_ns = start_ns, .end_ns = end_ns, .global_tid = global_tid,
		.correlation_id = corr, .name_id = prof_writer__string(w, name),
	};

	ck_assert_int_eq(prof_writer__api(w, dom, &a), 0);
}

static inline void add_copy(struct prof_writer *w, int kind, int src, int dst, int64_t bytes,
			    int64_t start_ns, int64_t end_ns, int32_t device)
{
	struct prof_memcpy m = {
		.start_ns = start_ns, .end_ns = end_ns, .bytes = bytes, .copy_kind = kind,
		.src_kind = src, .dst_kind = dst, .device_id = device, .stream_id = 7,
	};

	ck_assert_int_eq(prof_writer__memcpy(w, &m), 0);
}

static inline void add_memset(struct prof_writer *w, int64_t bytes, int64_t start_ns,
			      int64_t end_ns, int32_t device)
{
	struct prof_memset m = {
		.start_ns = start_ns, .end_ns = end_ns, .bytes = bytes, .device_id = device,
		.mem_kind = PROF_MEM_DEVICE, .stream_id = 7,
	};

	ck_assert_int_eq(prof_writer__memset(w, &m), 0);
}

/* A push/pop range (text_id) or start/end range on a thread. */
static inline void add_range(struct prof_writer *w, int type, const char *name, int64_t start_ns,
			     int64_t end_ns, int64_t global_tid)
{
	struct prof_nvtx_event e = {
		.start_ns = start_ns, .end_ns = end_ns, .event_type = type,
		.global_tid = global_tid, .end_global_tid = global_tid,
		.text_id = prof_writer__string(w, name),
	};

	ck_assert_int_eq(prof_writer__nvtx(w, &e), 0);
}

#endif
