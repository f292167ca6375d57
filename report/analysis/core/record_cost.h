/* record_cost.h - what recording a CUDA call cost the host, so that host
 * times can be shown both as measured and with perfkit's own cost removed.
 *
 * `perfkit peaks` measures it (perfkit-peaks --record-cost run with and
 * without the collector, 7 interleaved rounds, the difference of the
 * medians) and keeps it with the ceilings; a capture gets it in
 * PERFKIT_PEAKS (record_launch_ns, record_api_call_ns). A perfkit capture
 * without those rows says that its host times include an unmeasured cost;
 * an nsys export says nothing (its profiler's cost is not perfkit's). */
#ifndef REPORT_RECORD_COST_H
#define REPORT_RECORD_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/scope.h"
#include "prof/error.h"
#include "prof/store.h"

struct record_cost {
	bool perfkit_capture;        /* recorded by perfkit's collector */
	bool measured;               /* the capture holds perfkit peaks' measurement */
	double launch_ns, api_call_ns;  /* the host's cost per kernel launch, per other call */
	/* per allocation or free call, per copy call (the trace records the
	 * allocation or copy too); api_call_ns where peaks did not measure them */
	double alloc_ns, copy_ns;
};

int record_cost__load(struct prof_store *s, struct record_cost *c, struct prof_error *err);
/* The host time of launches (calls of them, total_ns in all) said both ways:
 * " Each launch call costs the host X as measured, Y without perfkit's
 * recording (Z per launch, measured by `perfkit peaks`)." or, unmeasured,
 * that X includes it; for an nsys export only "... costs the host X.". */
void record_cost__launch_sentence(const struct record_cost *c, int64_t calls, int64_t total_ns, char *buf,
				  size_t cap);
/* Of host time in CUDA calls (in_calls_ns) made of launches and other
 * calls: what recording added to it (0 when not measured), clipped to it. */
int64_t record_cost__of_calls(const struct record_cost *c, int64_t launches, int64_t other_calls,
			      int64_t in_calls_ns);
/* The CUDA calls that start while the scope's GPU is idle (outside its
 * busy union, inside the window), launches and others counted apart. */
int record_cost__idle_calls(const struct diag_scope *s, int64_t *launches, int64_t *other_calls,
			    struct prof_error *err);
/* The host's time in CUDA calls while the GPU idles said both ways:
 * " Of the idle time, X is spent in CUDA calls as measured, about Y
 * without perfkit's recording (...)." or that X includes an unmeasured
 * cost; nothing for an nsys export. */
void record_cost__idle_sentence(const struct record_cost *c, int64_t in_calls_ns, int64_t launches,
				int64_t other_calls, char *buf, size_t cap);

#endif
