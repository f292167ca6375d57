/* bench_ingest.c - kernel rows per second through the store writer.
 *
 * Writes N kernel rows with varied, plausible values (about 200 distinct
 * kernel names, 8 streams, launch shapes from a small set, durations spread
 * over three orders of magnitude) the way the collector does: every row's
 * name goes through prof_writer__string, and the transaction is flushed every
 * --flush-rows rows as the collector's timer would. Prints one table row:
 * ingest rate, ingest and finish seconds, CPU seconds, file size, peak RSS.
 *
 *   bench_ingest [--rows N] [--flush-rows N] [--names N] [--header] FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_util.h"
#include "prof/store.h"

static void usage(void)
{
	fprintf(stderr, "usage: bench_ingest [--rows N] [--flush-rows N] [--names N] [--header] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long long rows = 10000000, flush_rows = 200000;
	int names = 200, header = 0;
	const char *path = NULL;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct rusage ru;
	struct stat st;
	char **name_text;
	double t0, t_ingest, t_finish, c0;
	int64_t start_ns = 1700000000000000000LL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			rows = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--flush-rows") && i + 1 < argc)
			flush_rows = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--names") && i + 1 < argc)
			names = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--header"))
			header = 1;
		else if (argv[i][0] == '-' || path)
			usage();
		else
			path = argv[i];
	}
	if (!path || rows <= 0 || flush_rows <= 0 || names <= 0)
		usage();
	name_text = calloc((size_t)names, sizeof *name_text);
	for (int i = 0; i < names; i++) {
		name_text[i] = malloc(128);
		snprintf(name_text[i], 128,
			 "void kernels::op_%d<float, %d>(const float*, float*, int, kernels::Params)",
			 i, 32 << (i % 4));
	}
	if (prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err)) {
		fprintf(stderr, "bench_ingest: %s\n", err.msg);
		return 2;
	}
	c0 = bench_cpu_s();
	t0 = bench_now_s();
	for (long long r = 0; r < rows; r++) {
		uint64_t x = bench_rnd();
		/* a few names dominate, as in real training loops */
		int n = (int)((x & 0xFFFF) % (unsigned)names);
		int hot = (x >> 16) & 3 ? n % 16 : n;
		int64_t dur = 1000 + (int64_t)((x >> 20) % 4000) * (1 + (int64_t)((x >> 40) % 100));
		struct prof_kernel k = {
			.start_ns = start_ns, .end_ns = start_ns + dur,
			.device_id = 0, .context_id = 1, .stream_id = 7 + (int32_t)((x >> 8) & 7),
			.correlation_id = (int32_t)(r + 1), .global_pid = prof_global_pid(4242),
			.launch_type = 0, .cache_config = 1, .registers_per_thread = 32 + (hot % 5) * 16,
			.grid_x = 1 << (hot % 12), .grid_y = 1 + (hot % 3), .grid_z = 1,
			.block_x = 128 << (hot % 3), .block_y = 1, .block_z = 1,
			.static_shared_bytes = (hot % 4) * 4096, .dynamic_shared_bytes = 0,
			.local_memory_per_thread_bytes = 0, .local_memory_total_bytes = 1 << 20,
			.grid_id = r + 1, .shared_memory_executed_bytes = 32768,
			.shared_memory_limit_config = 1,
		};

		k.demangled_name = prof_writer__string(w, name_text[hot]);
		k.short_name = k.demangled_name;
		if (prof_writer__kernel(w, &k)) {
			fprintf(stderr, "bench_ingest: %s\n", prof_writer__last_error(w)->msg);
			return 1;
		}
		start_ns += dur + (int64_t)((x >> 48) % 3000);
		if ((r + 1) % flush_rows == 0 && prof_writer__flush(w, &err)) {
			fprintf(stderr, "bench_ingest: %s\n", err.msg);
			return 1;
		}
	}
	if (prof_writer__flush(w, &err)) {
		fprintf(stderr, "bench_ingest: %s\n", err.msg);
		return 1;
	}
	t_ingest = bench_now_s() - t0;
	c0 = bench_cpu_s() - c0;
	t0 = bench_now_s();
	if (prof_writer__finish(w, &err)) {
		fprintf(stderr, "bench_ingest: %s\n", err.msg);
		return 1;
	}
	t_finish = bench_now_s() - t0;
	getrusage(RUSAGE_SELF, &ru);
	stat(path, &st);
	if (header)
		printf("%-12s %12s %10s %10s %10s %10s %10s\n", "rows", "rows/s", "ingest_s",
		       "ingest_cpu", "finish_s", "file_MB", "peakRSS_MB");
	printf("%-12lld %12.0f %10.2f %10.2f %10.2f %10.1f %10.1f\n", rows,
	       (double)rows / t_ingest, t_ingest, c0, t_finish,
	       (double)st.st_size / 1048576.0, (double)ru.ru_maxrss / 1024.0);
	for (int i = 0; i < names; i++)
		free(name_text[i]);
	free(name_text);
	return 0;
}
