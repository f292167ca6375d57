/* folded.h - a capture as folded stacks (Brendan Gregg's format, read by
 * flamegraph.pl, speedscope, inferno and the HTML report's flame graph):
 * one line per unique stack,
 *
 *   process;thread;nvtx outer;...;nvtx inner;cudaLaunchKernel;kernel COUNT
 *
 * weighted by GPU time (each kernel's duration, attributed to the API call
 * that launched it and to the push/pop ranges open on that call's thread
 * when it started) or by API time (each runtime/driver call's own duration;
 * a call that launched exactly one kernel gets the kernel as a last frame).
 * Kernels whose launching call was not captured sit under
 * process;[no launching call]. Weighed by GPU time, a CUDA graph launch
 * recorded whole (--cuda-graph-trace=graph) is a kernel named as
 * cuda_gpu_kern_sum names the graph. Times are nanoseconds.
 *
 * Rows are streamed in (thread, start) order next to the thread's NVTX
 * ranges, so memory holds the open ranges of one thread and the table of
 * unique stacks, never a table of the store. */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export_window.h"
#include "prof/error.h"
#include "prof/store.h"

enum folded_weight { FOLDED_WEIGHT_GPU, FOLDED_WEIGHT_API };

/* The frame of kernels with no captured launching call. */
#define FOLDED_NO_CALL "[no launching call]"

struct folded_options {
	enum folded_weight weight;
	struct export_filter filter; /* --from/--to clip the weights; --range picks calls */
};

struct folded_stack {
	char *frames;    /* "a;b;c", every frame made safe by folded_frame__sanitize */
	int64_t weight;  /* ns, >= 0; a sum of long kernels holds at INT64_MAX */
};

/* The unique stacks of a capture; after folded__collect, v[0..n) is sorted
 * frame by frame (a stack directly precedes the stacks it is a prefix of). */
struct folded_stacks {
	struct folded_stack *v;
	size_t n, cap;
	int64_t total_ns; /* held at INT64_MAX likewise (prof_add_saturated) */
	size_t max_depth; /* frames in the deepest stack */
};

/* "gpu" / "api" -> weight; -1 when unknown. */
int folded_weight__parse(const char *name);

int folded__collect(struct prof_store *s, const struct folded_options *o,
		    struct folded_stacks *out, struct prof_error *err);
void folded_stacks__exit(struct folded_stacks *st);
/* One "frames weight" line per stack. */
int folded__write(const struct folded_stacks *st, FILE *out);
/* folded__collect + folded__write. */
int folded__export(struct prof_store *s, const struct folded_options *o, FILE *out,
		   struct prof_error *err);

/* A frame name safe for the format: ';' separates frames, so it becomes ':';
 * a line break ends a stack, so line breaks and tabs become spaces; other
 * control characters and invalid UTF-8 are handled as for a terminal
 * (prof_sanitize_term). An empty name becomes "[unnamed]". malloc'd. */
char *folded_frame__sanitize(const char *s);

/* The flame graph of st as an inline <svg> element (no scripts, no external
 * references): root at the bottom, one row per depth, widths proportional
 * to weight, a <title> tooltip with name, time and share on every frame.
 * root_label names the bottom frame (e.g. "all GPU time"). */
int flamegraph__write_svg(const struct folded_stacks *st, const char *root_label, FILE *out);

#endif
