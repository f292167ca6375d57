/* test_chrome_trace.c - the Chrome/Perfetto trace export on a store written
 * with known values (export_store.h): categories, flows, tracks, time
 * arithmetic, projection of NVTX ranges onto streams, filters, escaping;
 * and on a second store of nested ranges on two threads, the projection's
 * spans and order. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome_trace.h"
#include "export_store.h"
#include "testutil.h"

static char *trace_text;

/* Export the store at path with opts into memory and parse it. */
static cJSON *export_path(const char *path, const struct chrome_options *opts)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	size_t len = 0;
	FILE *f;
	cJSON *doc;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	free(trace_text);
	f = open_memstream(&trace_text, &len);
	ck_assert_msg(chrome_trace__write(s, opts, f, &err) == 0, "%s", err.msg);
	fclose(f);
	prof_store__close(s);
	doc = cJSON_Parse(trace_text);
	ck_assert_msg(doc != NULL, "not JSON near: %.80s", cJSON_GetErrorPtr());
	return doc;
}

static cJSON *export_trace(bool gpu_info, const struct chrome_options *opts)
{
	const char *path = testutil_tmp_path("xs.sqlite");

	xs_write(path, gpu_info);
	return export_path(path, opts);
}

static cJSON *events(cJSON *doc)
{
	cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");

	ck_assert(cJSON_IsArray(ev));
	return ev;
}

static const char *str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	ck_assert_msg(cJSON_IsNumber(v), "no number %s", key);
	return v->valuedouble;
}

static int count_cat(cJSON *doc, const char *ph, const char *cat)
{
	int n = 0;
	cJSON *e;

	cJSON_ArrayForEach(e, events(doc))
		if (strcmp(str(e, "ph"), ph) == 0 && (!cat || strcmp(str(e, "cat"), cat) == 0))
			n++;
	return n;
}

static int count_launches(enum xs_gpu gpu)
{
	int n = 0;

	for (int i = 0; i < XS_NLAUNCH; i++)
		n += xs_launches[i].gpu == gpu;
	return n;
}

static cJSON *find_named(cJSON *doc, const char *cat, const char *name)
{
	cJSON *e;

	cJSON_ArrayForEach(e, events(doc))
		if (strcmp(str(e, "cat"), cat) == 0 && strcmp(str(e, "name"), name) == 0)
			return e;
	return NULL;
}

