// range_profiler.cpp - CUPTI range profiler sessions (see range_profiler.h).
// Auto range + kernel replay: every launch between start and stop is one
// range, replayed as often as the metrics need passes. A session holds one
// or more metric sets (each with its host object, config image and counter
// data); rp__use picks the one the next launch is measured with.
#include "range_profiler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <vector>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cupti_error.h"

struct rp_set {
	CUpti_Profiler_Host_Object *host = nullptr;
	std::vector<const char *> metrics;
	std::vector<uint8_t> config;
	std::vector<uint8_t> counter_data;
};

struct rp_session {
	CUcontext ctx;
	CUpti_RangeProfiler_Object *obj;
	const char *chip;
	std::vector<rp_set> sets;
	size_t active;
};

static int fail(CUptiResult r, const char *what)
{
	return cupti_error__set(r, what);
}

extern "C" const char *rp__last_error(void)
{
	return cupti_error__text();
}

static int init_counter_data(rp_session *ses)
{
	rp_set *s = &ses->sets[ses->active];
	CUpti_RangeProfiler_GetCounterDataSize_Params size = { CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	size.pRangeProfilerObject = ses->obj;
	size.pMetricNames = s->metrics.data();
	size.numMetrics = s->metrics.size();
	size.maxNumOfRanges = 1;
	size.maxNumRangeTreeNodes = 1;
	CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&size);
	if (r != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerGetCounterDataSize");
	s->counter_data.assign(size.counterDataSize, 0);
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	init.pRangeProfilerObject = ses->obj;
	init.counterDataSize = s->counter_data.size();
	init.pCounterData = s->counter_data.data();
	r = cuptiRangeProfilerCounterDataImageInitialize(&init);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiRangeProfilerCounterDataImageInitialize");
}

static int set_config(rp_session *ses)
{
	rp_set *s = &ses->sets[ses->active];
	CUpti_RangeProfiler_SetConfig_Params cfg = { CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	cfg.pRangeProfilerObject = ses->obj;
	cfg.configSize = s->config.size();
	cfg.pConfig = s->config.data();
	cfg.counterDataImageSize = s->counter_data.size();
	cfg.pCounterDataImage = s->counter_data.data();
	cfg.range = CUPTI_AutoRange;
	cfg.replayMode = CUPTI_KernelReplay;
	cfg.maxRangesPerPass = 1;
	cfg.numNestingLevels = 1;
	cfg.minNestingLevel = 1;
	cfg.passIndex = 0;
	cfg.targetNestingLevel = 0;
	CUptiResult r = cuptiRangeProfilerSetConfig(&cfg);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiRangeProfilerSetConfig");
}

// A metric set's host object and config image.
static int build_set(const char *chip, const char *const *metrics, int nmetrics, rp_set *set)
{
	CUptiResult r;

	set->metrics.assign(metrics, metrics + nmetrics);
	CUpti_Profiler_Host_Initialize_Params host = { CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	host.pChipName = chip;
	if ((r = cuptiProfilerHostInitialize(&host)) != CUPTI_SUCCESS)
		return fail(r, "cuptiProfilerHostInitialize");
	set->host = host.pHostObject;
	CUpti_Profiler_Host_ConfigAddMetrics_Params add = { CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	add.pHostObject = set->host;
	add.ppMetricNames = set->metrics.data();
	add.numMetrics = set->metrics.size();
	if ((r = cuptiProfilerHostConfigAddMetrics(&add)) != CUPTI_SUCCESS)
		return fail(r, "cuptiProfilerHostConfigAddMetrics");
	CUpti_Profiler_Host_GetConfigImageSize_Params size = { CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	size.pHostObject = set->host;
	if ((r = cuptiProfilerHostGetConfigImageSize(&size)) != CUPTI_SUCCESS)
		return fail(r, "cuptiProfilerHostGetConfigImageSize");
	set->config.assign(size.configImageSize, 0);
	CUpti_Profiler_Host_GetConfigImage_Params img = { CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	img.pHostObject = set->host;
	img.pConfigImage = set->config.data();
	img.configImageSize = set->config.size();
	if ((r = cuptiProfilerHostGetConfigImage(&img)) != CUPTI_SUCCESS)
		return fail(r, "cuptiProfilerHostGetConfigImage");
	return 0;
}

static void free_set(rp_set *set)
{
	if (set->host) {
		CUpti_Profiler_Host_Deinitialize_Params p = { CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };
		p.pHostObject = set->host;
		cuptiProfilerHostDeinitialize(&p);
		set->host = nullptr;
	}
}

// The profiler initialised once per process, and the chip of ctx.
static int chip_of(CUcontext ctx, const char **chip)
{
	static bool initialized;
	CUptiResult r;
	uint32_t device = 0;

	if (!initialized) {
		CUpti_Profiler_Initialize_Params init = { CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		if ((r = cuptiProfilerInitialize(&init)) != CUPTI_SUCCESS)
			return fail(r, "cuptiProfilerInitialize");
		initialized = true;
	}
	if ((r = cuptiGetDeviceId(ctx, &device)) != CUPTI_SUCCESS)
		return fail(r, "cuptiGetDeviceId");
	CUpti_Device_GetChipName_Params p = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	p.deviceIndex = device;
	if ((r = cuptiDeviceGetChipName(&p)) != CUPTI_SUCCESS)
		return fail(r, "cuptiDeviceGetChipName");
	*chip = p.pChipName;
	return 0;
}

extern "C" int rp__supported(CUcontext ctx, const char *const *metrics, int nmetrics)
{
	const char *chip = nullptr;
	rp_set probe;
	int ok;

	if (chip_of(ctx, &chip))
		return 0;
	ok = build_set(chip, metrics, nmetrics, &probe) == 0;
	free_set(&probe);
	return ok;
}

extern "C" int rp__open(CUcontext ctx, const char *const *metrics, int nmetrics, rp_session **out,
			char *msg, size_t cap)
{
	rp_session *s = new (std::nothrow) rp_session();
	CUptiResult r;
	int rc = -1;

	*out = nullptr;
	if (!s)
		return -1;
	if (chip_of(ctx, &s->chip))
		goto out;
	s->sets.emplace_back();
	if (build_set(s->chip, metrics, nmetrics, &s->sets[0]))
		goto out;
	{
		CUpti_RangeProfiler_Enable_Params en = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
		en.ctx = ctx;
		if ((r = cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS) {
			fail(r, "cuptiRangeProfilerEnable");
			goto out;
		}
		s->obj = en.pRangeProfilerObject;
		s->ctx = ctx;
	}
	if (init_counter_data(s) || set_config(s))
		goto out;
	*out = s;
	s = nullptr;
	rc = 0;
out:
	if (rc)
		std::snprintf(msg, cap, "%s", cupti_error__text());
	rp__close(s);
	return rc;
}

extern "C" int rp__add_set(rp_session *s, const char *const *metrics, int nmetrics)
{
	s->sets.emplace_back();
	if (build_set(s->chip, metrics, nmetrics, &s->sets.back())) {
		free_set(&s->sets.back());
		s->sets.pop_back();
		return -1;
	}
	return (int)s->sets.size() - 1;
}

extern "C" int rp__use(rp_session *s, int set)
{
	if (set < 0 || (size_t)set >= s->sets.size())
		return -1;
	if ((size_t)set == s->active)
		return 0;
	// The profiler object keeps the pass count of the first config it was
	// given (a later SetConfig of a set with more passes replays only the
	// first: its other counters read NaN), so a switch enables it anew.
	CUpti_RangeProfiler_Disable_Params off = { CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
	off.pRangeProfilerObject = s->obj;
	CUptiResult r = cuptiRangeProfilerDisable(&off);
	s->obj = nullptr;
	if (r != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerDisable");
	CUpti_RangeProfiler_Enable_Params en = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	en.ctx = s->ctx;
	if ((r = cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerEnable");
	s->obj = en.pRangeProfilerObject;
	s->active = (size_t)set;
	return init_counter_data(s) || set_config(s) ? -1 : 0;
}

extern "C" int rp__passes(rp_session *s, int set)
{
	if (set < 0 || (size_t)set >= s->sets.size())
		return -1;
	CUpti_Profiler_Host_GetNumOfPasses_Params p = { CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	p.pConfigImage = s->sets[set].config.data();
	p.configImageSize = s->sets[set].config.size();
	CUptiResult r = cuptiProfilerHostGetNumOfPasses(&p);
	return r == CUPTI_SUCCESS ? (int)p.numOfPasses : fail(r, "cuptiProfilerHostGetNumOfPasses");
}

extern "C" int rp__start(rp_session *s)
{
	CUpti_RangeProfiler_Start_Params p = { CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	p.pRangeProfilerObject = s->obj;
	CUptiResult r = cuptiRangeProfilerStart(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiRangeProfilerStart");
}

extern "C" int rp__stop(rp_session *s)
{
	CUpti_RangeProfiler_Stop_Params p = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	p.pRangeProfilerObject = s->obj;
	CUptiResult r = cuptiRangeProfilerStop(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiRangeProfilerStop");
}

extern "C" int rp__collect(rp_session *ses, double *values)
{
	rp_set *s = &ses->sets[ses->active];
	CUpti_RangeProfiler_DecodeData_Params dec = { CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	dec.pRangeProfilerObject = ses->obj;
	CUptiResult r = cuptiRangeProfilerDecodeData(&dec);
	if (r != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerDecodeData");
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = { CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	info.pCounterDataImage = s->counter_data.data();
	info.counterDataImageSize = s->counter_data.size();
	if ((r = cuptiRangeProfilerGetCounterDataInfo(&info)) != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerGetCounterDataInfo");
	int got = 0;
	if (info.numTotalRanges > 0) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = s->host;
		ev.pCounterDataImage = s->counter_data.data();
		ev.counterDataImageSize = s->counter_data.size();
		ev.rangeIndex = 0;
		ev.ppMetricNames = s->metrics.data();
		ev.numMetrics = s->metrics.size();
		ev.pMetricValues = values;
		if ((r = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS)
			return fail(r, "cuptiProfilerHostEvaluateToGpuValues");
		got = 1;
	}
	// a fresh image for the next range: the old one holds this range
	if (init_counter_data(ses) || set_config(ses))
		return -1;
	return got;
}

extern "C" void rp__close(rp_session *s)
{
	if (!s)
		return;
	if (s->obj) {
		CUpti_RangeProfiler_Disable_Params p = { CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
		p.pRangeProfilerObject = s->obj;
		cuptiRangeProfilerDisable(&p);
	}
	for (rp_set &set : s->sets)
		free_set(&set);
	delete s;
}

extern "C" char *rp__demangle(const char *mangled)
{
	int status = 0;
	char *out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
	return status == 0 ? out : nullptr;
}
