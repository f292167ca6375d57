/* bench_finish.c - the end of a `perfkit run`: from the program's exit to a
 * complete capture.
 *
 *   bench_finish write [--launches N] [--procs P] [--flush-every K]
 *                      [--api-all] DIR
 *	writes DIR/proc-<pid>.sqlite for P processes (N launches in all) the
 *	way the collector does. The rows are synthetic: per launch a runtime
 *	API row (cudaLaunchKernel) and the kernel row, as the default trace
 *	records them; every 1,000 launches an NVTX push/pop range around them,
 *	every 10,000 a host-to-device cudaMemcpyAsync (runtime and memcpy
 *	rows). The transaction is committed every K launches, as the
 *	collector's flush timer does (default 100,000: 500 ms at 5 µs a
 *	launch), and the files are closed the way a process under `perfkit
 *	run` closes its file. --api-all adds a driver row to every runtime
 *	call, as `--trace=api-all` records the driver call CUDA's runtime
 *	makes for each (docs/ARCHITECTURE.md, "The store").
 *
 *   bench_finish finish [--header] DIR OUTPUT
 *	does what `perfkit run` does once the program has ended, with
 *	capture/'s own code: the output (created first with the live
 *	metadata, as at the start of a run, untimed) gets the run's metadata
 *	and the process files of DIR, and is finished. Prints one row: kernel
 *	rows, seconds per step (merge, index build, checkpoint and the file put
 *	in place), the total, seconds per million launches, the same in CPU
 *	seconds (what a busy machine's wall clock hides) and bytes of capture
 *	per launch; then the CPU seconds of each step. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "run_session_impl.h"

static void usage(void)
{
	fprintf(stderr, "usage: bench_finish write [--launches N] [--procs P] [--flush-every K]"
			" [--api-all] DIR\n"
			"       bench_finish finish [--header] DIR OUTPUT\n");
	exit(2);
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "bench_finish: %s: %s\n", what, msg);
	exit(1);
}

/* ---- writing process files --------------------------------------------------- */

#define START_NS 1795381865000000000LL
#define LAUNCH_EVERY_NS 5000      /* the host's launch rate: 5 µs a launch */
#define KERNEL_NS 1800            /* a tiny kernel */
#define RANGE_EVERY 1000          /* launches per NVTX range */
#define MEMCPY_EVERY 10000        /* launches per copy */

struct proc_names {
	int64_t launch_rt, launch_drv, copy_rt, copy_drv, mangled, demangled, short_name, range;
};

static void check_row(struct prof_writer *w, int rc)
{
	if (rc)
		die("write", prof_writer__last_error(w)->msg);
}

static bool driver_rows; /* --api-all */

static void api_pair(struct prof_writer *w, int64_t tid, int32_t corr, int64_t t, int64_t rt,
		     int64_t drv)
{
	struct prof_api_call runtime = { .start_ns = t, .end_ns = t + 2600, .global_tid = tid,
					 .correlation_id = corr, .name_id = rt };
	struct prof_api_call driver = { .start_ns = t + 400, .end_ns = t + 2100, .global_tid = tid,
					.correlation_id = corr, .name_id = drv };

	if (driver_rows)
		check_row(w, prof_writer__api(w, PROF_API_DRIVER, &driver));
	check_row(w, prof_writer__api(w, PROF_API_RUNTIME, &runtime));
}

