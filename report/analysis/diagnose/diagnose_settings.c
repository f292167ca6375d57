/* diagnose_settings.c - the thresholds of `perfkit diagnose`, their defaults
 * and how users override them (--set key=value, or a JSON object file).
 * docs/diagnose.md documents the same keys; keep the two in step. */
#include "diagnose.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "prof/file.h"

const struct diag_setting_def diag_setting_defs[] = {
	{ "severity.high", 0.20, "share of the window at or above which a finding is high" },
	{ "severity.medium", 0.05, "share at or above which a finding is medium" },
	{ "severity.low", 0.01, "share at or above which a finding is low (below: info)" },
	{ "window.whole_run", 0, "1: analyse the whole capture, not the steady-state loop" },
	{ "iterations.min", 3, "repeats needed before a range or kernel counts as the loop" },
	{ "iterations.coverage", 0.5, "an NVTX name must cover this fraction of the best-covering repeated name" },
	{ "iterations.tiling", 0.9, "a range nested in a rarer one covering less than this fraction of it is a phase, not the loop" },
	{ "sync_memcpy.max_htod_bytes_ignored", 65536, "synchronous HtoD copies up to this size are ignored (nsys)" },
	{ "gpu_gaps.min_gap_ms", 500, "GPU idle gaps at least this long are reported (nsys default)" },
	{ "gpu_util.chunks", 30, "the window is cut into this many chunks (nsys default)" },
	{ "gpu_util.min_busy", 0.5, "chunks less busy than this fraction are flagged (nsys default)" },
	{ "small_copies.max_bytes", 1048576, "a host-to-device copy up to this size is small" },
	{ "small_copies.min_per_iteration", 3, "small HtoD copies per iteration before the rule fires" },
	{ "transfer.min_share", 0.25, "copy time per iteration, as a share of the step, that dominates" },
	{ "um.min_share", 0.05, "on-demand migration and page-fault time, as a share of the step, that fires" },
	{ "um.cpu_fault_gap_ms", 1, "CPU page faults at most this far apart are one run of stalled host time" },
	{ "alloc_churn.min_per_iteration", 1, "allocation or free calls per iteration before the rule fires" },
	{ "launch_bound.max_kernel_us", 20, "a kernel shorter than this is short" },
	{ "launch_bound.max_gap_us", 200, "gaps between kernels up to this long are launch gaps" },
	{ "launch_bound.min_gap_fraction", 0.3, "launch gaps as a fraction of the stream's active time" },
	{ "launch_bound.min_kernels", 50, "short kernels needed in the window" },
	{ "repeat.min_run", 4, "consecutive launches of the same kernel that count as a run" },
	{ "repeat.max_kernel_us", 100, "only kernels shorter than this are small enough to batch" },
	{ "repeat.max_between", 2, "other kernels allowed between two launches of a GEMM run (a layer's bias or activation)" },
	{ "occupancy.max", 0.5, "theoretical occupancy below this is low" },
	{ "occupancy.min_kernel_share", 0.01, "kernels touching less of the window are ignored" },
	{ "fp32.min_fraction", 0.9, "FP32 share of a kernel's FLOPs that makes it an FP32 kernel" },
	{ "bandwidth.max_fraction", 0.5, "memory-bound kernels below this fraction of the DRAM roof are flagged" },
	{ "bandwidth.min_kernel_us", 10, "kernels shorter than this are latency/launch-bound, not bandwidth-bound" },
	{ "access.max_overfetch", 1.5, "bytes moved in sectors per byte the threads asked for above which access is uncoalesced" },
	{ "access.min_kernel_share", 0.01, "kernels touching less of the window are ignored by uncoalesced_access" },
	{ "cpu_bound.max_gpu_busy", 0.5, "GPU busy fraction of the window below which the host is examined" },
	{ "cpu_bound.min_host_fraction", 0.5, "share of the GPU's idle time the host spends outside CUDA calls" },
	{ "gpu_metrics.min_coverage", 0.5, "a kernel's sampled averages judge it where it fills at least this share of the sample periods it falls in" },
	{ "few_sms.max_sm_active", 0.5, "SMs Active below this fraction while a kernel runs is few SMs busy" },
	{ "few_sms.min_kernel_share", 0.01, "kernels touching less of the window are ignored by few_sms_busy" },
	{ "tensor_idle.max_tensor_active", 0.02, "Tensor Active at or below this fraction while a GEMM runs is idle" },
	{ "tensor_idle.min_gemm_share", 0.1, "FP32 GEMMs with idle tensor cores must take this share of the GPU's busy time" },
	{ "dram_roof.min_throughput", 0.75, "DRAM read + write at or above this fraction of peak is at the roof (an H100 triad peaks at 81%)" },
	{ "dram_roof.min_busy_share", 0.2, "time at the DRAM roof, as a share of the GPU's busy time, before dram_roof fires" },
	{ "link_saturated.min_throughput", 0.8, "PCIe or NVLink throughput at or above this fraction of peak is saturated" },
	{ "link_saturated.min_comm_share", 0.25, "saturated time, as a share of the time copies and NCCL kernels run, before link_saturated fires" },
	{ "job.every_rank_up_to", 8, "a job of at most this many ranks has each rank's own rules run on every rank; a larger one on the slowest, the median and the awaited rank" },
	{ "straggler.min_wait_share", 0.05, "a collective is late when the others wait for its last rank this share of the median step" },
	{ "straggler.min_late_collectives", 3, "late collectives one rank must arrive last at to be the straggler" },
	{ "straggler.min_late_fraction", 0.75, "share of the waiting at late collectives that must be for that one rank" },
	{ "straggler.min_extra_share", 0.2, "what the last rank does more than the others before a late collective, as a share of the median step; less is a balanced job's jitter" },
	{ "imbalance.min_difference", 0.1, "compute per step of the slowest rank above the fastest's, as a fraction of the slowest's" },
	{ "exposed_comm.min_share", 0.1, "communication with no compute beside it, as a share of a rank's window" },
	{ "small_collectives.max_bytes", 65536, "a collective of at most this many bytes is small" },
	{ "small_collectives.min_per_iteration", 4, "small collectives per step on a rank before the rule fires" },
	{ "collective_bandwidth.min_bytes", 1048576, "collectives of at least this many bytes are judged against the link" },
	{ "collective_bandwidth.max_fraction", 0.5, "bus bandwidth below this fraction of the measured link is flagged" },
};
const int diag_nsetting_defs = sizeof diag_setting_defs / sizeof diag_setting_defs[0];

