/* scope.h - what an analysis of one capture reads (scope.c): the store, the
 * analysis window, the union of the GPU's work inside it, which tables the
 * capture has, and the view of its CUDA API calls. The idle attribution,
 * the critical path and diagnose's rules all take it; diagnose's context (diagnose/context.h) is a scope with the findings
 * and settings added, so that what reads the timeline needs no diagnosis. */
#ifndef REPORT_SCOPE_H
#define REPORT_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/intervals.h"
#include "prof/error.h"
#include "prof/store.h"
#include "model/window.h"

/* The GPU's busy intervals as another reader of the whole file walked them
 * (the HTML page's overview: each device's union intervals, unclipped,
 * export/busy_tape.h): replay tells each to interval and says 0, or < 0
 * where it has none (not yet, or lost), and the diagnosis walks the rows. */
struct diag_busy_source {
	int (*replay)(void *source, int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
		      void *ctx);
	void *source;
};

/* The members of a scope, spelled once: struct diag_scope holds them, and
 * diagnose's context holds them both as its `scope` and by name. */
#define DIAG_SCOPE_FIELDS \
	struct prof_store *store; \
	const struct sum_window *w; \
	/* Union of GPU activity (kernels, copies, sets) inside the window, sorted. */ \
	struct diag_interval *busy; \
	int nbusy; \
	int64_t busy_ns; \
	/* the devices of that work, ascending, known once the union is */ \
	int64_t *devices; \
	int ndevices; \
	bool devices_known; \
	bool has_kernel, has_memcpy, has_memset, has_sync_table, has_memory_events; \
	/* CUDA graphs launched whole (--cuda-graph-trace=graph) */ \
	bool has_graph_trace; \
	/* CUDA API calls (runtime or driver) in DIAG_API_CALLS */ \
	bool has_api_calls; \
	/* DIAG_API_CALLS is on this scope's own connection: made there by \
	 * diag_scope__api_view (a bare copy read through another connection \
	 * has none, and reads the API tables' views) */ \
	bool api_table_here; \
	/* captured with --metrics: kernel replay serialised the run */ \
	bool replayed; \
	/* the window's API call names as api_names__load read them first, \
	 * for the analyses that ask again (the idle attribution, the \
	 * critical path's steps); freed with diagnose's context, the one \
	 * scope with a window (diag_context__exit) */ \
	struct api_names_read *api_names_read; \
	/* the busy intervals walked already (settings.h), NULL: none */ \
	const struct diag_busy_source *busy_source;

struct diag_scope {
	DIAG_SCOPE_FIELDS
};

/* The temporary table of every CUDA API call, runtime and driver, that
 * the store's views show when the scope is made (columns start, end,
 * globalTid, correlationId, nameId; indexed by correlationId; its rowids
 * in start order, so ORDER BY rowid reads by start without a sort); join
 * SUM_API_NAMES (model/names.h) for the names, as every report shows
 * them. */
#define DIAG_API_CALLS "perfkit_api_calls"

/* Which end of the window a query stops at: GPU work runs on to end_ns, API
 * calls stop at host_end_ns (see struct sum_window). */
enum diag_side { DIAG_GPU_SIDE, DIAG_HOST_SIDE };

/* (Re)creates DIAG_API_CALLS of the calls the views show now and sets
 * has_api_calls when there are calls. */
int diag_scope__api_view(struct diag_scope *s, struct prof_error *err);
/* The union of the window's GPU work into busy, nbusy, busy_ns, and its
 * devices into devices, ndevices. */
int diag_scope__load_busy(struct diag_scope *s, struct prof_error *err);
/* Open sql with ?1 bound to the window's start and ?2 to the end of its
 * side; further parameters are the caller's to bind. */
int diag_scope__open_window(const struct diag_scope *s, const char *sql, enum diag_side side,
			    struct prof_cursor **out, struct prof_error *err);
/* The union of the (start, end) rows of sql, which orders them by start and
 * binds ?1 and ?2 as diag_scope__open_window does, clipped to the window's side. */
int diag_scope__load_union(const struct diag_scope *s, const char *sql, enum diag_side side,
			   struct diag_intervals *u, struct prof_error *err);
/* Frees what load_busy made. */
void diag_scope__exit(struct diag_scope *s);
/* s's store, window and flags without what was made from them (the busy
 * union, the devices, the names read): a scope another thread may fill in
 * its own (diagnose/ahead.h). */
struct diag_scope diag_scope__bare(const struct diag_scope *s);
/* What load_busy made in from, moved to s (whose own it replaces). */
void diag_scope__take_busy(struct diag_scope *s, struct diag_scope *from);

#endif
