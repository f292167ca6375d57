/* nvml.c - NVML through dlopen (nvml.h). The handful of prototypes perfkit
 * top calls are declared here from the NVML API reference; each symbol is
 * looked up by name, and a missing one only leaves its metric invalid. */
#include "nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_return; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device_st *nvml_device; /* nvmlDevice_t */

struct nvml_utilization { unsigned gpu, memory; };          /* nvmlUtilization_t */
struct nvml_memory { unsigned long long total, free, used; }; /* nvmlMemory_t */

#define NVML_OK 0
#define NVML_CLOCK_SM 1 /* nvmlClockType_t */

struct nvml {
	void *lib;
	nvml_device dev;
	nvml_return (*shutdown)(void);
	nvml_return (*get_name)(nvml_device, char *, unsigned);
	nvml_return (*get_utilization)(nvml_device, struct nvml_utilization *);
	nvml_return (*get_memory)(nvml_device, struct nvml_memory *);
	nvml_return (*get_power)(nvml_device, unsigned *);
	nvml_return (*get_clock)(nvml_device, int, unsigned *);
};

/* dlsym returns void *; converting it to a function pointer goes through
 * memcpy, which ISO C allows where a cast would not be. */
static void sym(void *lib, const char *name, void *fn_ptr)
{
	void *p = dlsym(lib, name);

	memcpy(fn_ptr, &p, sizeof p);
}

static struct nvml *open_device(const char *soname, const char *uuid, bool first_if_unknown,
				 const char **why)
{
	nvml_return (*init)(void) = NULL;
	nvml_return (*by_index)(unsigned, nvml_device *) = NULL;
	nvml_return (*by_uuid)(const char *, nvml_device *) = NULL;
	struct nvml *n;
	const char *reason = NULL;

	n = calloc(1, sizeof *n);
	if (!n) {
		reason = "out of memory";
		goto fail;
	}
	n->lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		reason = "no NVML library (driver not installed)";
		goto fail;
	}
	sym(n->lib, "nvmlInit_v2", &init);
	sym(n->lib, "nvmlShutdown", &n->shutdown);
	sym(n->lib, "nvmlDeviceGetHandleByIndex_v2", &by_index);
	sym(n->lib, "nvmlDeviceGetHandleByUUID", &by_uuid);
	sym(n->lib, "nvmlDeviceGetName", &n->get_name);
	sym(n->lib, "nvmlDeviceGetUtilizationRates", &n->get_utilization);
	sym(n->lib, "nvmlDeviceGetMemoryInfo", &n->get_memory);
	sym(n->lib, "nvmlDeviceGetPowerUsage", &n->get_power);
	sym(n->lib, "nvmlDeviceGetClockInfo", &n->get_clock);
	if (!init || !n->shutdown || init() != NVML_OK) {
		n->shutdown = NULL;
		reason = "NVML cannot start (no driver or no GPU)";
		goto fail;
	}
	if (!(uuid && by_uuid && by_uuid(uuid, &n->dev) == NVML_OK) &&
	    !(first_if_unknown && by_index && by_index(0, &n->dev) == NVML_OK)) {
		reason = first_if_unknown ? "NVML sees no GPU" : "NVML does not know this GPU";
		goto fail;
	}
	return n;
fail:
	if (why)
		*why = reason;
	nvml__close(n);
	return NULL;
}

struct nvml *nvml__open(const char *soname, const char *uuid, const char **why)
{
	return open_device(soname, uuid, true, why);
}

struct nvml *nvml__open_exact(const char *soname, const char *uuid, const char **why)
{
	return open_device(soname, uuid, false, why);
}

void nvml__sample(struct nvml *n, struct nvml_sample *out)
{
	struct nvml_utilization util;
	struct nvml_memory mem;

	memset(out, 0, sizeof *out);
	if (!n)
		return;
	if (n->get_name && n->get_name(n->dev, out->name, sizeof out->name) == NVML_OK) {
		out->name[sizeof out->name - 1] = '\0';
		out->name_valid = true;
	}
	if (n->get_utilization && n->get_utilization(n->dev, &util) == NVML_OK) {
		out->util_valid = true;
		out->util_percent = util.gpu;
	}
	if (n->get_memory && n->get_memory(n->dev, &mem) == NVML_OK) {
		out->memory_valid = true;
		out->memory_used_bytes = mem.used;
		out->memory_total_bytes = mem.total;
	}
	if (n->get_power && n->get_power(n->dev, &out->power_mw) == NVML_OK)
		out->power_valid = true;
	if (n->get_clock && n->get_clock(n->dev, NVML_CLOCK_SM, &out->sm_clock_mhz) == NVML_OK)
		out->sm_clock_valid = true;
}

void nvml__close(struct nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}
