/* write_live_store.c - a program that records a capture while it runs, the
 * way the collector does, for the command-line tests of `perfkit top`
 * following live data: kernels named live_kernel_a and live_kernel_b every
 * millisecond, committed every flush interval, for SECONDS seconds.
 *
 * Under `perfkit run` or `perfkit top -- PROGRAM` it writes
 * $PERFKIT_OUTPUT_DIR/proc-<pid>.sqlite (every $PERFKIT_FLUSH_MS ms), as
 * the collector would; with -o it writes and finishes PATH itself. It says
 * hello on stdout, then exits with STATUS. -r ROWS writes ROWS kernels a
 * millisecond instead of one (a program that fills a small disk quickly).
 * Under perfkit a row that cannot be written changes nothing, as in the
 * collector: the program's status is its own. At its end it prints how many
 * kernels it recorded ("kernels=N") and how many of them its writer took
 * ("written=N"), for tests that compare the capture with them; the process
 * row and the kernel names are committed first. -g GRAPH also launches CUDA
 * graph GRAPH (recorded whole, as --cuda-graph-trace=graph records it) each
 * millisecond of the run's second half: the writer makes that table with
 * its first row, so a reader that opened the file before finds it later;
 * at its end it prints how many launches it recorded ("graph_launches=N").
 *
 * usage: write_live_store [-o PATH] [-r ROWS] [-g GRAPH] SECONDS [STATUS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof/protocol.h"
#include "prof/store.h"

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *dir = getenv(PROF_ENV_OUTPUT_DIR), *flush = getenv(PROF_ENV_FLUSH_MS);
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	int64_t end, half, next_flush, flush_ns = 100000000, names[2], n = 0, written = 0, launches = 0;
	char path[4096];
	int i = 1, status = 0, rc = 0, per_tick = 1, graph = -1;
	double seconds;

	for (; argc - i > 2 && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-o"))
			out = argv[i + 1];
		else if (!strcmp(argv[i], "-r"))
			per_tick = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-g"))
			graph = atoi(argv[i + 1]);
		else
			break;
	}
	if (argc - i < 1 || argc - i > 2 || argv[i][0] == '-' || per_tick < 1) {
		fprintf(stderr, "usage: write_live_store [-o PATH] [-r ROWS] [-g GRAPH] SECONDS [STATUS]\n");
		return 2;
	}
	seconds = atof(argv[i]);
	if (argc - i == 2)
		status = atoi(argv[i + 1]);
	if (!out && (!dir || !*dir)) {
		fprintf(stderr, "write_live_store: give -o PATH or run under perfkit\n");
		return 2;
	}
	if (!out) {
		prof_proc_file__path(path, sizeof path, dir, (int)getpid());
		out = path;
	}
	if (flush && atoi(flush) > 0)
		flush_ns = (int64_t)atoi(flush) * 1000000;
	printf("hello from write_live_store\n");
	fflush(stdout);
	if (prof_writer__create(out, PROF_WRITER_OVERWRITE, &w, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	prof_writer__process(w, (uint32_t)getpid(), "write_live_store");
	names[0] = prof_writer__string(w, "live_kernel_a");
	names[1] = prof_writer__string(w, "live_kernel_b");
	/* the process and the names are in the file from the start */
	if (prof_writer__flush(w, &err))
		rc = 1;
	end = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	half = end - (int64_t)(seconds * 1e9) / 2;
	next_flush = now_ns(CLOCK_MONOTONIC) + flush_ns;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		for (int r = 0; r < per_tick; r++, n++) {
			int64_t t = now_ns(CLOCK_REALTIME);
			struct prof_kernel k = {
				.start_ns = t - 20000, .end_ns = t - 10000 + (n % 2) * 5000,
				.global_pid = prof_global_pid((uint32_t)getpid()), .stream_id = 7,
				.correlation_id = n + 1, .demangled_name = names[n % 2],
			};

			k.short_name = k.demangled_name;
			if (prof_writer__kernel(w, &k))
				rc = 1;
			else
				written++;
		}
		if (graph >= 0 && now_ns(CLOCK_MONOTONIC) >= half) {
			int64_t t = now_ns(CLOCK_REALTIME);
			struct prof_graph_trace g = {
				.start_ns = t - 40000, .end_ns = t - 30000, .stream_id = 7,
				.correlation_id = (int32_t)(n + launches + 1),
				.global_pid = prof_global_pid((uint32_t)getpid()), .graph_id = graph,
			};

			if (prof_writer__graph_trace(w, &g))
				rc = 1;
			else
				launches++;
		}
		if (now_ns(CLOCK_MONOTONIC) >= next_flush) {
			if (prof_writer__flush(w, &err))
				rc = 1;
			next_flush += flush_ns;
		}
		usleep(1000);
	}
	/* under perfkit the run merges and finishes; alone, finish here */
	if (out == path)
		prof_writer__delete(w);
	else if (prof_writer__finish(w, &err) < 0)
		rc = 1;
	printf("kernels=%lld\nwritten=%lld\n", (long long)n, (long long)written);
	if (graph >= 0)
		printf("graph_launches=%lld\n", (long long)launches);
	if (rc && out == path)
		return status;
	if (rc) {
		fprintf(stderr, "write_live_store: writing %s failed\n", out);
		return 1;
	}
	return status;
}