START_TEST(chrome_trace_is_json_with_capture_start_as_base_time)
{
	cJSON *doc = export_trace(false, NULL);

	/* the earliest event is the "outer" range at XS_T0 */
	ck_assert(num(doc, "baseTimeNanoseconds") == (double)XS_T0);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_trace_has_one_event_per_row_in_each_category)
{
	cJSON *doc = export_trace(false, NULL);
	int api_rt = 0, api_drv = 0;

	for (int i = 0; i < XS_NLAUNCH; i++) {
		if (xs_launches[i].domain == PROF_API_RUNTIME)
			api_rt++;
		else
			api_drv++;
	}
	/* + the orphan kernel */
	ck_assert_int_eq(count_cat(doc, "X", "kernel"), count_launches(XS_KERNEL) + 1);
	ck_assert_int_eq(count_cat(doc, "X", "gpu_memcpy"), count_launches(XS_MEMCPY));
	ck_assert_int_eq(count_cat(doc, "X", "gpu_memset"), count_launches(XS_MEMSET));
	ck_assert_int_eq(count_cat(doc, "X", "cuda_runtime"), api_rt);
	ck_assert_int_eq(count_cat(doc, "X", "cuda_driver"), api_drv);
	ck_assert_int_eq(count_cat(doc, "X", "user_annotation"), 2);
	ck_assert_int_eq(count_cat(doc, "i", "user_annotation"), 1);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_flow_joins_each_launching_call_to_its_gpu_work)
{
	cJSON *doc = export_trace(false, NULL);
	int launched = XS_NLAUNCH - count_launches(XS_NONE);
	int starts = 0, finishes = 0;
	cJSON *s, *f;

	cJSON_ArrayForEach(s, events(doc)) {
		if (strcmp(str(s, "ph"), "s") != 0)
			continue;
		starts++;
		ck_assert_str_eq(str(s, "cat"), "ac2g");
		ck_assert(num(s, "pid") == XS_PID && num(s, "tid") == XS_TID);
		/* the launch whose call starts where the flow does */
		int i = 0;
		while (i < XS_NLAUNCH && num(s, "ts") * 1000 != (double)xs_launches[i].api_start)
			i++;
		ck_assert(i < XS_NLAUNCH && xs_launches[i].gpu != XS_NONE);
		int matched = 0;
		cJSON_ArrayForEach(f, events(doc)) {
			if (strcmp(str(f, "ph"), "f") != 0 || num(f, "id") != num(s, "id"))
				continue;
			matched++;
			ck_assert_str_eq(str(f, "bp"), "e");
			ck_assert_str_eq(str(f, "cat"), "ac2g");
			ck_assert(num(f, "pid") == 0 && num(f, "tid") == xs_launches[i].stream);
			ck_assert(num(f, "ts") * 1000 == (double)xs_launches[i].gpu_start);
		}
		ck_assert_int_eq(matched, 1);
	}
	cJSON_ArrayForEach(f, events(doc))
		finishes += strcmp(str(f, "ph"), "f") == 0;
	ck_assert_int_eq(starts, launched);
	ck_assert_int_eq(finishes, launched);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_timestamps_are_microseconds_with_three_exact_decimals)
{
	const struct xs_launch *evil = &xs_launches[3];
	char want[96];
	cJSON *doc = export_trace(false, NULL);

	snprintf(want, sizeof want, "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld",
		 (long long)(evil->gpu_start / 1000), (long long)(evil->gpu_start % 1000),
		 (long long)((evil->gpu_end - evil->gpu_start) / 1000),
		 (long long)((evil->gpu_end - evil->gpu_start) % 1000));
	ck_assert_msg(strstr(trace_text, want), "missing %s", want);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_events_are_ordered_by_start_on_every_track)
{
	cJSON *doc = export_trace(false, NULL);
	struct track { double pid, tid, ts; } last[32];
	int ntracks = 0, checked = 0;
	cJSON *e;

	cJSON_ArrayForEach(e, events(doc)) {
		double pid, tid;
		int t;

		/* slices, instants and counters; a flow start is written next to
		 * its finish, out of time order, which the format allows */
		if (strcmp(str(e, "ph"), "M") == 0 || strcmp(str(e, "ph"), "s") == 0 ||
		    strcmp(str(e, "ph"), "f") == 0)
			continue;
		pid = num(e, "pid");
		tid = cJSON_GetObjectItem(e, "tid") ? num(e, "tid") : -1;
		for (t = 0; t < ntracks; t++)
			if (last[t].pid == pid && last[t].tid == tid)
				break;
		if (t == ntracks) {
			ck_assert(ntracks < 32);
			last[ntracks++] = (struct track){ pid, tid, num(e, "ts") };
			continue;
		}
		ck_assert_msg(num(e, "ts") >= last[t].ts, "track %g/%g goes back in time", pid, tid);
		last[t].ts = num(e, "ts");
		checked++;
	}
	ck_assert_int_gt(checked, XS_NLAUNCH);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_nvtx_range_spans_first_to_last_gpu_work_per_stream)
{
	cJSON *doc = export_trace(false, NULL);
	int expected = 0, found = 0;

	for (int r = 0; r < 2; r++) {
		for (int stream = 0; stream < 16; stream++) {
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			cJSON *e;

			for (int i = 0; i < XS_NLAUNCH; i++) {
				const struct xs_launch *l = &xs_launches[i];

				if (l->range != r || l->gpu == XS_NONE || l->stream != stream)
					continue;
				lo = l->gpu_start < lo ? l->gpu_start : lo;
				hi = l->gpu_end > hi ? l->gpu_end : hi;
			}
			if (lo == INT64_MAX)
				continue;
			expected++;
			cJSON_ArrayForEach(e, events(doc)) {
				if (strcmp(str(e, "cat"), "gpu_user_annotation") != 0 ||
				    strcmp(str(e, "name"), xs_range_name[r]) != 0 || num(e, "tid") != stream)
					continue;
				found++;
				ck_assert(num(e, "pid") == 0);
				ck_assert(num(e, "ts") * 1000 == (double)lo);
				ck_assert(num(e, "dur") * 1000 == (double)(hi - lo));
			}
		}
	}
	ck_assert_int_eq(found, expected);
	ck_assert_int_eq(count_cat(doc, "X", "gpu_user_annotation"), expected);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_counter_follows_device_memory_in_use)
{
	cJSON *doc = export_trace(false, NULL);
	int64_t level = 0;
	int i = 0;
	cJSON *e;

	cJSON_ArrayForEach(e, events(doc)) {
		if (strcmp(str(e, "ph"), "C") != 0)
			continue;
		ck_assert_int_lt(i, 3);
		level += xs_mem[i][2] ? -xs_mem[i][1] : xs_mem[i][1];
		ck_assert(num(e, "ts") * 1000 == (double)xs_mem[i][0]);
		ck_assert(num(cJSON_GetObjectItem(e, "args"), "bytes") == (double)level);
		i++;
	}
	ck_assert_int_eq(i, 3);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_time_window_keeps_events_overlapping_it)
{
	struct chrome_options o = { .filter = { .has_from = true, .from_ns = xs_range[1][0],
						.has_to = true, .to_ns = xs_range[1][1] } };
	cJSON *doc = export_trace(false, &o);
	int kernels = 0, api = 0;

	for (int i = 0; i < XS_NLAUNCH; i++) {
		const struct xs_launch *l = &xs_launches[i];

		kernels += l->gpu == XS_KERNEL && l->gpu_end > o.filter.from_ns &&
			   l->gpu_start < o.filter.to_ns;
		api += l->api_end > o.filter.from_ns && l->api_start < o.filter.to_ns;
	}
	ck_assert_int_eq(count_cat(doc, "X", "kernel"), kernels);
	ck_assert_int_eq(count_cat(doc, "X", "cuda_runtime") + count_cat(doc, "X", "cuda_driver"), api);
	ck_assert_int_eq(count_cat(doc, "s", NULL), count_cat(doc, "f", NULL));
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_range_filter_keeps_work_launched_inside_the_range)
{
	struct chrome_options o = { .filter = { .range_name = XS_SECOND } };
	cJSON *doc = export_trace(false, &o);
	int gpu = 0;

	for (int i = 0; i < XS_NLAUNCH; i++)
		gpu += xs_launches[i].range == 1 && xs_launches[i].gpu != XS_NONE;
	ck_assert_int_eq(count_cat(doc, "X", "kernel") + count_cat(doc, "X", "gpu_memset") +
			 count_cat(doc, "X", "gpu_memcpy"), gpu);
	ck_assert_ptr_nonnull(find_named(doc, "kernel", XS_EVIL));
	ck_assert_ptr_null(find_named(doc, "kernel", "kernelA"));
	ck_assert_int_eq(count_cat(doc, "s", NULL), gpu);
	ck_assert_int_eq(count_cat(doc, "f", NULL), gpu);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_range_filter_refuses_an_unknown_range)
{
	const char *path = testutil_tmp_path("xs.sqlite");
	struct chrome_options o = { .filter = { .range_name = "nope" } };
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	FILE *f = fopen("/dev/null", "w");

	xs_write(path, false);
	ck_assert(prof_store__open(path, &s, &err) == 0);
	ck_assert_int_eq(chrome_trace__write(s, &o, f, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "nope"));
	fclose(f);
	prof_store__close(s);
}
END_TEST

