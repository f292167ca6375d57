/* gpu_work.h - what the idle attribution (gpu_idle.c) and the critical
 * path (critical_path.c) both read: the GPU work of the window (kernels,
 * copies, memsets) joined to the API call that launched each, as one
 * cursor ordered by start; the names and kinds of the window's API calls;
 * the stream waits (cudaStreamWaitEvent) of the synchronisation rows; and
 * how a piece of work is named for humans. */
#ifndef REPORT_GPU_WORK_H
#define REPORT_GPU_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/grow.h"
#include "analysis/core/scope.h"
#include "analysis/core/text.h"

/* ---- CUDA API calls by kind ----------------------------------------------- */

enum api_kind {
	API_LAUNCH, /* submits a kernel or a graph */
	API_SYNC,   /* blocks until the GPU (a stream, an event, the device) is done */
	API_ALLOC,  /* allocates or frees memory, device or pinned host */
	API_COPY,   /* copies or sets memory (the host side of it) */
	API_OTHER,
};

/* The kind of a runtime or driver call by name ("cudaMemcpy_v3020" too). */
enum api_kind api_kind__of(const char *name);
/* "launch", "synchronisation", ... for running text. */
const char *api_kind__name(enum api_kind k);

/* GPU_WORK_GRAPH: a CUDA graph launched whole (--cuda-graph-trace=graph),
 * its nodes not seen */
enum gpu_work_kind { GPU_WORK_KERNEL, GPU_WORK_COPY, GPU_WORK_MEMSET, GPU_WORK_GRAPH };

struct gpu_work {
	int64_t start_ns, end_ns;
	int64_t device_id, stream_id, pid; /* pid: globalPid (0 when the row has none) */
	enum gpu_work_kind kind;
	int64_t name_id;                   /* kernels: StringIds id of the name */
	int copy_kind, src_kind, dst_kind; /* copies */
	int64_t bytes;                     /* copies and memsets; 0 for kernels */
	bool has_launch;                   /* joined to its call by correlation id */
	int64_t launch_start_ns, launch_end_ns, launch_tid, launch_name_id;
};

/* The devices that have GPU work overlapping [from, to); *ids malloc'd. */
int gpu_work__devices(struct diag_scope *ctx, int64_t from, int64_t to, int64_t **ids, int *n,
		      struct prof_error *err);
/* The GPU work overlapping [from, to), of one device when device is not
 * NULL, ordered by start; read each row with gpu_work__read. */
int gpu_work__open(struct diag_scope *ctx, int64_t from, int64_t to, const int64_t *device,
		   struct prof_cursor **out, struct prof_error *err);
/* The same of every device in no order, for a reader that only sums or
 * takes maxima: the sort by start costs as much as the join (0.7 s of CPU
 * each at 1M rows). */
int gpu_work__open_unordered(struct diag_scope *ctx, int64_t from, int64_t to,
			     struct prof_cursor **out, struct prof_error *err);
void gpu_work__read(struct prof_cursor *c, struct gpu_work *w);
/* The kernel's name, "[CUDA memcpy Host-to-Device] pageable->device" or
 * "[CUDA memset]" into buf, as cuda_gpu_trace names GPU work. */
const char *gpu_work__label(struct prof_store *s, const struct gpu_work *w, char *buf, size_t cap);

/* Opens sql (malloc'd, freed here; NULL: out of memory) with ?1 bound to
 * from, ?2 to to and, when device is not NULL, ?3 to *device: the queries
 * over a time range this folder's idle and path code run. */
int range_cursor__open(struct prof_store *s, char *sql, int64_t from, int64_t to, const int64_t *device,
		       struct prof_cursor **out, struct prof_error *err);


/* The order of streams: by process, device and stream id. */
int stream_key__cmp(int64_t pid_a, int64_t device_a, int64_t stream_a, int64_t pid_b, int64_t device_b,
		    int64_t stream_b);

/* later - earlier, saturated: a damaged capture's timestamps may be far
 * apart enough to overflow. */
int64_t ns_between(int64_t earlier, int64_t later);

/* A StringIds value into buf ("?" when absent). */
const char *gpu_work__string(struct prof_store *s, int64_t id, char *buf, size_t cap);

/* The API calls' names in the window, sorted by id, with their kind. */
struct api_name {
	int64_t id;
	char *name;  /* without nsys's "_v<digits>" suffix */
	enum api_kind kind;
};
struct api_names {
	struct api_name *v;
	int n;
};
/* A copy of the names, read once a scope and window: each call scans
 * every call of the window (0.19 s a million kernels), and the idle
 * attribution and the critical path ask for the same names. */
int api_names__load(struct diag_scope *ctx, struct api_names *names, struct prof_error *err);
void api_names__exit(struct api_names *names);
struct api_names_read;
void api_names_read__free(struct api_names_read *r);
/* NULL for an id not loaded. */
const struct api_name *api_names__find(const struct api_names *names, int64_t id);

/* Stream waits: rows (start, device, stream, pid) of the cudaStreamWaitEvent
 * calls made in [from, to), of one device when device is not NULL, ordered
 * by start. *out is NULL (and 0 returned) when the capture has no
 * synchronisation rows to read them from. */
int stream_waits__open(struct diag_scope *ctx, const int64_t *device, int64_t from, int64_t to,
		       struct prof_cursor **out, struct prof_error *err);

#endif
