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
 * max_samples_per_decode: the samples the counter data image holds, which
 * decodes fill in turn until half of it is used. */
int pm__open(int device_index, const struct pm_wish *wishes, int nwishes, uint64_t interval_ns,
	     size_t hw_buffer_bytes, size_t max_samples_per_decode, const char **chosen,
	     struct pm_sampler **out, char *msg, size_t cap);
int pm__start(struct pm_sampler *s);
int pm__stop(struct pm_sampler *s);

/* A decoded sample: its period on the capture's clock and one value per
 * chosen metric, in the order of the wishes (left-out ones skipped). */
typedef void (*pm_sample_fn)(void *ctx, uint64_t start_ns, uint64_t end_ns,
			     const double *values, int nvalues);

/* Decode what the hardware buffer holds and hand every completed sample to
 * fn. *overflowed is set when the buffer filled since the last call
 * (samples were lost). Returns the number of samples, or < 0 on error. */
int pm__decode(struct pm_sampler *s, pm_sample_fn fn, void *ctx, int *overflowed);
/* The host memory its counter data image takes. */
size_t pm__counter_data_bytes(const struct pm_sampler *s);
void pm__close(struct pm_sampler *s);
const char *pm__last_error(void);

#ifdef __cplusplus
}
#endif

#endif