START_TEST(chrome_names_from_the_capture_are_json_escaped)
{
	cJSON *doc = export_trace(false, NULL);

	ck_assert_ptr_nonnull(find_named(doc, "kernel", XS_EVIL));
	ck_assert_ptr_nonnull(find_named(doc, "kernel", "kernel;B\nx"));
	ck_assert_ptr_nonnull(find_named(doc, "user_annotation", XS_OUTER));
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_api_names_drop_the_version_suffix)
{
	cJSON *doc = export_trace(false, NULL);

	ck_assert_ptr_nonnull(find_named(doc, "cuda_runtime", "cudaLaunchKernel"));
	ck_assert_ptr_null(find_named(doc, "cuda_runtime", "cudaLaunchKernel_v7000"));
	ck_assert_ptr_nonnull(find_named(doc, "cuda_driver", "cuLaunchKernel"));
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_size_warning_names_perfetto_and_the_narrowing_options)
{
	char *warn = NULL;
	size_t len = 0;
	FILE *wf = open_memstream(&warn, &len);
	struct chrome_options o = { .warn_bytes = 1, .warn = wf };
	cJSON *doc = export_trace(false, &o);

	fclose(wf);
	ck_assert_ptr_nonnull(strstr(warn, "--from/--to"));
	ck_assert_ptr_nonnull(strstr(warn, "--range"));
	ck_assert_ptr_nonnull(strstr(warn, "--format=perfetto"));
	free(warn);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_kernel_args_carry_theoretical_occupancy)
{
	cJSON *doc = export_trace(true, NULL);
	cJSON *k = find_named(doc, "kernel", "kernelA");
	cJSON *args = cJSON_GetObjectItem(k, "args");

	/* 256 threads x 32 registers = 8192 per block: 8 blocks = 64 warps, the
	 * H100's maximum, no shared memory: 100 % */
	ck_assert(num(args, "est. achieved occupancy %") == 100);
	ck_assert(num(args, "registers per thread") == 32);
	ck_assert(num(args, "correlation") == 1);
	ck_assert(cJSON_GetArraySize(cJSON_GetObjectItem(args, "grid")) == 3);
	cJSON_Delete(doc);
}
END_TEST

