// pm_sampler.cpp - CUPTI PM sampling of one GPU (see pm_sampler.h).
// Host side: a config image of the chosen metrics, built against the
// device's counter availability so that counters another session holds are
// left out up front. Target side: enable, set the config, start; the
// caller decodes the hardware buffer into a counter data image now and then
// and evaluates each completed sample.
#include "pm_sampler.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "cupti_error.h"


struct pm_sampler {
	CUpti_PmSampling_Object *obj = nullptr;
	CUpti_Profiler_Host_Object *host = nullptr;
	std::vector<const char *> metrics;
	std::vector<uint8_t> config, counter_data;
	std::vector<double> values;
	size_t max_samples = 0; // what the counter data image holds
	bool started = false;
};

static int fail(CUptiResult r, const char *what)
{
	return cupti_error__set(r, what);
}

extern "C" const char *pm__last_error(void)
{
	return cupti_error__text();
}

static CUpti_Profiler_Host_Object *host_new(const char *chip, std::vector<uint8_t> &avail)
{
	CUpti_Profiler_Host_Initialize_Params p = { CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail.empty() ? nullptr : avail.data();
	CUptiResult r = cuptiProfilerHostInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		fail(r, "cuptiProfilerHostInitialize");
		return nullptr;
	}
	return p.pHostObject;
}

static void host_delete(CUpti_Profiler_Host_Object *h)
{
	CUpti_Profiler_Host_Deinitialize_Params p = { CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };
	p.pHostObject = h;
	if (h)
		cuptiProfilerHostDeinitialize(&p);
}

