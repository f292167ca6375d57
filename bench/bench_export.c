/* bench_export.c - throughput and peak memory of the whole-capture exports
 * (Chrome JSON trace, native Perfetto trace, folded stacks, HTML report).
 *
 *   bench_export --write N FILE        write a store of N kernel launches
 *   bench_export [--header] FILE       export FILE in each format, one row each
 *
 * The store is written through the writer API the way a training loop looks:
 * one thread launching N kernels (about 200 names, a few dominant) through
 * cudaLaunchKernel, an NVTX "step" range per 1000 launches holding "forward"
 * and "backward", a copy every 100 launches (pinned and pageable, 4 KiB to
 * 16 MiB) and an allocation and free every 1000.
 *
 * Each export runs in a fresh process (this program, exec'd with
 * --export FORMAT FILE) so its peak RSS is its own; output goes to a byte
 * counter, not a disk. Rows: format, kernels in the store, store MB,
 * seconds (wall), CPU seconds (user + system: steadier than wall time on a
 * shared machine), store MB/s, output MB, peak RSS MB, and for the Perfetto
 * trace its size and time as a share of the Chrome trace's (x_chrome). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "export/export.h"
#include "prof/store.h"
#include "prof/tables.h"

#define PID 4242u
#define TID 4243u
#define LAUNCHES_PER_STEP 1000

static int fail(const char *what, const char *msg)
{
	fprintf(stderr, "bench_export: %s: %s\n", what, msg);
	return 1;
}

static int add_range(struct prof_writer *w, const char *name, int64_t start, int64_t end)
{
	struct prof_nvtx_event e = {
		.start_ns = start, .end_ns = end, .event_type = PROF_NVTX_PUSHPOP,
		.global_tid = prof_global_tid(PID, TID), .end_global_tid = prof_global_tid(PID, TID),
		.text_id = prof_writer__string(w, name),
	};

	return prof_writer__nvtx(w, &e);
}

static int write_store(long long n, const char *path)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	int64_t t = 1700000000000000000LL, gpu_free = t, step_start = t, launch_name;
	int64_t names[200];
	int32_t corr = 1;
	int rc = 0;

	if (prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err))
		return fail(path, err.msg);
	for (int i = 0; i < 200; i++) {
		char name[128];

		snprintf(name, sizeof name, "void kernels::op_%d<float, %d>(const float*, float*, int, "
			 "kernels::Params)", i, 32 << (i % 4));
		names[i] = prof_writer__string(w, name);
	}
	launch_name = prof_writer__string(w, "cudaLaunchKernel_v7000");
	prof_writer__process(w, PID, "train");
	prof_writer__thread_name(w, prof_global_tid(PID, TID), "main");
	prof_writer__meta(w, "start_ns", "1700000000000000000");
	for (long long r = 0; r < n && rc == 0; r++) {
		uint64_t x = bench_rnd();
		int name = (x >> 16) & 3 ? (int)(x % 16) : (int)(x % 200);
		int64_t dur = 1000 + (int64_t)((x >> 20) % 4000) * (1 + (int64_t)((x >> 40) % 20));
		struct prof_api_call a = {
			.start_ns = t, .end_ns = t + 2500, .global_tid = prof_global_tid(PID, TID),
			.correlation_id = corr, .name_id = launch_name,
		};
		struct prof_kernel k = {
			.start_ns = gpu_free > t + 3000 ? gpu_free : t + 3000, .stream_id = 7,
			.correlation_id = corr, .global_pid = prof_global_pid(PID),
			.demangled_name = names[name], .short_name = names[name],
			.registers_per_thread = 32, .grid_x = 1 << (name % 12), .grid_y = 1, .grid_z = 1,
			.block_x = 256, .block_y = 1, .block_z = 1,
		};

		k.end_ns = k.start_ns + dur;
		gpu_free = k.end_ns;
		rc |= prof_writer__api(w, PROF_API_RUNTIME, &a);
		rc |= prof_writer__kernel(w, &k);
		corr++;
		t += 3000 + (int64_t)((x >> 48) % 2000);
		if (r % 100 == 99) {
			int64_t bytes = 4096LL << ((x >> 8) % 13);
			struct prof_api_call c = {
				.start_ns = t, .end_ns = t + 1000 + bytes / 10000,
				.global_tid = prof_global_tid(PID, TID), .correlation_id = corr,
				.name_id = prof_writer__string(w, "cudaMemcpyAsync_v3020"),
			};
			struct prof_memcpy m = {
				.start_ns = gpu_free, .end_ns = gpu_free + 1000 + bytes / ((x & 1) ? 20 : 8),
				.stream_id = 7, .correlation_id = corr, .global_pid = prof_global_pid(PID),
				.bytes = bytes, .copy_kind = PROF_COPY_HTOD,
				.src_kind = (x & 1) ? PROF_MEM_PINNED : PROF_MEM_PAGEABLE,
				.dst_kind = PROF_MEM_DEVICE,
			};
			rc |= prof_writer__api(w, PROF_API_RUNTIME, &c);
			rc |= prof_writer__memcpy(w, &m);
			gpu_free = m.end_ns;
			corr++;
			t = c.end_ns + 500;
		}
		if (r % LAUNCHES_PER_STEP == LAUNCHES_PER_STEP - 1 || r == n - 1) {
			int64_t mid = step_start + (t - step_start) / 2;
			struct prof_memory_event alloc = {
				.start_ns = step_start, .global_pid = prof_global_pid(PID),
				.bytes = 64LL << 20, .mem_kind = PROF_MEM_DEVICE, .address = 0x10000,
			};
			struct prof_memory_event release = alloc;

			release.start_ns = t;
			release.operation = 1;
			rc |= add_range(w, "step", step_start, t + 1);
			rc |= add_range(w, "forward", step_start, mid);
			rc |= add_range(w, "backward", mid, t);
			rc |= prof_writer__memory(w, &alloc);
			rc |= prof_writer__memory(w, &release);
			step_start = t + 2;
			t += 10;
		}
		if (r % 200000 == 199999 && prof_writer__flush(w, &err))
			return fail(path, err.msg);
	}
	if (rc)
		return fail(path, prof_writer__last_error(w)->msg);
	if (prof_writer__finish(w, &err))
		return fail(path, err.msg);
	return 0;
}

static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
	(void)buf;
	*(uint64_t *)cookie += size;
	return (ssize_t)size;
}

/* One export into a byte counter; prints "seconds output_bytes". */
static int export_one(const char *format, const char *path)
{
	cookie_io_functions_t io = { .write = count_write };
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	uint64_t bytes = 0;
	double t0;
	FILE *out;
	int rc;

	if (prof_store__open(path, &s, &err))
		return fail(path, err.msg);
	out = fopencookie(&bytes, "w", io);
	t0 = bench_now_s();
	if (strcmp(format, "chrome") == 0) {
		struct chrome_options o = { .warn = fopen("/dev/null", "w") };

		rc = chrome_trace__write(s, &o, out, &err);
		fclose(o.warn);
	} else if (strcmp(format, "perfetto") == 0) {
		rc = perfetto_trace__write(s, NULL, out, &err);
	} else if (strcmp(format, "folded") == 0) {
		rc = folded__export(s, NULL, out, &err);
	} else {
		rc = html_report__write(s, NULL, out, &err);
	}
	fclose(out);
	if (rc)
		return fail(format, err.msg);
	printf("%.3f %" PRIu64 "\n", bench_now_s() - t0, bytes);
	prof_store__close(s);
	return 0;
}