START_TEST(chrome_copy_args_carry_bytes_and_bandwidth)
{
	cJSON *doc = export_trace(false, NULL);
	const struct xs_launch *l = &xs_launches[2];
	cJSON *m = find_named(doc, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)");
	cJSON *args = cJSON_GetObjectItem(m, "args");
	double gbps = (double)XS_MEMCPY_BYTES / (double)(l->gpu_end - l->gpu_start);

	ck_assert_ptr_nonnull(m);
	ck_assert(num(args, "bytes") == XS_MEMCPY_BYTES);
	ck_assert_double_eq_tol(num(args, "memory bandwidth (GB/s)"), gbps, 0.001);
	cJSON_Delete(doc);
}
END_TEST

/* ---- nested ranges on two threads ---------------------------------------- */

#define NR_PID 200
#define NR_T0 2000000000LL

/* Ranges relative to NR_T0; thread 0 or 1 of process NR_PID. */
static const struct nr_range {
	const char *name;
	int type;
	int thread;
	int64_t start, end;
} nr_ranges[] = {
	{ "a outer", PROF_NVTX_PUSHPOP, 0, 0, 10000 },
	{ "a inner", PROF_NVTX_PUSHPOP, 0, 1000, 4000 },
	{ "a innermost", PROF_NVTX_PUSHPOP, 0, 3000, 3500 },
	{ "a next", PROF_NVTX_PUSHPOP, 0, 10000, 20000 },
	{ "a async", PROF_NVTX_STARTEND, 0, 3000, 15000 },
	{ "b outer", PROF_NVTX_PUSHPOP, 1, 500, 18000 },
	{ "b idle", PROF_NVTX_PUSHPOP, 1, 600, 700 },
};
#define NR_NRANGES (int)(sizeof nr_ranges / sizeof nr_ranges[0])

/* Launches relative to NR_T0. Calls at a range's start are inside it, calls
 * at its end are not; thread 1's calls fall inside thread 0's ranges in time
 * and must not count for them. */
