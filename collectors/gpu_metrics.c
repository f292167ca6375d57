/* gpu_metrics.c - sampled GPU metrics (`perfkit run --gpu-metrics[=HZ]`,
 * env PERFKIT_GPU_METRICS=HZ): the hardware counters of every GPU the
 * program makes a context on, read HZ times a second through CUPTI's PM
 * sampling, alongside the trace and without replay.
 *
 * A device is opened when the program's first context on it is created
 * (so only the GPUs a rank uses are sampled, and other ranks can sample
 * theirs). Each device has a sampler thread of its own, started then: it
 * opens the device, then decodes its hardware buffer every DECODE_MS,
 * evaluates the samples and queues rows; the writer thread takes the queue
 * at each flush (gpu_metrics__write), as it takes CUPTI's buffers.
 * A sample costs its thread about 100 us on an H100's host (CUPTI's decode
 * and evaluation, the image's initialisation), so one thread for two GPUs
 * at 10 kHz fell behind (a quarter of the samples lost on two H200s); a
 * thread per GPU keeps each GPU's decodes on time however many there are. Opening (seconds for the first GPU) is done one GPU at a
 * time, under open_lock, and never holds up another GPU's decodes. The
 * context callback waits for its device to be opened, so the samples cover
 * the program's first kernel, but only up to OPEN_WAIT_MS: it never hangs
 * the program.
 *
 * A device's sampler is closed (stopped, its buffer decoded, disabled) when
 * the program's last context on it is destroyed, or at exit by a handler
 * registered once the first sampler is open: CUPTI's profiler sets up its
 * own teardown when it is initialised, after the collector's exit handler,
 * and atexit runs handlers last-registered first, so ours must come later
 * to run while the sampling session is still CUPTI's to close. A later
 * context on that device opens it again, as a sampler of its own (a new
 * typeId): the time it was closed is no sample period.
 *
 * Samples lost (the hardware buffer full between two decodes) are counted
 * from the gaps between a sampler's samples (mapping__samples_dropped). */
#define _GNU_SOURCE
#include "collector.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "mapping.h"
#include "metrics/pm_sampler.h"
#include "prof/event.h"
#include "prof/protocol.h"
#include "prof/store.h"

#define MAX_DEVICES 64
#define DECODE_MS 20
/* For the cost bench (bench/gpu_metrics_cost.sh) the decode period can be
 * set from the environment (1 to 10,000 ms). */
#define ENV_DECODE_MS "PERFKIT_GPU_METRICS_DECODE_MS"
/* Each decode's counter data image (pm_sampler.cpp): room for twice the
 * samples due since the last decode, and at least IMAGE_MS of samples at
 * the rate asked, IMAGE_MIN_SAMPLES to IMAGE_MAX_SAMPLES (about 29 KB a
 * sample of host memory on an H100: 58 MB for 200 ms at 10 kHz, 237 MB at
 * the most, for a sampler held up 0.4 s at 10 kHz). Initialising the image
 * before each decode touches all of it; a smaller floor (40 ms of samples
 * at 10 kHz) cost the bundled workloads no less. */
#define IMAGE_MS 200
#define IMAGE_MIN_SAMPLES 1024
#define IMAGE_MAX_SAMPLES 8192
#define OPEN_WAIT_MS 10000
/* The hardware buffer: about 25,000 samples of every metric on an H100
 * (9 to 13 KB a sample): 2.5 s of decodes falling behind at 10 kHz, 0.25 s
 * at 100 kHz. Fuller, it overwrites its oldest samples (pm_sampler.cpp). */
#define HW_BUFFER_BYTES (256u << 20)

/* The metrics, by the names nsys gives them, each with the CUPTI metrics
 * that measure it, the first the GPU can sample winning (HBM GPUs count
 * DRAM traffic in dram__, GDDR ones in the memory controller's dramc__:
 * the H100's host side accepts dramc__ for sampling, but reads ~0). The
 * CUPTI name each was read from is stored as its typeName. */