static void write_process(const char *dir, uint32_t pid, long long launches, long long flush_every)
{
	struct prof_gpu_info gpu = {
		.id = 0, .name = "NVIDIA H200", .bus_location = "0000:19:00.0",
		.l2_cache_bytes = 62914560, .total_memory_bytes = 150121545728LL,
		.memory_bandwidth_bytes_per_s = 4800000000000LL, .clock_rate_hz = 1980000000,
		.sm_count = 132, .uuid = "GPU-00000000-0000-0000-0000-000000000000",
		.chip_name = "GH100", .compute_major = 9, .compute_minor = 0, .max_warps_per_sm = 64,
		.threads_per_warp = 32, .max_blocks_per_sm = 32, .max_registers_per_sm = 65536,
		.max_registers_per_block = 65536, .max_shared_per_sm_bytes = 233472,
		.max_shared_per_block_bytes = 232448, .max_threads_per_block = 1024,
	};
	int64_t tid = prof_global_tid(pid, pid), t = START_NS + (int64_t)pid * 1000;
	struct prof_error err = { 0 };
	struct prof_nvtx_event range = { 0 };
	struct prof_writer *w;
	struct proc_names n;
	char path[4096];
	int32_t corr = 0;

	prof_proc_file__path(path, sizeof path, dir, (int)pid);
	if (prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err))
		die("write", err.msg);
	check_row(w, prof_writer__process(w, pid, "launch_loop"));
	check_row(w, prof_writer__thread_name(w, tid, "launch_loop"));
	check_row(w, prof_writer__gpu(w, &gpu));
	n.launch_rt = prof_writer__string(w, "cudaLaunchKernel_v7000");
	n.launch_drv = prof_writer__string(w, "cuLaunchKernel");
	n.copy_rt = prof_writer__string(w, "cudaMemcpyAsync_v3020");
	n.copy_drv = prof_writer__string(w, "cuMemcpyHtoDAsync_v2");
	n.mangled = prof_writer__string(w, "_Z4tinyPfi");
	n.demangled = prof_writer__string(w, "tiny(float*, int)");
	n.short_name = prof_writer__string(w, "tiny");
	n.range = prof_writer__string(w, "step");
	for (long long i = 0; i < launches; i++) {
		struct prof_kernel k = {
			.start_ns = t + 6000, .end_ns = t + 6000 + KERNEL_NS, .device_id = 0,
			.context_id = 1, .stream_id = 7, .correlation_id = ++corr,
			.global_pid = prof_global_pid(pid), .demangled_name = n.demangled,
			.short_name = n.short_name, .mangled_name = n.mangled, .registers_per_thread = 16,
			.grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1,
			.local_memory_total_bytes = 155713536, .grid_id = i + 1,
			.shared_memory_executed_bytes = 32768,
		};

		if (i % RANGE_EVERY == 0) {
			range = (struct prof_nvtx_event){ .start_ns = t - 100, .event_type = PROF_NVTX_PUSHPOP,
							  .range_id = i / RANGE_EVERY + 1, .global_tid = tid,
							  .end_global_tid = tid, .text_id = n.range };
		}
		api_pair(w, tid, k.correlation_id, t, n.launch_rt, n.launch_drv);
		check_row(w, prof_writer__kernel(w, &k));
		t += LAUNCH_EVERY_NS;
		if (i % RANGE_EVERY == RANGE_EVERY - 1 || i == launches - 1) {
			range.end_ns = t;
			check_row(w, prof_writer__nvtx(w, &range));
		}
		if (i % MEMCPY_EVERY == MEMCPY_EVERY - 1) {
			struct prof_memcpy m = {
				.start_ns = t + 3000, .end_ns = t + 40000, .device_id = 0, .context_id = 1,
				.stream_id = 7, .correlation_id = ++corr, .global_pid = prof_global_pid(pid),
				.bytes = 4194304, .copy_kind = 1, .src_kind = 1, .dst_kind = 2,
				.dst_context_id = 1, .src_context_id = 1,
			};

			api_pair(w, tid, m.correlation_id, t, n.copy_rt, n.copy_drv);
			check_row(w, prof_writer__memcpy(w, &m));
			t += 40000;
		}
		if ((i + 1) % flush_every == 0 && prof_writer__flush(w, &err))
			die("write", err.msg);
	}
	/* a process under `perfkit run` commits and closes; the run finishes */
	prof_writer__delete(w);
}

static int cmd_write(int argc, char **argv)
{
	long long launches = 1000000, flush_every = 100000;
	int procs = 1;
	const char *dir = NULL;
	double t0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--launches") && i + 1 < argc)
			launches = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
			procs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--flush-every") && i + 1 < argc)
			flush_every = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--api-all"))
			driver_rows = true;
		else if (argv[i][0] == '-' || dir)
			usage();
		else
			dir = argv[i];
	}
	if (!dir || launches <= 0 || procs <= 0 || flush_every <= 0)
		usage();
	t0 = bench_now_s();
	for (int p = 0; p < procs; p++)
		write_process(dir, 4000 + (uint32_t)p, launches / procs + (p < launches % procs),
			      flush_every);
	fprintf(stderr, "bench_finish: %lld launches in %d process file%s, %.2f s\n", launches,
		procs, procs == 1 ? "" : "s", bench_now_s() - t0);
	return 0;
}

/* ---- finishing ------------------------------------------------------------------- */

static void bench_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bench_finish: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* When each step began, wall clock and this process's CPU time, from the
 * finish's own reports. */
struct step_clock {
	double began_s[PROF_FINISH_DONE + 1], began_cpu_s[PROF_FINISH_DONE + 1];
};