// The config image of metrics on a fresh host object; its pass count in
// *passes. Leaves the host object in s->host on success.
static int build_config(const char *chip, std::vector<uint8_t> &avail,
			std::vector<const char *> &metrics, std::vector<uint8_t> &config,
			CUpti_Profiler_Host_Object **host, size_t *passes)
{
	CUptiResult r;

	*host = host_new(chip, avail);
	if (!*host)
		return -1;
	CUpti_Profiler_Host_ConfigAddMetrics_Params add = { CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	add.pHostObject = *host;
	add.ppMetricNames = metrics.data();
	add.numMetrics = metrics.size();
	if ((r = cuptiProfilerHostConfigAddMetrics(&add)) != CUPTI_SUCCESS)
		goto fail;
	{
		CUpti_Profiler_Host_GetConfigImageSize_Params size = {
			CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
		size.pHostObject = *host;
		if ((r = cuptiProfilerHostGetConfigImageSize(&size)) != CUPTI_SUCCESS)
			goto fail;
		config.assign(size.configImageSize, 0);
		CUpti_Profiler_Host_GetConfigImage_Params img = { CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
		img.pHostObject = *host;
		img.pConfigImage = config.data();
		img.configImageSize = config.size();
		if ((r = cuptiProfilerHostGetConfigImage(&img)) != CUPTI_SUCCESS)
			goto fail;
		CUpti_Profiler_Host_GetNumOfPasses_Params np = { CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
		np.pConfigImage = config.data();
		np.configImageSize = config.size();
		if ((r = cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS)
			goto fail;
		*passes = np.numOfPasses;
	}
	return 0;
fail:
	fail(r, "config image");
	host_delete(*host);
	*host = nullptr;
	return -1;
}

// Whether the GPU can sample metric on its own.
static bool supported(const char *chip, std::vector<uint8_t> &avail, const char *metric)
{
	std::vector<const char *> one(1, metric);
	std::vector<uint8_t> config;
	CUpti_Profiler_Host_Object *h = nullptr;
	size_t passes = 0;

	if (build_config(chip, avail, one, config, &h, &passes))
		return false;
	host_delete(h);
	return passes == 1;
}

static int counter_data_init(pm_sampler *s)
{
	CUpti_PmSampling_CounterDataImage_Initialize_Params p = {
		CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	p.pPmSamplingObject = s->obj;
	p.counterDataSize = s->counter_data.size();
	p.pCounterData = s->counter_data.data();
	CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiPmSamplingCounterDataImageInitialize");
}

extern "C" int pm__open(int device_index, const struct pm_wish *wishes, int nwishes,
			uint64_t interval_ns, size_t hw_buffer_bytes, size_t max_samples_per_decode,
			const char **chosen, struct pm_sampler **out, char *msg, size_t cap)
{
	std::vector<uint8_t> avail;
	std::vector<int> wish_of;
	CUptiResult r;
	size_t passes = 0;
	pm_sampler *s = new pm_sampler();
	const char *chip;

	*out = nullptr;
	s->max_samples = max_samples_per_decode;
	{
		CUpti_Profiler_Initialize_Params init = { CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		if ((r = cuptiProfilerInitialize(&init)) != CUPTI_SUCCESS) {
			fail(r, "cuptiProfilerInitialize");
			goto out;
		}
	}
	{
		CUpti_Device_GetChipName_Params p = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
		p.deviceIndex = (size_t)device_index;
		if ((r = cuptiDeviceGetChipName(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiDeviceGetChipName");
			goto out;
		}
		chip = p.pChipName;
	}
	{
		// Counters another session holds on the device are not available.
		CUpti_PmSampling_GetCounterAvailability_Params p = {
			CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE };
		p.deviceIndex = (size_t)device_index;
		if ((r = cuptiPmSamplingGetCounterAvailability(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiPmSamplingGetCounterAvailability");
			goto out;
		}
		avail.assign(p.counterAvailabilityImageSize, 0);
		p.pCounterAvailabilityImage = avail.data();
		if ((r = cuptiPmSamplingGetCounterAvailability(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiPmSamplingGetCounterAvailability");
			goto out;
		}
	}
	for (int i = 0; i < nwishes; i++) {
		chosen[i] = nullptr;
		for (const char *const *c = wishes[i].candidates; *c && !chosen[i]; c++)
			if (supported(chip, avail, *c))
				chosen[i] = *c;
		if (!chosen[i] && wishes[i].required) {
			std::snprintf(cupti_error__text(), 256, "this GPU (%s) cannot sample %s",
				      chip, wishes[i].candidates[0]);
			goto out;
		}
		if (chosen[i]) {
			s->metrics.push_back(chosen[i]);
			wish_of.push_back(i);
		}
	}
	// Every metric samples on its own; together they may need more passes
	// than sampling has: leave optional ones out, last first.
	for (;;) {
		if (build_config(chip, avail, s->metrics, s->config, &s->host, &passes))
			goto out;
		if (passes == 1)
			break;
		host_delete(s->host);
		s->host = nullptr;
		size_t k = s->metrics.size();
		while (k-- > 0 && wishes[wish_of[k]].required)
			;
		if (k >= s->metrics.size()) {
			std::snprintf(cupti_error__text(), 256,
				      "the required GPU metrics need %zu passes; sampling has one", passes);
			goto out;
		}
		chosen[wish_of[k]] = nullptr;
		s->metrics.erase(s->metrics.begin() + (long)k);
		wish_of.erase(wish_of.begin() + (long)k);
	}
	{
		CUpti_PmSampling_Enable_Params p = { CUpti_PmSampling_Enable_Params_STRUCT_SIZE };
		p.deviceIndex = (size_t)device_index;
		if ((r = cuptiPmSamplingEnable(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiPmSamplingEnable");
			goto out;
		}
		s->obj = p.pPmSamplingObject;
	}
	{
		CUpti_PmSampling_SetConfig_Params p = { CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE };
		p.pPmSamplingObject = s->obj;
		p.configSize = s->config.size();
		p.pConfig = s->config.data();
		p.hardwareBufferSize = hw_buffer_bytes;
		p.samplingInterval = interval_ns;
		p.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
		// Keep the oldest: a full buffer is reported (overflow) rather
		// than silently overwritten.
		p.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
		if ((r = cuptiPmSamplingSetConfig(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiPmSamplingSetConfig");
			goto out;
		}
	}
	{
		CUpti_PmSampling_GetCounterDataSize_Params p = {
			CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE };
		p.pPmSamplingObject = s->obj;
		p.pMetricNames = s->metrics.data();
		p.numMetrics = s->metrics.size();
		p.maxSamples = s->max_samples;
		if ((r = cuptiPmSamplingGetCounterDataSize(&p)) != CUPTI_SUCCESS) {
			fail(r, "cuptiPmSamplingGetCounterDataSize");
			goto out;
		}
		s->counter_data.assign(p.counterDataSize, 0);
		if (counter_data_init(s))
			goto out;
	}
	s->values.assign(s->metrics.size(), 0.0);
	*out = s;
	return 0;
out:
	std::snprintf(msg, cap, "%s", cupti_error__text());
	pm__close(s);
	return -1;
}

extern "C" int pm__start(struct pm_sampler *s)
{
	CUpti_PmSampling_Start_Params p = { CUpti_PmSampling_Start_Params_STRUCT_SIZE };
	p.pPmSamplingObject = s->obj;
	CUptiResult r = cuptiPmSamplingStart(&p);
	if (r != CUPTI_SUCCESS)
		return fail(r, "cuptiPmSamplingStart");
	s->started = true;
	return 0;
}

extern "C" int pm__stop(struct pm_sampler *s)
{
	CUpti_PmSampling_Stop_Params p = { CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
	if (!s->started)
		return 0;
	p.pPmSamplingObject = s->obj;
	s->started = false;
	CUptiResult r = cuptiPmSamplingStop(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiPmSamplingStop");
}

// Evaluate the samples the counter data image completed, then empty it for
// the next decode (every decode into a fresh image: one left partly filled
// was not appended to reliably). Initialising the image touches all of it
// (about 29 KB a sample on an H100): its size, not the samples decoded,
// sets what each decode costs (an image of 10,000 samples took 19 ms a
// decode, 94% of the sampler thread's time at a 20 ms period), so the image
// is kept small (gpu_metrics.c).
static int emit(pm_sampler *s, pm_sample_fn fn, void *ctx)
{
	CUpti_PmSampling_GetCounterDataInfo_Params info = { CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE };
	CUptiResult r;

	info.pCounterDataImage = s->counter_data.data();
	info.counterDataImageSize = s->counter_data.size();
	if ((r = cuptiPmSamplingGetCounterDataInfo(&info)) != CUPTI_SUCCESS)
		return fail(r, "cuptiPmSamplingGetCounterDataInfo");
	for (size_t i = 0; i < info.numCompletedSamples; i++) {
		CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
			CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE };
		si.pPmSamplingObject = s->obj;
		si.pCounterDataImage = s->counter_data.data();
		si.counterDataImageSize = s->counter_data.size();
		si.sampleIndex = i;
		if ((r = cuptiPmSamplingCounterDataGetSampleInfo(&si)) != CUPTI_SUCCESS)
			return fail(r, "cuptiPmSamplingCounterDataGetSampleInfo");
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = s->host;
		ev.pCounterDataImage = s->counter_data.data();
		ev.counterDataImageSize = s->counter_data.size();
		ev.rangeIndex = i;
		ev.ppMetricNames = s->metrics.data();
		ev.numMetrics = s->metrics.size();
		ev.pMetricValues = s->values.data();
		if ((r = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS)
			return fail(r, "cuptiProfilerHostEvaluateToGpuValues");
		fn(ctx, si.startTimestamp, si.endTimestamp, s->values.data(), (int)s->values.size());
	}
	if (counter_data_init(s))
		return -1;
	return (int)info.numCompletedSamples;
}

extern "C" int pm__decode(struct pm_sampler *s, pm_sample_fn fn, void *ctx, int *overflowed)
{
	int total = 0;

	*overflowed = 0;
	for (;;) {
		CUpti_PmSampling_DecodeData_Params p = { CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE };
		p.pPmSamplingObject = s->obj;
		p.pCounterDataImage = s->counter_data.data();
		p.counterDataImageSize = s->counter_data.size();
		CUptiResult r = cuptiPmSamplingDecodeData(&p);
		if (r != CUPTI_SUCCESS)
			return fail(r, "cuptiPmSamplingDecodeData");
		if (p.overflow)
			*overflowed = 1;
		int n = emit(s, fn, ctx);
		if (n < 0)
			return n;
		total += n;
		// a full image: go on into the emptied one (the image is sized so
		// that this does not happen between two decodes: what does not fit
		// may be lost)
		if (p.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			return total;
	}
}

extern "C" size_t pm__counter_data_bytes(const struct pm_sampler *s)
{
	return s->counter_data.size();
}

extern "C" void pm__close(struct pm_sampler *s)
{
	if (!s)
		return;
	pm__stop(s);
	if (s->obj) {
		CUpti_PmSampling_Disable_Params p = { CUpti_PmSampling_Disable_Params_STRUCT_SIZE };
		p.pPmSamplingObject = s->obj;
		cuptiPmSamplingDisable(&p);
	}
	host_delete(s->host);
	delete s;
}
