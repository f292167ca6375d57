/* cli_capture.h - what `perfkit run` and `perfkit top -- PROGRAM` hand a
 * capture session (capture/run_session.h): the capture options as option
 * table entries, and the reporting helper its messages go through. */
#ifndef PERFKIT_CLI_CAPTURE_H
#define PERFKIT_CLI_CAPTURE_H

#include "cli.h"
#include "run_session.h"

_Static_assert((int)RUN_EXIT_USAGE == (int)CLI_EXIT_USAGE, "a session's usage status is perfkit's");

/* The option table entries of the capture options both commands take. */
#define RUN_CLI_CAPTURE_OPTIONS(o)                                                            \
	CLI_STRING('o', "output", &(o)->output, "FILE",                                       \
		   "capture file (default perfkit-PROGRAM-N.sqlite, N the first free here);"  \
		   " FILE may hold %h the host, %p perfkit's pid, %r the launcher's rank,"     \
		   " %q{VAR} an environment variable, %% a %"),                                 \
	CLI_FLAG('f', "force", &(o)->force, "overwrite FILE if it exists"),                   \
	CLI_STRING(0, "trace", &(o)->trace_list, "LIST",                                      \
		   "what to record: cuda (or its parts kernels,copies,sync,overhead),nvtx,"   \
		   "memory,api,api-all,um,graphs, all (default cuda,nvtx,memory,api,um)"),     \
	CLI_STRING(0, "cuda-graph-trace", &(o)->cuda_graph_trace, "node|graph",             \
		   "a launched CUDA graph as its nodes' kernels (node, the default) or as one" \
		   " record a launch (graph: cheaper, no kernel inside it seen)"),             \
	CLI_INT(0, "flush-interval", &(o)->flush_ms, "MS",                                    \
		"commit recorded data at least this often (default 500)"),                    \
	CLI_OPTIONAL("gpu-metrics", &(o)->gpu_metrics, "HZ",                                  \
		     "sample SM, tensor, DRAM, PCIe and NVLink use HZ times a second (default 10000)"), \
	CLI_STRING(0, "pytorch", &(o)->pytorch, "modules",                                    \
		   "mark every nn.Module's forward and backward and each optimizer step"       \
		   " (Python programs; no change to the program)"),                             \
	CLI_OPTIONAL("python-sampling", &(o)->python_sampling, "HZ",                          \
		     "sample every Python thread's stack HZ times a second (default 1000)"),    \
	CLI_STRING(0, "python-native-frames", &(o)->python_native, "on|off",                 \
		   "with --python-sampling: the native frames (library, function) under each"  \
		   " sampled thread's innermost Python frame (default on)"),                    \
	CLI_STRING(0, "python-backtrace", &(o)->python_backtrace, "cuda",                     \
		   "record the Python stack at each CUDA launch, copy, synchronisation and"   \
		   " allocation"),                                                             \
	CLI_STRING(0, "capture-range", &(o)->capture_range, "RANGE",                         \
		   "record only inside windows: nvtx:NAME[@DOMAIN][,skip=M][,count=N] (from the" \
		   " M+1-th NAME range to the end of the M+N-th) or cudaProfilerApi"          \
		   " (cudaProfilerStart to cudaProfilerStop, each pair a window)"),           \
	CLI_STRING(0, "delay", &(o)->delay, "DUR",                                            \
		   "record from DUR after the start (30s, 500ms)"),                        \
	CLI_STRING(0, "duration", &(o)->duration, "DUR",                                      \
		   "record for DUR (after --delay), then run on untraced"),                    \
	CLI_FLAG(0, "start-paused", &(o)->start_paused,                                       \
		 "record nothing until `perfkit start FILE|PID`; `perfkit stop` pauses again")

/* `perfkit start` (open) and `perfkit stop`: one body (cmd_start.c). */
int cmd_start_or_stop(int argc, char **argv, bool open);

/* A session reports through cli_error and cli_warning, like every command. */
#define RUN_CLI_MESSAGES { .error = cli_error, .warning = cli_warning }

#endif
