/* launch_slots.h - the loop search's launches counted between the NVTX
 * instances' boundaries (window_nvtx.c), in one pass over the launches in
 * no order.
 *
 * The search weighs each instance by the calls that start in it and the
 * GPU time they launch: running sums over the launches and the instances'
 * boundaries in time order, per process. Sorting a million launches among
 * a few thousand boundaries costs more than the rest of the search; but
 * between two neighbouring boundaries of a process the launches only add
 * up, so each stretch ("slot") keeps its count and GPU time, and one row
 * a slot stands for its launches in the same running sums (every slot's
 * row carries the time of one of its launches, which sorts among the
 * boundaries as each of them does). Sums of whole nanoseconds below 2^53
 * are exact in double, so the sums come out to the bit.
 *
 * Every process's slots also keep the latest end of the work launched in
 * them, across processes, for the window's extension to the work its calls
 * launched (launch_slots__max_end).
 *
 * Only for instances up to LAUNCH_SLOTS_MAX_INSTANCES: past that the
 * boundaries would hold more memory than the sort they save, and the
 * search's SQL counts the launches itself. Internal to report/model. */
#ifndef REPORT_MODEL_LAUNCH_SLOTS_H
#define REPORT_MODEL_LAUNCH_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

#define LAUNCH_SLOTS_MAX_INSTANCES ((int64_t)1 << 18)
/* the temporary table the slots are written to: (p, t, n, g) a slot's
 * process, the time of one of its launches, their count and GPU time */
#define LAUNCH_SLOTS_TABLE "perfkit_loop_launches"

struct launch_slots;

/* The most instances the slots take (LAUNCH_SLOTS_MAX_INSTANCES; tests
 * set 0 to have the SQL count every launch). */
void launch_slots__set_max_instances(int64_t max);
int64_t launch_slots__max_instances(void);

/* Counts the launches of `launches` (launch SQL of rows p, t, e, gpu for
 * the calls in [lo, hi) of a table `span` the statement defines) between
 * the boundaries of the instances `instances` (SQL of rows p, start, end;
 * ?2 bound to marked) and writes the slots to temp.LAUNCH_SLOTS_TABLE.
 * *out NULL (and no table) when the instances are more than
 * launch_slots__max_instances(); 0 or a
 * PROF_E_* code. */
int launch_slots__count(struct prof_store *s, const char *instances, const char *marked,
			const char *launches, struct launch_slots **out, struct prof_error *err);
/* The latest end of the work launched by calls starting in [lo, hi), both
 * boundaries of the instances: true and *end set, *any whether there was
 * any; false when lo or hi is no boundary (then ask the SQL). */
bool launch_slots__max_end(const struct launch_slots *ls, int64_t lo, int64_t hi, int64_t *end,
			   bool *any);
/* Frees the slots and drops their table. */
void launch_slots__delete(struct launch_slots *ls, struct prof_store *s);

#endif
