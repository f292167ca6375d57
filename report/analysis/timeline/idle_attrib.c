/* idle_attrib.c - the pure part of the idle-time attribution: the causes'
 * names, and how one idle stretch splits among causes. */
#include "gpu_idle.h"

#include <stdlib.h>
#include <string.h>

static const char *const cause_ids[IDLE_NCAUSES] = {
	"host_work", "host_sync", "host_alloc", "host_copy", "host_api",
	"launch", "stream_wait", "queued", "unknown",
};

static const char *const cause_titles[IDLE_NCAUSES] = {
	"host: own work outside CUDA calls",
	"host: inside a synchronisation call",
	"host: inside an allocation or free",
	"host: inside a copy or memset call (blocking or pageable)",
	"host: inside another CUDA call",
	"launch: the call that submits the next work, to its start",
	"waiting on an event another stream records (cudaStreamWaitEvent)",
	"work already queued: the GPU's gap before starting it (back-to-back work, or a dependency the trace does not show)",
	"unknown: no launching call in the trace, or no work followed",
};

const char *idle_cause__id(enum idle_cause c)
{
	return c >= 0 && c < IDLE_NCAUSES ? cause_ids[c] : "?";
}

const char *idle_cause__title(enum idle_cause c)
{
	return c >= 0 && c < IDLE_NCAUSES ? cause_titles[c] : "?";
}

/* Launches of other work (another device, another stream held back) count
 * as any other call: only the launch that ends the stretch is "launch",
 * and a copy call's own copy waits for the host side of the copy (staging
 * pageable memory). */
enum idle_cause idle__cause_of_call(enum api_kind kind, bool launches_next)
{
	switch (kind) {
	case API_SYNC:
		return IDLE_HOST_SYNC;
	case API_ALLOC:
		return IDLE_HOST_ALLOC;
	case API_COPY:
		return IDLE_HOST_COPY;
	default:
		return launches_next ? IDLE_LAUNCH : IDLE_HOST_API;
	}
}

int idle__attribute(const struct idle_stretch *s, const struct idle_host_call *calls, int ncalls,
		    int64_t *call_ns, int64_t by_cause[IDLE_NCAUSES], struct idle_sync_part *sync)
{
	int64_t a = s->start_ns, b = s->end_ns, best_ns = 0;
	struct idle_sync_part ignored;
	int best = -1;

	if (!sync)
		sync = &ignored;
	*sync = (struct idle_sync_part){ 0, -1 };
	memset(by_cause, 0, sizeof(int64_t) * IDLE_NCAUSES);
	for (int i = 0; call_ns && i < ncalls; i++)
		call_ns[i] = 0;
	if (b <= a)
		return -1;
	if (!s->has_launch) {
		by_cause[IDLE_UNKNOWN] = b - a;
		return -1;
	}
	if (s->launch_start_ns > a) {
		/* submitted during the stretch: what the thread did until then */
		int64_t until = s->launch_start_ns < b ? s->launch_start_ns : b, pos = a;
		bool after_sync = false; /* pos is where a synchronisation call returned */

		for (int i = 0; i < ncalls && calls[i].start_ns < until; i++) {
			int64_t from = calls[i].start_ns > pos ? calls[i].start_ns : pos;
			int64_t to = calls[i].end_ns < until ? calls[i].end_ns : until;

			if (to <= from)
				continue;
			by_cause[IDLE_HOST_WORK] += from - pos;
			if (after_sync)
				sync->after_sync_ns += from - pos;
			after_sync = calls[i].kind == API_SYNC;
			if (after_sync)
				sync->sync_call = i;
			by_cause[idle__cause_of_call(calls[i].kind, false)] += to - from;
			if (call_ns)
				call_ns[i] = to - from;
			if (to - from > best_ns) {
				best_ns = to - from;
				best = i;
			}
			pos = to;
		}
		by_cause[IDLE_HOST_WORK] += until - pos;
		if (after_sync)
			sync->after_sync_ns += until - pos;
		by_cause[idle__cause_of_call(s->launch_kind, true)] += b - until;
	} else {
		/* queued before the GPU fell idle: the call may still have been
		 * running; after it, the GPU held the work back */
		int64_t call_end = s->launch_end_ns < a ? a : s->launch_end_ns > b ? b : s->launch_end_ns;

		by_cause[idle__cause_of_call(s->launch_kind, true)] += call_end - a;
		by_cause[s->stream_waited ? IDLE_STREAM_WAIT : IDLE_QUEUED] += b - call_end;
	}
	return best;
}

int64_t idle__sync_claim(const int64_t by_cause[IDLE_NCAUSES], const struct idle_sync_part *sync)
{
	int64_t in_calls = 0;

	if (sync->sync_call < 0)
		return 0;
	/* the causes from host_sync to launch are the thread's time in calls */
	for (int c = IDLE_HOST_SYNC; c <= IDLE_LAUNCH; c++)
		in_calls += by_cause[c];
	return by_cause[IDLE_HOST_SYNC] +
	       (by_cause[IDLE_HOST_WORK] <= in_calls ? sync->after_sync_ns : 0);
}

enum idle_cause idle__dominant(const int64_t by_cause[IDLE_NCAUSES])
{
	int best = -1;

	for (int c = 0; c < IDLE_NCAUSES; c++)
		if (by_cause[c] > (best < 0 ? 0 : by_cause[best]))
			best = c;
	return best < 0 ? IDLE_UNKNOWN : (enum idle_cause)best;
}

static int cmp_int64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

int64_t idle__median(int64_t *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_int64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}
