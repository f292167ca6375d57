/* pm_sampler.h - a C interface over CUPTI's PM sampling (hardware counters
 * of one GPU read at a fixed interval, with no replay), for `perfkit run
 * --gpu-metrics`. Like the range profiler, the implementation is C++
 * because cupti_profiler_host.h includes <string>. */
#ifndef PERFKIT_PM_SAMPLER_H
#define PERFKIT_PM_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pm_sampler;

/* One metric the caller would like: CUPTI names to try in order (the first
 * the GPU can sample wins), NULL-terminated. */
struct pm_wish {
	const char *const *candidates;
	int required; /* the session fails without it */
};

/* Enable sampling on CUDA device device_index every interval_ns, with the
 * wished metrics the GPU supports in one pass (optional ones left out, last
 * first, until they fit). chosen[i] gets the CUPTI name picked for wish i,
 * or NULL when it was left out. < 0 with a message in msg on failure.
 * Each decode's counter data image has room for twice the samples due
 * since the last one, min_samples_per_decode to max_samples_per_decode. */
int pm__open(int device_index, const struct pm_wish *wishes, int nwishes, uint64_t interval_ns,
	     size_t hw_buffer_bytes, size_t min_samples_per_decode, size_t max_samples_per_decode,
	     const char **chosen, struct pm_sampler **out, char *msg, size_t cap);
int pm__start(struct pm_sampler *s);
int pm__stop(struct pm_sampler *s);

/* A decoded sample: its period on the capture's clock and one value per
 * chosen metric, in the order of the wishes (left-out ones skipped). */
typedef void (*pm_sample_fn)(void *ctx, uint64_t start_ns, uint64_t end_ns,
			     const double *values, int nvalues);

/* Decode what the hardware buffer holds and hand every completed sample to
 * fn. *overflowed is set when the buffer filled since the last call and
 * CUPTI said so (samples were lost; a buffer that overwrites its oldest
 * samples says nothing: the caller sees the gap). Returns the number of
 * samples, or < 0 on error (pm__last_error), after which the sampler
 * decodes nothing more. */
int pm__decode(struct pm_sampler *s, pm_sample_fn fn, void *ctx, int *overflowed);
/* After pm__stop and a last decode: the sample periods between the last
 * sample decoded and the stop (what a last decode that overflowed left
 * behind, where no later sample shows the gap). */
uint64_t pm__periods_undecoded(const struct pm_sampler *s);
/* The host memory its counter data image took at the most (the first
 * decode after the start and the last, after the stop, take the largest). */
size_t pm__counter_data_bytes(const struct pm_sampler *s);
void pm__close(struct pm_sampler *s);
const char *pm__last_error(void);

#ifdef __cplusplus
}
#endif

#endif