enum metric {
	GM_SM_ACTIVE, GM_SM_ISSUE, GM_TENSOR, GM_DRAM_READ, GM_DRAM_WRITE,
	GM_UNALLOC_ACTIVE, GM_UNALLOC_IDLE, GM_GR_ACTIVE, GM_PCIE_RX, GM_PCIE_TX,
	GM_NVLINK_RX, GM_NVLINK_TX, GM_GPC_CLOCK, GM__SAMPLED,
	/* derived from two sampled ones: the warp slots neither left unallocated */
	GM_WARPS_IN_FLIGHT = GM__SAMPLED, GM__COUNT
};

#define CANDIDATES(...) ((const char *const[]){ __VA_ARGS__, NULL })
static const struct {
	const char *name;
	struct pm_wish wish;
	double scale; /* stored value = sampled value * scale */
} metrics[GM__SAMPLED] = {
	[GM_SM_ACTIVE] = { "SMs Active [Throughput %]",
			   { CANDIDATES("sm__cycles_active.avg.pct_of_peak_sustained_elapsed"), 1 }, 1 },
	[GM_SM_ISSUE] = { "SM Issue [Throughput %]",
			  { CANDIDATES("sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_TENSOR] = { "Tensor Active [Throughput %]",
			{ CANDIDATES("sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
				     "sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_DRAM_READ] = { "DRAM Read Bandwidth [Throughput %]",
			   { CANDIDATES("dram__bytes_read.sum.pct_of_peak_sustained_elapsed",
					"dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
					"dramc__read_throughput.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_DRAM_WRITE] = { "DRAM Write Bandwidth [Throughput %]",
			    { CANDIDATES("dram__bytes_write.sum.pct_of_peak_sustained_elapsed",
					 "dram__write_throughput.avg.pct_of_peak_sustained_elapsed",
					 "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_UNALLOC_ACTIVE] = { "Unallocated Warps in Active SMs [Throughput %]",
				{ CANDIDATES("tpc__warps_inactive_sm_active_realtime.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_UNALLOC_IDLE] = { "Unallocated Warps in Idle SMs [Throughput %]",
			      { CANDIDATES("tpc__warps_inactive_sm_idle_realtime.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_GR_ACTIVE] = { "GR Active [Throughput %]",
			   { CANDIDATES("gr__cycles_active.sum.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_PCIE_RX] = { "PCIe RX Throughput [Throughput %]",
			 { CANDIDATES("pcie__read_bytes.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_PCIE_TX] = { "PCIe TX Throughput [Throughput %]",
			 { CANDIDATES("pcie__write_bytes.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_NVLINK_RX] = { "NVLink RX Throughput [Throughput %]",
			   { CANDIDATES("nvlrx__bytes.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_NVLINK_TX] = { "NVLink TX Throughput [Throughput %]",
			   { CANDIDATES("nvltx__bytes.avg.pct_of_peak_sustained_elapsed"), 0 }, 1 },
	[GM_GPC_CLOCK] = { "GPC Clock Frequency [MHz]",
			   { CANDIDATES("gpc__cycles_elapsed.avg.per_second"), 0 }, 1e-6 },
};
static const char *const warps_in_flight_name = "Compute Warps in Flight [Throughput %]";

/* What the capture's PERFKIT_COUNTERS get from the samplers at each flush
 * (those not 0), by name. */
enum gm_count {
	GC_SAMPLES, GC_DROPPED, GC_OVERFLOWS, GC_ROWS_LOST, GC_DEVICES_FAILED, GC_ENDED_EARLY,
	GC_DECODE_NS, GC_IMAGE_BYTES, /* the samplers' own cost */
	GC__COUNT
};
static const char *const count_names[GC__COUNT] = {
	[GC_SAMPLES] = "gpu_metric_samples",
	[GC_DROPPED] = PROF_COUNTER_GPU_METRIC_SAMPLES_DROPPED,
	[GC_OVERFLOWS] = "gpu_metric_buffer_overflows",
	[GC_ROWS_LOST] = "gpu_metric_rows_lost",
	[GC_DEVICES_FAILED] = "gpu_metric_devices_not_sampled",
	[GC_ENDED_EARLY] = PROF_COUNTER_GPU_METRIC_ENDED_EARLY,
	[GC_DECODE_NS] = "gpu_metric_decode_ns",
	[GC_IMAGE_BYTES] = "gpu_metric_counter_data_bytes",
};

struct device {
	int index;
	pthread_t thread;
	int thread_running;        /* its sampler thread was started */
	pthread_mutex_t lock;      /* decoding and closing its sampler: one at a time */
	int64_t type_id;           /* its sampler's, new each time it is opened */
	int opens;
	int contexts;              /* the program's live contexts on it */
	int closing;               /* its last context went; its sampler is being closed */
	int decode_failed;         /* its sampler can decode nothing more (until reopened) */
	uint64_t last_end_ns;      /* the end of its sampler's last sample; 0: none yet */
	struct pm_sampler *sampler; /* NULL once closed */
	int value_of[GM__SAMPLED]; /* metric -> position in a sample's values, -1: not sampled */
	int has_warps;             /* both unallocated-warp metrics: warps in flight derived */
};

static struct {
	int on;
	uint32_t pid;
	uint64_t interval_ns;
	long decode_ms;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_mutex_t open_lock; /* opening a device: one at a time */
	int atexit_registered;
	int stop;
	uint64_t wanted, opened, failed; /* device bitmasks */
	struct device devices[MAX_DEVICES]; /* by CUDA device index */
	/* queued for the writer thread */
	struct prof_gpu_metric *rows;
	size_t rows_used, rows_cap;
	struct prof_gpu_metric_type *types;
	size_t types_used, types_cap;
	char *notes[MAX_DEVICES]; /* one line per device that could not be sampled */
	int64_t counts[GC__COUNT]; /* since the last flush, for PERFKIT_COUNTERS */
} gm = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	  .open_lock = PTHREAD_MUTEX_INITIALIZER };

static int push(void **arr, size_t *cap, size_t used, size_t elem)
{
	return collector__grow(arr, cap, used, elem, 4096);
}

/* Under gm.lock. */
static void queue_row(int64_t ts, int64_t type_id, int metric, double value)
{
	if (push((void **)&gm.rows, &gm.rows_cap, gm.rows_used, sizeof(*gm.rows)) < 0) {
		gm.counts[GC_ROWS_LOST]++;
		return;
	}
	gm.rows[gm.rows_used++] = (struct prof_gpu_metric){ .timestamp_ns = ts, .type_id = type_id,
							    .metric_id = metric, .value = value };
}

static void on_sample(void *ctx, uint64_t start_ns, uint64_t end_ns, const double *values, int n)
{
	struct device *d = ctx;

	(void)start_ns;
	(void)n;
	pthread_mutex_lock(&gm.lock);
	for (int i = 0; i < GM__SAMPLED; i++)
		if (d->value_of[i] >= 0)
			queue_row((int64_t)end_ns, d->type_id, i, values[d->value_of[i]] * metrics[i].scale);
	if (d->has_warps) {
		double unused = values[d->value_of[GM_UNALLOC_ACTIVE]] + values[d->value_of[GM_UNALLOC_IDLE]];

		queue_row((int64_t)end_ns, d->type_id, GM_WARPS_IN_FLIGHT, unused < 100 ? 100 - unused : 0);
	}
	gm.counts[GC_SAMPLES]++;
	gm.counts[GC_DROPPED] += mapping__samples_dropped(d->last_end_ns, end_ns, gm.interval_ns);
	if (end_ns > d->last_end_ns)
		d->last_end_ns = end_ns;
	pthread_mutex_unlock(&gm.lock);
}

/* Under gm.lock: what each (device, metric) measures, for the writer. */
static void queue_type(struct device *d, int metric, const char *name, const char *counter)
{
	struct prof_gpu_metric_type *t;

	if (push((void **)&gm.types, &gm.types_cap, gm.types_used, sizeof(*gm.types)) < 0)
		return;
	t = &gm.types[gm.types_used++];
	*t = (struct prof_gpu_metric_type){ .type_id = d->type_id, .source_id = d->index,
					    .type_name = counter, .metric_id = metric,
					    .metric_name = name,
					    .global_pid = prof_global_pid(gm.pid) };
}

static void close_all(void);

/* On the device's sampler thread. */
static void open_device(struct device *d)
{
	const struct pm_wish wishes[GM__SAMPLED] = {
#define W(m) [m] = { metrics[m].wish.candidates, metrics[m].wish.required }
		W(GM_SM_ACTIVE), W(GM_SM_ISSUE), W(GM_TENSOR), W(GM_DRAM_READ), W(GM_DRAM_WRITE),
		W(GM_UNALLOC_ACTIVE), W(GM_UNALLOC_IDLE), W(GM_GR_ACTIVE), W(GM_PCIE_RX),
		W(GM_PCIE_TX), W(GM_NVLINK_RX), W(GM_NVLINK_TX), W(GM_GPC_CLOCK),
#undef W
	};
	const char *chosen[GM__SAMPLED];
	struct pm_sampler *s = NULL;
	char msg[320];
	int pos = 0, rc;
	uint64_t image_samples = IMAGE_MS * 1000000ull / gm.interval_ns;

	if (image_samples < IMAGE_MIN_SAMPLES)
		image_samples = IMAGE_MIN_SAMPLES;
	if (image_samples > IMAGE_MAX_SAMPLES)
		image_samples = IMAGE_MAX_SAMPLES;
	pthread_mutex_lock(&gm.open_lock);
	rc = pm__open(d->index, wishes, GM__SAMPLED, gm.interval_ns, HW_BUFFER_BYTES,
		      (size_t)image_samples, IMAGE_MAX_SAMPLES, chosen, &s, msg, sizeof msg);
	if (rc == 0 && pm__start(s) < 0) {
		snprintf(msg, sizeof msg, "%s", pm__last_error());
		rc = -1;
	}
	pthread_mutex_unlock(&gm.open_lock);
	if (rc < 0) {
		pm__close(s);
		pthread_mutex_lock(&gm.lock);
		gm.failed |= 1ull << d->index;
		gm.counts[GC_DEVICES_FAILED]++;
		if (asprintf(&gm.notes[d->index], "GPU metrics of device %d not sampled: %s", d->index,
			     msg) < 0)
			gm.notes[d->index] = NULL;
		pthread_mutex_unlock(&gm.lock);
		return;
	}
	pthread_mutex_lock(&d->lock);
	pthread_mutex_lock(&gm.lock);
	d->type_id = mapping__sampler_type_id(d->index, d->opens++);
	d->last_end_ns = 0;
	d->decode_failed = 0;
	d->sampler = s;
	for (int i = 0; i < GM__SAMPLED; i++) {
		d->value_of[i] = chosen[i] ? pos++ : -1;
		if (chosen[i])
			queue_type(d, i, metrics[i].name, chosen[i]);
	}
	d->has_warps = d->value_of[GM_UNALLOC_ACTIVE] >= 0 && d->value_of[GM_UNALLOC_IDLE] >= 0;
	if (d->has_warps)
		queue_type(d, GM_WARPS_IN_FLIGHT, warps_in_flight_name,
			   "100 - unallocated warps in active and idle SMs");
	gm.opened |= 1ull << d->index;
	if (!gm.atexit_registered)
		gm.atexit_registered = atexit(close_all) == 0;
	pthread_mutex_unlock(&gm.lock);
	pthread_mutex_unlock(&d->lock);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Under d->lock. last: the sampler was stopped, so that what an overflowed
 * decode left behind is counted (no later sample will show the gap). */
static void decode(struct device *d, int last)
{
	int overflowed = 0, rc;
	int64_t t0;

	if (!d->sampler || d->decode_failed)
		return;
	t0 = now_ns();
	rc = pm__decode(d->sampler, on_sample, d, &overflowed);
	pthread_mutex_lock(&gm.lock);
	gm.counts[GC_DECODE_NS] += now_ns() - t0;
	if (overflowed)
		gm.counts[GC_OVERFLOWS]++;
	if (overflowed && last)
		gm.counts[GC_DROPPED] += (int64_t)pm__periods_undecoded(d->sampler);
	if (rc < 0) {
		/* what the sampler took until now stays; the rest is missing,
		 * and said so, not filled in */
		d->decode_failed = 1;
		gm.counts[GC_ENDED_EARLY]++;
		if (!gm.notes[d->index] &&
		    asprintf(&gm.notes[d->index], "GPU metrics of device %d: sampling ended early: %s",
			     d->index, pm__last_error()) < 0)
			gm.notes[d->index] = NULL;
	}
	pthread_mutex_unlock(&gm.lock);
}

/* Stop, take what the buffer still holds, let the device go. */
static void close_device(struct device *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->sampler) {
		pm__stop(d->sampler);
		decode(d, 1);
		pthread_mutex_lock(&gm.lock);
		gm.counts[GC_IMAGE_BYTES] += (int64_t)pm__counter_data_bytes(d->sampler);
		pthread_mutex_unlock(&gm.lock);
		pm__close(d->sampler);
		d->sampler = NULL;
	}
	pthread_mutex_unlock(&d->lock);
}

static void close_all(void)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (gm.devices[i].thread_running)
			close_device(&gm.devices[i]);
}

/* *until = now + ms, on the clock pthread_cond_timedwait reads. */
static void wait_for(struct timespec *until, long ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += ms / 1000;
	until->tv_nsec += (ms % 1000) * 1000000L;
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

/* One device's sampler thread: opens the device whenever a context wants
 * it, decodes it every DECODE_MS while it is open. */
static void *device_main(void *arg)
{
	struct device *d = arg;
	uint64_t bit = 1ull << d->index;

	background_thread__enter();
	pthread_mutex_lock(&gm.lock);
	while (!gm.stop) {
		struct timespec until;

		if ((gm.wanted & bit) && !((gm.opened | gm.failed) & bit)) {
			pthread_mutex_unlock(&gm.lock);
			open_device(d);
			pthread_mutex_lock(&gm.lock);
			pthread_cond_broadcast(&gm.cond);
			continue;
		}
		if (!(gm.opened & bit)) {
			pthread_cond_wait(&gm.cond, &gm.lock);
			continue;
		}
		pthread_mutex_unlock(&gm.lock);
		pthread_mutex_lock(&d->lock);
		decode(d, 0);
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_lock(&gm.lock);
		wait_for(&until, gm.decode_ms);
		if (!gm.stop)
			pthread_cond_timedwait(&gm.cond, &gm.lock, &until);
	}
	pthread_mutex_unlock(&gm.lock);
	return NULL;
}

/* A whole number of ms from 1 to 10,000 in the environment, else fallback. */
static long env_ms(const char *name, long fallback)
{
	const char *v = getenv(name);
	char *end;
	long ms;

	if (!v || !*v)
		return fallback;
	ms = strtol(v, &end, 10);
	return *end || ms < 1 || ms > 10000 ? fallback : ms;
}

int gpu_metrics__init(void *subscriber, uint32_t pid)
{
	const char *env = getenv(PROF_ENV_GPU_METRICS);
	char *end;
	long hz;

	if (!env || !*env)
		return 0;
	hz = strtol(env, &end, 10);
	if (*end || hz < PROF_GPU_METRICS_HZ_MIN || hz > PROF_GPU_METRICS_HZ_MAX)
		hz = PROF_GPU_METRICS_HZ_DEFAULT;
	gm.pid = pid;
	gm.interval_ns = 1000000000ull / (uint64_t)hz;
	gm.decode_ms = env_ms(ENV_DECODE_MS, DECODE_MS);
	for (int i = 0; i < MAX_DEVICES; i++) {
		gm.devices[i].index = i;
		pthread_mutex_init(&gm.devices[i].lock, NULL);
	}
	gm.on = 1;
	cuptiEnableCallback(1, (CUpti_SubscriberHandle)subscriber, CUPTI_CB_DOMAIN_RESOURCE,
			    CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	cuptiEnableCallback(1, (CUpti_SubscriberHandle)subscriber, CUPTI_CB_DOMAIN_RESOURCE,
			    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	return 1;
}

/* The program's last context on a device is going: its sampler goes first.
 * Then the device is neither wanted nor open, so that a context made on it
 * later opens it again. */
static void context_gone(uint32_t dev)
{
	struct device *d = &gm.devices[dev];
	int last;

	pthread_mutex_lock(&gm.lock);
	last = !d->closing && d->contexts > 0 && --d->contexts == 0;
	if (last)
		d->closing = 1;
	pthread_mutex_unlock(&gm.lock);
	if (!last)
		return;
	close_device(d);
	pthread_mutex_lock(&gm.lock);
	d->closing = 0;
	gm.wanted &= ~(1ull << dev);
	gm.opened &= ~(1ull << dev);
	pthread_cond_broadcast(&gm.cond);
	pthread_mutex_unlock(&gm.lock);
}

/* Under gm.lock: start the device's sampler thread once; 0, or -1 with the
 * device marked as not sampled. */
static int start_thread(struct device *d)
{
	if (d->thread_running)
		return 0;
	if (pthread_create(&d->thread, NULL, device_main, d) == 0) {
		d->thread_running = 1;
		return 0;
	}
	gm.failed |= 1ull << d->index;
	gm.counts[GC_DEVICES_FAILED]++;
	if (!gm.notes[d->index] &&
	    asprintf(&gm.notes[d->index], "GPU metrics of device %d not sampled: no thread to sample it",
		     d->index) < 0)
		gm.notes[d->index] = NULL;
	return -1;
}

void gpu_metrics__on_callback(int domain, uint32_t cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	struct timespec until;
	struct device *d;
	uint32_t dev = 0;
	uint64_t bit;

	if (!gm.on || domain != CUPTI_CB_DOMAIN_RESOURCE ||
	    (cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED &&
	     cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING))
		return;
	if (cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS || dev >= MAX_DEVICES)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		context_gone(dev);
		return;
	}
	d = &gm.devices[dev];
	bit = 1ull << dev;
	wait_for(&until, OPEN_WAIT_MS);
	pthread_mutex_lock(&gm.lock);
	/* a context made while the last one's sampler closes waits for the
	 * close, then opens the device again */
	while (d->closing && !gm.stop)
		if (pthread_cond_timedwait(&gm.cond, &gm.lock, &until) == ETIMEDOUT)
			break;
	if (!(gm.wanted & bit)) {
		gm.wanted |= bit;
		if (start_thread(d) == 0)
			pthread_cond_broadcast(&gm.cond);
	}
	while (!(gm.opened & bit) && !(gm.failed & bit) && !gm.stop)
		if (pthread_cond_timedwait(&gm.cond, &gm.lock, &until) == ETIMEDOUT)
			break;
	d->contexts++;
	pthread_mutex_unlock(&gm.lock);
}

void gpu_metrics__write(struct prof_writer *w)
{
	struct prof_gpu_metric *rows;
	struct prof_gpu_metric_type *types;
	size_t nrows, ntypes;
	int64_t counts[GC__COUNT];

	if (!gm.on)
		return;
	pthread_mutex_lock(&gm.lock);
	rows = gm.rows;
	nrows = gm.rows_used;
	types = gm.types;
	ntypes = gm.types_used;
	gm.rows = NULL;
	gm.rows_used = gm.rows_cap = 0;
	gm.types = NULL;
	gm.types_used = gm.types_cap = 0;
	memcpy(counts, gm.counts, sizeof counts);
	memset(gm.counts, 0, sizeof gm.counts);
	pthread_mutex_unlock(&gm.lock);

	for (size_t i = 0; i < ntypes; i++)
		prof_writer__gpu_metric_type(w, &types[i]);
	for (size_t i = 0; i < nrows; i++)
		prof_writer__gpu_metric(w, &rows[i]);
	for (int i = 0; i < GC__COUNT; i++)
		if (counts[i])
			prof_writer__count(w, count_names[i], counts[i]);
	free(rows);
	free(types);
}

void gpu_metrics__on_fatal_signal(void)
{
	struct timespec until;

	if (!gm.on)
		return;
	wait_for(&until, 1000);
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct device *d = &gm.devices[i];

		/* not when a sampler thread itself is the one dying inside a decode */
		if (!d->thread_running || pthread_mutex_timedlock(&d->lock, &until) != 0)
			continue;
		if (d->sampler) {
			pm__stop(d->sampler);
			decode(d, 1);
		}
		pthread_mutex_unlock(&d->lock);
	}
}

void gpu_metrics__exit(void)
{
	if (!gm.on)
		return;
	pthread_mutex_lock(&gm.lock);
	gm.stop = 1;
	pthread_cond_broadcast(&gm.cond);
	pthread_mutex_unlock(&gm.lock);
	for (int i = 0; i < MAX_DEVICES; i++)
		if (gm.devices[i].thread_running)
			pthread_join(gm.devices[i].thread, NULL);
	close_all(); /* those the exit handler or a context's end did not close */
	for (int i = 0; i < MAX_DEVICES; i++) {
		gm.devices[i].thread_running = 0;
		if (gm.notes[i]) {
			fprintf(stderr, "perfkit: %s\n", gm.notes[i]);
			free(gm.notes[i]);
			gm.notes[i] = NULL;
		}
	}
}
