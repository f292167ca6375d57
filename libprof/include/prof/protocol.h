/* protocol.h - what the launcher (`perfkit run`, capture/), the injection
 * library (collectors/) and the readers of a live capture (`perfkit top`,
 * tui/) agree on: the environment the launcher sets, the files every traced
 * process leaves in the folder it names, and the metadata key that tells a
 * reader of the unfinished output where that folder is.
 *
 * Here in libprof because the injection library may depend on libprof only,
 * and every other side (capture/, tui/, cli/, the import of metrics files)
 * already does. Header-only, like prof/trace_opts.h (the value of
 * PERFKIT_TRACE): names and string helpers, nothing that touches a store. */
#ifndef PROF_PROTOCOL_H
#define PROF_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the environment: set by the launcher, read by the collector ---------- */

/* The folder of the per-process files; unset, a process writes
 * perfkit-COMM-PID.sqlite in its working directory and finishes it itself. */
#define PROF_ENV_OUTPUT_DIR "PERFKIT_OUTPUT_DIR"
/* What to record: a list prof_trace_opts__parse reads; "" everything. */
#define PROF_ENV_TRACE "PERFKIT_TRACE"
/* Commit recorded rows at least this often, in ms. */
#define PROF_ENV_FLUSH_MS "PERFKIT_FLUSH_MS"
/* After a synchronisation that succeeded, flush CUPTI's buffers if the
 * last such flush is this many ms old (0: never; only the interval's). */
#define PROF_ENV_SYNC_FLUSH_MS "PERFKIT_SYNC_FLUSH_MS"
/* "0": keep CUPTI attached after a capture window (inject.c detaches it) */
#define PROF_ENV_WINDOW_DETACH "PERFKIT_WINDOW_DETACH"
/* 1: the writer thread frees each buffer CUPTI hands back unread, so the
 * capture holds no GPU row. Only for bench/gpu_overhead.sh's writer
 * setting: what perfkit costs the program without converting and storing
 * its records, against what it costs with them. */
#define PROF_ENV_BENCH_DISCARD "PERFKIT_BENCH_DISCARD"
/* Hardware metrics: the set ("roofline" or "memory"; unset, none), the
 * folder of the metrics files and every how many launches of a kernel. */
#define PROF_ENV_METRICS "PERFKIT_METRICS"
#define PROF_ENV_METRICS_DIR "PERFKIT_METRICS_DIR"
#define PROF_ENV_METRICS_SAMPLE "PERFKIT_METRICS_SAMPLE"
/* Sampled GPU metrics (--gpu-metrics): samples per second; unset, none. */
#define PROF_ENV_GPU_METRICS "PERFKIT_GPU_METRICS"
/* Python (perfkit run --pytorch, --python-sampling, --python-backtrace):
 * what the hook module marks ("modules"), Python stack samples a second,
 * and the calls whose Python stack is taken ("cuda"). The launcher puts
 * the hook's folder first on PYTHONPATH and names it in
 * PERFKIT_PYTHON_HOOK_DIR, so that the hook can chain to a sitecustomize
 * of the program's own. */
#define PROF_ENV_PYTORCH "PERFKIT_PYTORCH"
#define PROF_ENV_PYTHON_SAMPLING "PERFKIT_PYTHON_SAMPLING"
#define PROF_ENV_PYTHON_BACKTRACE "PERFKIT_PYTHON_BACKTRACE"
/* "off": samples hold the Python frames only (--python-native-frames=off) */
#define PROF_ENV_PYTHON_NATIVE "PERFKIT_PYTHON_NATIVE"
#define PROF_ENV_PYTHON_HOOK_DIR "PERFKIT_PYTHON_HOOK_DIR"
#define PROF_PYTHON_SAMPLING_HZ_DEFAULT 1000
#define PROF_PYTHON_SAMPLING_HZ_MAX 10000
/* The capture's metadata key of the sampling rate asked for. */
#define PROF_META_PYTHON_SAMPLING_HZ "python_sampling_hz"
/* Capture windows (perfkit run --capture-range, --delay, --duration,
 * --start-paused): what opens a window ("nvtx:NAME[@DOMAIN][,skip=M][,count=N]"
 * or "cudaProfilerApi"), the delay and duration in ms from the run's start
 * (PERFKIT_RUN_START_NS, CLOCK_MONOTONIC), and whether the run starts
 * with no window open, waiting for `perfkit start`. Unset, the whole run
 * is recorded. */
#define PROF_ENV_CAPTURE_RANGE "PERFKIT_CAPTURE_RANGE"
#define PROF_ENV_CAPTURE_DELAY_MS "PERFKIT_CAPTURE_DELAY_MS"
#define PROF_ENV_CAPTURE_DURATION_MS "PERFKIT_CAPTURE_DURATION_MS"
#define PROF_ENV_START_PAUSED "PERFKIT_START_PAUSED"
#define PROF_ENV_RUN_START_NS "PERFKIT_RUN_START_NS"
/* The control file `perfkit start` and `perfkit stop` write in the folder
 * of the process files: one line, "SEQ open" or "SEQ close", replaced
 * whole (rename), SEQ counting up; every collector of the run applies the
 * newest. Only a file of the collector's own user counts. */