static const struct nr_launch {
	int thread;
	enum prof_api_domain domain;
	int64_t api_start;
	enum xs_gpu gpu;
	int32_t device, stream;
	int64_t gpu_start, gpu_end;
} nr_launches[] = {
	{ 0, PROF_API_RUNTIME, 1000, XS_KERNEL, 0, 3, 50000, 51000 },
	{ 0, PROF_API_RUNTIME, 3000, XS_MEMCPY, 0, 5, 51000, 54000 },
	{ 0, PROF_API_DRIVER, 3400, XS_KERNEL, 1, 3, 52000, 53000 },
	{ 0, PROF_API_RUNTIME, 4000, XS_KERNEL, 0, 3, 54000, 56000 },
	{ 0, PROF_API_RUNTIME, 9999, XS_KERNEL, 0, 3, 57000, 58000 },
	{ 0, PROF_API_RUNTIME, 10000, XS_KERNEL, 0, 5, 58000, 59000 },
	{ 0, PROF_API_RUNTIME, 16000, XS_KERNEL, 0, 3, 60000, 61000 },
	{ 1, PROF_API_RUNTIME, 2000, XS_KERNEL, 0, 3, 51000, 52000 },
	{ 1, PROF_API_DRIVER, 12000, XS_KERNEL, 0, 5, 59000, 62000 },
	{ 1, PROF_API_RUNTIME, 18000, XS_KERNEL, 0, 3, 63000, 64000 },
};
#define NR_NLAUNCH (int)(sizeof nr_launches / sizeof nr_launches[0])

static int64_t nr_tid(int thread)
{
	return prof_global_tid(NR_PID, (uint32_t)(NR_PID + 1 + thread));
}

static const char *nr_write(void)
{
	const char *path = testutil_tmp_path("nested_ranges.sqlite");
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	int rc = 0;

	ck_assert_msg(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err) == 0, "%s", err.msg);
	for (int i = 0; i < NR_NRANGES; i++) {
		const struct nr_range *r = &nr_ranges[i];
		struct prof_nvtx_event n = {
			.start_ns = NR_T0 + r->start, .end_ns = NR_T0 + r->end, .event_type = r->type,
			.global_tid = nr_tid(r->thread), .end_global_tid = nr_tid(r->thread),
			.text_id = prof_writer__string(w, r->name),
		};
		rc |= prof_writer__nvtx(w, &n);
	}
	for (int i = 0; i < NR_NLAUNCH; i++) {
		const struct nr_launch *l = &nr_launches[i];
		struct prof_api_call a = {
			.start_ns = NR_T0 + l->api_start, .end_ns = NR_T0 + l->api_start + 500,
			.global_tid = nr_tid(l->thread), .correlation_id = i + 1,
			.name_id = prof_writer__string(w, "launch"),
		};
		rc |= prof_writer__api(w, l->domain, &a);
		if (l->gpu == XS_KERNEL) {
			struct prof_kernel k = {
				.start_ns = NR_T0 + l->gpu_start, .end_ns = NR_T0 + l->gpu_end,
				.device_id = l->device, .stream_id = l->stream, .correlation_id = i + 1,
				.global_pid = prof_global_pid(NR_PID),
				.demangled_name = prof_writer__string(w, "k"),
				.grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32, .block_y = 1,
				.block_z = 1,
			};
			k.short_name = k.demangled_name;
			rc |= prof_writer__kernel(w, &k);
		} else {
			struct prof_memcpy m = {
				.start_ns = NR_T0 + l->gpu_start, .end_ns = NR_T0 + l->gpu_end,
				.device_id = l->device, .stream_id = l->stream, .correlation_id = i + 1,
				.global_pid = prof_global_pid(NR_PID), .bytes = 4096,
				.copy_kind = PROF_COPY_HTOD, .src_kind = PROF_MEM_PINNED,
				.dst_kind = PROF_MEM_DEVICE,
			};
			rc |= prof_writer__memcpy(w, &m);
		}
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	return path;
}

/* An event's ts or dur in ns. */
static int64_t ns_of(const cJSON *e, const char *key)
{
	return llround(num(e, key) * 1000.0);
}