static void note_step(void *ctx, enum prof_finish_step step, int done, int total)
{
	struct step_clock *c = ctx;

	(void)done;
	(void)total;
	if (!c->began_s[step]) {
		c->began_s[step] = bench_now_s();
		c->began_cpu_s[step] = bench_cpu_s();
	}
}

/* Seconds from the start of step to the start of the next step that came
 * (or to end_s): of the clock in began, and end_s on the same clock. */
static double step_s(const struct step_clock *c, const double *began, enum prof_finish_step step,
		     double end_s)
{
	if (!c->began_s[step])
		return 0;
	for (int next = step + 1; next <= PROF_FINISH_DONE; next++)
		if (c->began_s[next])
			return began[next] - began[step];
	return end_s - began[step];
}

static int cmd_finish(int argc, char **argv)
{
	static const struct run_messages msg = { bench_error, bench_error };
	const char *dir = NULL, *output = NULL;
	struct step_clock clock = { 0 };
	struct prof_progress progress = { note_step, &clock };
	struct run_proc_files files;
	struct run_finish_outcome outcome;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	struct stat st;
	double t0, t1, cpu0, cpu1;
	int64_t launches;
	char *gpu;
	int header = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--header"))
			header = 1;
		else if (argv[i][0] == '-' || output)
			usage();
		else if (!dir)
			dir = argv[i];
		else
			output = argv[i];
	}
	if (!output)
		usage();
	/* the start of a run: the output with the live metadata */
	if (prof_writer__create(output, PROF_WRITER_OVERWRITE, &w, &err))
		die("finish", err.msg);
	run__meta_int(w, "start_ns", START_NS);
	run__meta_int(w, PROF_META_PID, 4000);
	run__meta_int(w, PROF_META_RUN_PID, (long long)getpid());
	run__meta_trace(w, NULL);
	prof_writer__meta(w, PROF_META_LIVE_DIR, dir);
	if (prof_writer__flush(w, &err))
		die("finish", err.msg);

	/* the program has ended */
	t0 = bench_now_s();
	cpu0 = bench_cpu_s();
	if (run__proc_files(&msg, dir, &files) < 0)
		return 1;
	clock.began_s[PROF_FINISH_MERGE] = t0;
	clock.began_cpu_s[PROF_FINISH_MERGE] = cpu0;
	gpu = run__first_gpu(&files);
	prof_writer__meta(w, "command", "launch_loop");
	run__meta_int(w, "exit_status", 0);
	run__meta_merged(w, gpu);
	free(gpu);
	if (run__finish_capture(&msg, w, &files, &progress, &outcome) != 0)
		return 1;
	run__proc_files_free(&files);
	run__remove_dir(dir);
	t1 = bench_now_s();
	cpu1 = bench_cpu_s();

	if (prof_store__open(output, &s, &err))
		die("finish", err.msg);
	launches = prof_store__count(s, PROF_T_KERNEL);
	prof_store__close(s);
	if (stat(output, &st) || launches <= 0)
		die(output, "no kernel rows in the capture");
	if (header)
		printf("%-10s %7s %7s %7s %7s %8s %8s %8s %7s\n", "launches", "merge", "index",
		       "ckpt", "total", "s_per_M", "cpu_s", "cpu_perM", "B/launch");
	printf("%-10lld %7.2f %7.2f %7.2f %7.2f %8.3f %8.2f %8.3f %7.1f\n", (long long)launches,
	       step_s(&clock, clock.began_s, PROF_FINISH_MERGE, t1),
	       step_s(&clock, clock.began_s, PROF_FINISH_INDEX, t1),
	       step_s(&clock, clock.began_s, PROF_FINISH_CHECKPOINT, t1), t1 - t0,
	       (t1 - t0) * 1e6 / (double)launches, cpu1 - cpu0,
	       (cpu1 - cpu0) * 1e6 / (double)launches, (double)st.st_size / (double)launches);
	printf("%-10s %7.2f %7.2f %7.2f %7.2f   (CPU seconds per step)\n", "",
	       step_s(&clock, clock.began_cpu_s, PROF_FINISH_MERGE, cpu1),
	       step_s(&clock, clock.began_cpu_s, PROF_FINISH_INDEX, cpu1),
	       step_s(&clock, clock.began_cpu_s, PROF_FINISH_CHECKPOINT, cpu1), cpu1 - cpu0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 2, argv + 2);
	if (!strcmp(argv[1], "finish"))
		return cmd_finish(argc - 2, argv + 2);
	usage();
	return 2;
}