/* What one export cost. */
struct cost {
	double secs, cpu_secs;
	uint64_t bytes;
};

/* Run one export in a fresh process; its peak RSS comes from wait4. The
 * Perfetto row is compared with chrome, the Chrome trace's cost. */
static int measure(const char *format, const char *path, int64_t kernels, double store_mb,
		   struct cost *cost, const struct cost *chrome)
{
	char line[128] = "", vs[48] = "-";
	struct rusage ru;
	int fds[2], status;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return fail("pipe", strerror(errno));
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/proc/self/exe", "bench_export", "--export", format, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!fgets(line, sizeof line, f))
		line[0] = '\0';
	fclose(f);
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sscanf(line, "%lf %" SCNu64, &cost->secs, &cost->bytes) != 2)
		return fail(format, "the export failed");
	cost->cpu_secs = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	if (chrome && chrome->bytes && chrome->secs > 0 && chrome->cpu_secs > 0)
		snprintf(vs, sizeof vs, "%.2f/%.2f/%.2f", (double)cost->bytes / (double)chrome->bytes,
			 cost->secs / chrome->secs, cost->cpu_secs / chrome->cpu_secs);
	printf("%-8s %10" PRId64 " %10.1f %10.2f %8.2f %10.1f %12.1f %12.1f  %s\n", format, kernels,
	       store_mb, cost->secs, cost->cpu_secs, store_mb / cost->secs,
	       (double)cost->bytes / 1e6, (double)ru.ru_maxrss / 1024.0, vs);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const formats[] = { "chrome", "perfetto", "folded", "html" };
	struct cost costs[4];
	bool header = false;
	const char *path = NULL;
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	int64_t kernels;
	struct stat st;
	int rc = 0;

	/* SQLite set up as the perfkit command sets it, so each export costs
	 * here what it costs there */
	(void)prof_sqlite__setup_process();
	if (argc == 4 && strcmp(argv[1], "--write") == 0)
		return write_store(atoll(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "--export") == 0)
		return export_one(argv[2], argv[3]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--header") == 0)
			header = true;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || stat(path, &st) != 0) {
		fprintf(stderr, "usage: bench_export --write N FILE | bench_export [--header] FILE\n");
		return 2;
	}
	if (prof_store__open(path, &s, &err))
		return fail(path, err.msg);
	kernels = prof_store__count(s, PROF_T_KERNEL);
	prof_store__close(s);
	if (header)
		printf("%-8s %10s %10s %10s %8s %10s %12s %12s  %s\n", "format", "kernels",
		       "store_MB", "seconds", "cpu_s", "MB/s", "output_MB", "peakRSS_MB",
		       "x_chrome(size/time/cpu)");
	for (size_t i = 0; i < sizeof formats / sizeof formats[0] && rc == 0; i++)
		rc = measure(formats[i], path, kernels, (double)st.st_size / 1e6, &costs[i],
			     strcmp(formats[i], "perfetto") == 0 ? &costs[0] : NULL);
	return rc;
}