START_TEST(chrome_nvtx_projection_spans_each_ranges_own_thread_launches_per_stream)
{
	cJSON *doc = export_path(nr_write(), NULL);
	int64_t base = (int64_t)num(doc, "baseTimeNanoseconds");
	int expected = 0;

	for (int r = 0; r < NR_NRANGES; r++) {
		for (int dev = 0; dev < 2; dev++) {
			for (int stream = 0; stream < 8; stream++) {
				int64_t lo = INT64_MAX, hi = INT64_MIN;
				int found = 0;
				cJSON *e;

				for (int i = 0; i < NR_NLAUNCH; i++) {
					const struct nr_launch *l = &nr_launches[i];

					if (l->thread != nr_ranges[r].thread || l->device != dev ||
					    l->stream != stream || l->api_start < nr_ranges[r].start ||
					    l->api_start >= nr_ranges[r].end)
						continue;
					lo = l->gpu_start < lo ? l->gpu_start : lo;
					hi = l->gpu_end > hi ? l->gpu_end : hi;
				}
				if (lo == INT64_MAX)
					continue;
				expected++;
				cJSON_ArrayForEach(e, events(doc)) {
					if (strcmp(str(e, "cat"), "gpu_user_annotation") != 0 ||
					    strcmp(str(e, "name"), nr_ranges[r].name) != 0 ||
					    num(e, "pid") != dev || num(e, "tid") != stream)
						continue;
					found++;
					ck_assert_int_eq(ns_of(e, "ts") + base, NR_T0 + lo);
					ck_assert_int_eq(ns_of(e, "dur"), hi - lo);
				}
				ck_assert_msg(found == 1, "%s on %d/%d: %d events", nr_ranges[r].name,
					      dev, stream, found);
			}
		}
	}
	ck_assert_int_eq(count_cat(doc, "X", "gpu_user_annotation"), expected);
	ck_assert_ptr_null(find_named(doc, "gpu_user_annotation", "b idle"));
	cJSON_Delete(doc);
}
END_TEST

/* Projected ranges merge with the GPU work by start; of two starting
 * together the longer, the enclosing one, comes first. */
START_TEST(chrome_nvtx_projections_are_ordered_by_start_longer_first)
{
	cJSON *doc = export_path(nr_write(), NULL);
	double last_ts = -1, last_dur = 0;
	int shared_starts = 0;
	cJSON *e;

	cJSON_ArrayForEach(e, events(doc)) {
		if (strcmp(str(e, "cat"), "gpu_user_annotation") != 0)
			continue;
		ck_assert(num(e, "ts") >= last_ts);
		if (num(e, "ts") == last_ts) {
			ck_assert(num(e, "dur") <= last_dur);
			shared_starts++;
		}
		last_ts = num(e, "ts");
		last_dur = num(e, "dur");
	}
	/* "a outer" and "a inner" both start with the launch at 1000 */
	ck_assert_int_gt(shared_starts, 0);
	cJSON_Delete(doc);
}
END_TEST

static void teardown(void)
{
	free(trace_text);
	trace_text = NULL;
}

static Suite *suite(void)
{
	Suite *s = suite_create("chrome_trace");
	TCase *tc = tcase_create("chrome_trace");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, chrome_trace_is_json_with_capture_start_as_base_time);
	tcase_add_test(tc, chrome_trace_has_one_event_per_row_in_each_category);
	tcase_add_test(tc, chrome_flow_joins_each_launching_call_to_its_gpu_work);
	tcase_add_test(tc, chrome_timestamps_are_microseconds_with_three_exact_decimals);
	tcase_add_test(tc, chrome_events_are_ordered_by_start_on_every_track);
	tcase_add_test(tc, chrome_nvtx_range_spans_first_to_last_gpu_work_per_stream);
	tcase_add_test(tc, chrome_counter_follows_device_memory_in_use);
	tcase_add_test(tc, chrome_time_window_keeps_events_overlapping_it);
	tcase_add_test(tc, chrome_range_filter_keeps_work_launched_inside_the_range);
	tcase_add_test(tc, chrome_range_filter_refuses_an_unknown_range);
	tcase_add_test(tc, chrome_names_from_the_capture_are_json_escaped);
	tcase_add_test(tc, chrome_api_names_drop_the_version_suffix);
	tcase_add_test(tc, chrome_size_warning_names_perfetto_and_the_narrowing_options);
	tcase_add_test(tc, chrome_kernel_args_carry_theoretical_occupancy);
	tcase_add_test(tc, chrome_copy_args_carry_bytes_and_bandwidth);
	tcase_add_test(tc, chrome_nvtx_projection_spans_each_ranges_own_thread_launches_per_stream);
	tcase_add_test(tc, chrome_nvtx_projections_are_ordered_by_start_longer_first);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
