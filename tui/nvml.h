/* nvml.h - live GPU metrics for perfkit top's header, from NVML.
 *
 * libnvidia-ml is opened with dlopen at run time (it ships with the driver,
 * not with CUDA, and there is no nvml.h to build against), so perfkit top
 * runs where there is no driver at all. Every metric carries a validity bit:
 * what the library, the driver or the GPU cannot report is invalid and is
 * shown as N/A, never as 0. */
#ifndef TUI_NVML_H
#define TUI_NVML_H

#include <stdbool.h>
#include <stdint.h>

#define NVML_SONAME "libnvidia-ml.so.1"

struct nvml_sample {
	bool name_valid;
	char name[96];               /* as NVML reports it (not yet sanitised) */
	bool util_valid;
	unsigned util_percent;       /* GPU busy over NVML's last sample period */
	bool memory_valid;
	uint64_t memory_used_bytes, memory_total_bytes;
	bool power_valid;
	unsigned power_mw;
	bool sm_clock_valid;
	unsigned sm_clock_mhz;
};

struct nvml;

/* Load soname and pick the GPU with this UUID ("GPU-..."), or the first GPU
 * when uuid is NULL or unknown. NULL when NVML is missing or has no GPU: a
 * NULL handle is valid everywhere below. why (may be NULL) receives a short
 * reason. */
struct nvml *nvml__open(const char *soname, const char *uuid, const char **why);
/* The GPU with this UUID and no other (a row of the GPU panel); NULL when
 * NVML does not know it. */
struct nvml *nvml__open_exact(const char *soname, const char *uuid, const char **why);
/* Read the metrics now; those NVML refuses stay invalid. */
void nvml__sample(struct nvml *n, struct nvml_sample *out);
void nvml__close(struct nvml *n);

#endif