#define PROF_CONTROL_FILE "control"
/* CUDA's and NVTX's own names: the library each loads into the program. */
#define PROF_ENV_CUDA_INJECTION "CUDA_INJECTION64_PATH"
#define PROF_ENV_NVTX_INJECTION "NVTX_INJECTION64_PATH"

/* PERFKIT_FLUSH_MS when unset, and the largest value either side accepts. */
#define PROF_FLUSH_MS_DEFAULT 500
#define PROF_FLUSH_MS_MAX 600000
#define PROF_SYNC_FLUSH_MS_DEFAULT 100
/* The largest PERFKIT_METRICS_SAMPLE. */
#define PROF_METRICS_SAMPLE_MAX 1000000
/* PERFKIT_GPU_METRICS: samples per second, by default and at most/least. */
#define PROF_GPU_METRICS_HZ_DEFAULT 10000
#define PROF_GPU_METRICS_HZ_MIN 1000
#define PROF_GPU_METRICS_HZ_MAX 100000

/* ---- the output's metadata --------------------------------------------------- */

/* The folder of the per-process files while the program runs; cleared once
 * they are merged, so a finished capture names no live data. */
#define PROF_META_LIVE_DIR "live_dir"
/* The same for the folder of the hardware-metrics files (--metrics). */
#define PROF_META_LIVE_METRICS_DIR "live_metrics_dir"
/* Who writes the output, recorded with live_dir so that a reader can tell a
 * run still going from one that was killed before it merged: the pid of
 * `perfkit run` itself and its host (a pid means nothing on another host). */
#define PROF_META_RUN_PID "run_pid"
#define PROF_META_HOST "host"
/* The program's pid. */
#define PROF_META_PID "pid"
/* The file name the capture takes in its folder when it is finished, set
 * while it is written beside it instead (`perfkit run -f` onto an existing
 * file: .NAME.perfkit-XXXXXX, see prof/output.h): what `perfkit recover`
 * replaces. */
#define PROF_META_OUTPUT "output"
/* "1" where the run records only inside capture windows (--capture-range,
 * --delay, --duration, --start-paused): written at the start, so that a
 * reader of a run still waiting for its first window (whose windows table
 * is made with that window's row) can tell it is paused. */
#define PROF_META_WINDOWED "windowed"

/* ---- the files a traced process writes ------------------------------------- */

#define PROF_PROC_FILE_PREFIX "proc-"
#define PROF_PROC_FILE_SUFFIX ".sqlite"
#define PROF_METRICS_FILE_PREFIX "metrics-"
#define PROF_METRICS_FILE_SUFFIX ".tsv"

/* name starts with prefix and ends with suffix, something between them. */
static inline bool prof_protocol__name_is(const char *name, const char *prefix,
					  const char *suffix)
{
	size_t len = strlen(name), pre = strlen(prefix), suf = strlen(suffix);

	return len > pre + suf && strncmp(name, prefix, pre) == 0 &&
	       strcmp(name + len - suf, suffix) == 0;
}

/* dir/proc-<pid>.sqlite: the store one process writes. snprintf's result:
 * cap or more when it did not fit. */
static inline int prof_proc_file__path(char *buf, size_t cap, const char *dir, int pid)
{
	return snprintf(buf, cap, "%s/" PROF_PROC_FILE_PREFIX "%d" PROF_PROC_FILE_SUFFIX, dir, pid);
}

/* A file name (no folder) that looks like a process's store. */
static inline bool prof_proc_file__match(const char *name)
{
	return prof_protocol__name_is(name, PROF_PROC_FILE_PREFIX, PROF_PROC_FILE_SUFFIX);
}

/* The pid in ".../proc-<pid>.sqlite", else 0. */
static inline uint32_t prof_proc_file__pid(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned long pid;
	char tail[16];

	base = base ? base + 1 : path;
	if (sscanf(base, PROF_PROC_FILE_PREFIX "%lu%15s", &pid, tail) == 2 &&
	    !strcmp(tail, PROF_PROC_FILE_SUFFIX))
		return (uint32_t)pid;
	return 0;
}

/* dir/metrics-<pid>.tsv: the hardware metrics one process writes, a line per
 * profiled launch. snprintf's result, as prof_proc_file__path. */
static inline int prof_metrics_file__path(char *buf, size_t cap, const char *dir, int pid)
{
	return snprintf(buf, cap, "%s/" PROF_METRICS_FILE_PREFIX "%d" PROF_METRICS_FILE_SUFFIX, dir,
			pid);
}

/* A file name (no folder) that looks like a process's metrics file. */
static inline bool prof_metrics_file__match(const char *name)
{
	return prof_protocol__name_is(name, PROF_METRICS_FILE_PREFIX, PROF_METRICS_FILE_SUFFIX);
}

#endif
