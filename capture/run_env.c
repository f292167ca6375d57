/* run_env.c - the environment the program runs in: where the collector
 * is and writes, what it traces, and the hardware metrics it samples or
 * replays. */
#include "run_session_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/protocol.h"
#include "prof/temp_files.h"
#include "prof/trace_opts.h"

int run__set_env(const char *collector, const char *dir, int trace, const char *trace_list,
		   int64_t flush_ms)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", (long long)flush_ms);
	if (setenv(PROF_ENV_CUDA_INJECTION, collector, 1) < 0 ||
	    setenv(PROF_ENV_OUTPUT_DIR, dir, 1) < 0 || setenv(PROF_ENV_FLUSH_MS, num, 1) < 0 ||
	    setenv(PROF_ENV_TRACE, trace_list ? trace_list : "", 1) < 0)
		return -1;
	/* NVTX loads the collector too, which starts CUPTI before the first
	 * range even when NVTX is used before CUDA, and hands over to CUPTI. */
	if (trace & PROF_TRACE_NVTX)
		return setenv(PROF_ENV_NVTX_INJECTION, collector, 1);
	return unsetenv(PROF_ENV_NVTX_INJECTION);
}

/* An option whose value is a rate, given as --OPTION or --OPTION=HZ (v is
 * "" then, or NULL when the option was not given): samples a second, 0
 * when not given, < 0 (said) when the value is not a rate within
 * [least, most]. */
long run__rate(const struct run_session *s, const char *option, const char *v, long fallback,
	       long least, long most)
{
	char *end;
	long hz;

	if (!v)
		return 0;
	if (!*v)
		return fallback;
	hz = strtol(v, &end, 10);
	if (*end || end == v || hz < least || hz > most) {
		s->msg->error("--%s: '%s' is not a rate between %ld and %ld samples a second", option,
			      v, least, most);
		return -1;
	}
	return hz;
}

/* --gpu-metrics[=HZ]: samples per second, 0 when off, < 0 (said) when the
 * value is not one. Sampling and kernel replay (--metrics) both hold the
 * GPU's performance monitors. */
long run__gpu_metrics_hz(const struct run_session *s)
{
	if (s->opt.gpu_metrics && s->opt.metrics) {
		s->msg->error("--gpu-metrics and --metrics cannot be used together (both use the "
			      "GPU's counters)");
		return -1;
	}
	return run__rate(s, "gpu-metrics", s->opt.gpu_metrics, PROF_GPU_METRICS_HZ_DEFAULT,
			 PROF_GPU_METRICS_HZ_MIN, PROF_GPU_METRICS_HZ_MAX);
}

int run__gpu_metrics_env(long hz)
{
	char num[32];

	if (!hz)
		return unsetenv(PROF_ENV_GPU_METRICS);
	snprintf(num, sizeof num, "%ld", hz);
	return setenv(PROF_ENV_GPU_METRICS, num, 1);
}

/* --metrics: the collector writes one metrics file per process into a folder
 * of its own, imported into the capture once it is finished. */
int run__metrics_env(const char *metrics, int64_t sample, char *dir, size_t cap)
{
	struct prof_error err = { 0 };
	char num[32];

	if (!metrics) {
		unsetenv(PROF_ENV_METRICS);
		return 0;
	}
	if (prof_temp_dir__make("perfkit-metrics", dir, cap, &err) < 0)
		return -1; /* errno says why */
	snprintf(num, sizeof(num), "%lld", (long long)sample);
	if (setenv(PROF_ENV_METRICS, metrics, 1) < 0 || setenv(PROF_ENV_METRICS_DIR, dir, 1) < 0 ||
	    setenv(PROF_ENV_METRICS_SAMPLE, num, 1) < 0)
		return -1;
	return 0;
}