/* Settings whose meaning has a floor above 0: a ratio of bytes moved to
 * bytes used is never below 1, so a smaller threshold would flag every
 * kernel. */
static const struct {
	const char *key;
	double min;
} setting_floors[] = {
	{ "access.max_overfetch", 1 },
};

static double floor_of(const char *key)
{
	for (size_t i = 0; i < sizeof setting_floors / sizeof setting_floors[0]; i++)
		if (!strcmp(setting_floors[i].key, key))
			return setting_floors[i].min;
	return 0;
}

static int find_key(const char *key, size_t len)
{
	for (int i = 0; i < diag_nsetting_defs; i++)
		if (strlen(diag_setting_defs[i].key) == len && !strncmp(diag_setting_defs[i].key, key, len))
			return i;
	return -1;
}

int diag_settings__init(struct diag_settings *s)
{
	s->busy = NULL;
	s->values = malloc(sizeof *s->values * (size_t)diag_nsetting_defs);
	if (!s->values)
		return PROF_E_NOMEM;
	for (int i = 0; i < diag_nsetting_defs; i++)
		s->values[i] = diag_setting_defs[i].value;
	return 0;
}

void diag_settings__exit(struct diag_settings *s)
{
	free(s->values);
	s->values = NULL;
}

static int set_value(struct diag_settings *s, const char *key, size_t keylen, double v,
		     struct prof_error *err)
{
	int i = find_key(key, keylen);

	if (i < 0)
		return prof_error__set(err, PROF_E_USAGE, "unknown diagnose setting '%.*s' (see docs/diagnose.md)",
				       (int)keylen, key);
	if (!isfinite(v) || v < floor_of(diag_setting_defs[i].key))
		return prof_error__set(err, PROF_E_USAGE, "setting '%.*s' needs a number >= %g",
				       (int)keylen, key, floor_of(diag_setting_defs[i].key));
	s->values[i] = v;
	return 0;
}

int diag_settings__parse(struct diag_settings *s, const char *assignment, struct prof_error *err)
{
	const char *eq = strchr(assignment, '=');
	char *end;
	double v;

	if (!eq || eq == assignment)
		return prof_error__set(err, PROF_E_USAGE, "--set needs key=value, got '%s'", assignment);
	errno = 0;
	v = strtod(eq + 1, &end);
	if (errno || end == eq + 1 || *end)
		return prof_error__set(err, PROF_E_USAGE, "setting '%.*s': '%s' is not a number",
				       (int)(eq - assignment), assignment, eq + 1);
	return set_value(s, assignment, (size_t)(eq - assignment), v, err);
}

int diag_settings__load_json(struct diag_settings *s, const char *path, struct prof_error *err)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	const char *rest = NULL;
	cJSON *root = NULL, *it;
	size_t len = 0;
	int rc;

	if (!f)
		return prof_error__set(err, PROF_E_IO, "%s: cannot open thresholds file", path);
	rc = prof_file__read_stream(f, 0, &text, &len);
	if (rc == PROF_E_NOMEM) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	if (rc) {
		rc = prof_error__set(err, PROF_E_IO, "%s: cannot read thresholds file", path);
		goto out;
	}
	root = cJSON_ParseWithOpts(text, &rest, false);
	if (!cJSON_IsObject(root)) {
		rc = prof_error__set(err, PROF_E_USAGE, "%s: thresholds must be a JSON object of numbers", path);
		goto out;
	}
	/* One object and nothing after it but white space: a second value
	 * ("{...} {...}"), or a NUL byte with text behind it, is not the file
	 * the user thinks it is, and applying its first object alone would
	 * pass half of it silently. */
	rest += strspn(rest, " \t\r\n");
	if ((size_t)(rest - text) != len) {
		rc = prof_error__set(err, PROF_E_USAGE, "%s: text after the JSON object (at byte %zu): "
				     "thresholds must be one JSON object of numbers", path,
				     (size_t)(rest - text));
		goto out;
	}
	cJSON_ArrayForEach(it, root) {
		if (!cJSON_IsNumber(it)) {
			rc = prof_error__set(err, PROF_E_USAGE, "%s: value of '%s' is not a number", path,
					     it->string);
			goto out;
		}
		rc = set_value(s, it->string, strlen(it->string), it->valuedouble, err);
		if (rc)
			goto out;
	}
out:
	cJSON_Delete(root);
	free(text);
	fclose(f);
	return rc;
}

double diag_settings__get(const struct diag_settings *s, const char *key)
{
	int i = find_key(key, strlen(key));

	if (i < 0) {
		fprintf(stderr, "perfkit: internal error: unknown setting %s\n", key);
		abort();
	}
	return s->values[i];
}
