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
	std::vector<uint8_t> config;
	// The counter data image: image_bytes of this buffer are the image of
	// the current decode.
	std::vector<uint8_t> counter_data;
	size_t image_bytes = 0;
	size_t image_peak = 0; // the largest image of its decodes
	std::vector<double> values;
	size_t min_samples = 0, max_samples = 0; // the room of each decode's image
	uint64_t interval_ns = 0;
	uint64_t last_end = 0;   // the end of the last sample decoded, or when sampling started
	uint64_t stopped_at = 0; // when it was stopped (0: running or never started)
	bool started = false;
	bool decoded_since_start = false;
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

// An empty counter data image for samples samples, at the start of the
// buffer (grown when it is too small). Initialising touches all of it.
static int image_for(pm_sampler *s, size_t samples)
{
	CUpti_PmSampling_GetCounterDataSize_Params size = {
		CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE };
	CUptiResult r;

	size.pPmSamplingObject = s->obj;
	size.pMetricNames = s->metrics.data();
	size.numMetrics = s->metrics.size();
	size.maxSamples = samples;
	if ((r = cuptiPmSamplingGetCounterDataSize(&size)) != CUPTI_SUCCESS)
		return fail(r, "cuptiPmSamplingGetCounterDataSize");
	// grown when too small; given back when far too large (the first
	// decode's largest image is not kept for the run)
	if (s->counter_data.size() < size.counterDataSize ||
	    s->counter_data.size() / 2 > size.counterDataSize)
		std::vector<uint8_t>(size.counterDataSize).swap(s->counter_data);
	s->image_bytes = size.counterDataSize;
	CUpti_PmSampling_CounterDataImage_Initialize_Params p = {
		CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	p.pPmSamplingObject = s->obj;
	p.counterDataSize = s->image_bytes;
	p.pCounterData = s->counter_data.data();
	r = cuptiPmSamplingCounterDataImageInitialize(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiPmSamplingCounterDataImageInitialize");
}

static uint64_t now_ns()
{
	uint64_t t = 0;

	cuptiGetTimestamp(&t);
	return t;
}

extern "C" int pm__open(int device_index, const struct pm_wish *wishes, int nwishes,
			uint64_t interval_ns, size_t hw_buffer_bytes, size_t min_samples_per_decode,
			size_t max_samples_per_decode,
			const char **chosen, struct pm_sampler **out, char *msg, size_t cap)
{
	std::vector<uint8_t> avail;
	std::vector<int> wish_of;
	CUptiResult r;
	size_t passes = 0;
	pm_sampler *s = new pm_sampler();
	const char *chip;

	*out = nullptr;
	s->min_samples = min_samples_per_decode;
	s->max_samples = max_samples_per_decode;
	s->interval_ns = interval_ns;
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
		// Keep the latest: a buffer that fills (the decodes falling behind
		// the sampling rate) overwrites its oldest samples, which the
		// caller sees and counts as a gap. With KEEP_OLDEST a full buffer
		// fails every later decode, stop and start included (an H100 at
		// 100 kHz: nothing more after the first overflow). Turing has only
		// KEEP_OLDEST.
		p.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
		if ((r = cuptiPmSamplingSetConfig(&p)) != CUPTI_SUCCESS) {
			p.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
			if ((r = cuptiPmSamplingSetConfig(&p)) != CUPTI_SUCCESS) {
				fail(r, "cuptiPmSamplingSetConfig");
				goto out;
			}
		}
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
	s->decoded_since_start = false;
	s->stopped_at = 0;
	s->last_end = now_ns();
	return 0;
}

extern "C" int pm__stop(struct pm_sampler *s)
{
	CUpti_PmSampling_Stop_Params p = { CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
	if (!s->started)
		return 0;
	p.pPmSamplingObject = s->obj;
	s->started = false;
	s->stopped_at = now_ns();
	CUptiResult r = cuptiPmSamplingStop(&p);
	return r == CUPTI_SUCCESS ? 0 : fail(r, "cuptiPmSamplingStop");
}

// Evaluate the samples the counter data image completed and hand each on.
static int emit(pm_sampler *s, pm_sample_fn fn, void *ctx)
{
	CUpti_PmSampling_GetCounterDataInfo_Params info = { CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE };
	CUptiResult r;

	info.pCounterDataImage = s->counter_data.data();
	info.counterDataImageSize = s->image_bytes;
	if ((r = cuptiPmSamplingGetCounterDataInfo(&info)) != CUPTI_SUCCESS)
		return fail(r, "cuptiPmSamplingGetCounterDataInfo");
	for (size_t i = 0; i < info.numCompletedSamples; i++) {
		CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
			CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE };
		si.pPmSamplingObject = s->obj;
		si.pCounterDataImage = s->counter_data.data();
		si.counterDataImageSize = s->image_bytes;
		si.sampleIndex = i;
		if ((r = cuptiPmSamplingCounterDataGetSampleInfo(&si)) != CUPTI_SUCCESS)
			return fail(r, "cuptiPmSamplingCounterDataGetSampleInfo");
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = s->host;
		ev.pCounterDataImage = s->counter_data.data();
		ev.counterDataImageSize = s->image_bytes;
		ev.rangeIndex = i;
		ev.ppMetricNames = s->metrics.data();
		ev.numMetrics = s->metrics.size();
		ev.pMetricValues = s->values.data();
		if ((r = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS)
			return fail(r, "cuptiProfilerHostEvaluateToGpuValues");
		fn(ctx, si.startTimestamp, si.endTimestamp, s->values.data(), (int)s->values.size());
		if (si.endTimestamp > s->last_end)
			s->last_end = si.endTimestamp;
	}
	return (int)info.numCompletedSamples;
}

// A decode that fills the counter data image stops there, and CUPTI drops
// the rest of what the hardware buffer held (seen on an H100: after a full
// image the next decode starts 400 ms later, or finds nothing once
// sampling stopped). So each image has room for twice the samples due
// since the last one decoded, and at least min_samples: a decode finds
// more samples than the host's clock says are due (1.4 to 1.9 times, on an
// H100 at 10 kHz), and a decode held up gets a larger image rather than
// losing samples. The first decode after the start (which found samples
// ending up to 140 ms after it) and the last, after the stop (what no
// later decode will take), get the largest image: only more than
// max_samples overflow them.
extern "C" int pm__decode(struct pm_sampler *s, pm_sample_fn fn, void *ctx, int *overflowed)
{
	uint64_t until = s->started ? now_ns() : s->stopped_at;
	uint64_t due = until > s->last_end && s->interval_ns ? (until - s->last_end) / s->interval_ns : 0;
	size_t samples = due < s->max_samples ? (size_t)(2 * due) : s->max_samples;
	bool forced = !s->started || !s->decoded_since_start;

	*overflowed = 0;
	s->decoded_since_start = true;
	if (forced)
		samples = s->max_samples;
	if (samples < s->min_samples)
		samples = s->min_samples;
	if (samples > s->max_samples)
		samples = s->max_samples;
	if (image_for(s, samples))
		return -1;
	if (s->image_bytes > s->image_peak)
		s->image_peak = s->image_bytes;
	CUpti_PmSampling_DecodeData_Params p = { CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE };
	p.pPmSamplingObject = s->obj;
	p.pCounterDataImage = s->counter_data.data();
	p.counterDataImageSize = s->image_bytes;
	CUptiResult r = cuptiPmSamplingDecodeData(&p);
	// KEEP_OLDEST's overflow comes as CUPTI_ERROR_OUT_OF_MEMORY
	if (p.overflow || r == CUPTI_ERROR_OUT_OF_MEMORY ||
	    (r == CUPTI_SUCCESS && p.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL))
		*overflowed = 1;
	if (r != CUPTI_SUCCESS)
		return fail(r, r == CUPTI_ERROR_OUT_OF_MEMORY ? "the hardware buffer overflowed"
							    : "cuptiPmSamplingDecodeData");
	return emit(s, fn, ctx);
}

extern "C" uint64_t pm__periods_undecoded(const struct pm_sampler *s)
{
	if (!s->stopped_at || s->stopped_at <= s->last_end || !s->interval_ns)
		return 0;
	uint64_t gap = s->stopped_at - s->last_end;
	return gap / s->interval_ns + (gap % s->interval_ns >= s->interval_ns - s->interval_ns / 2);
}

extern "C" size_t pm__counter_data_bytes(const struct pm_sampler *s)
{
	return s->image_peak;
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
