/* rank_choice.h - --rank's choice as the store's temporary tables hold it
 * (rank_choice.c), shared by the rank model (ranks.c), which reads it, and
 * the filter (rank_filter.c), which makes it; and a helper of the
 * temporary tables that --window's choice (window_choice.c) makes too
 * (whether one is there: model/memo.h).
 * Internal to model/. */
#ifndef REPORT_RANK_CHOICE_H
#define REPORT_RANK_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/memo.h"
#include "prof/error.h"
#include "prof/store.h"

/* The processes --rank chose (all of them without --rank). */
#define CHOICE_TABLE "perfkit_rank_choice"
/* Present when --rank made the views (a choice of fewer than all processes). */
#define FILTER_MARK "perfkit_rank_filtered"
/* The processes the views show now; present while they show fewer than all. */
#define PIDS_TABLE "perfkit_rank_pids"

/* One statement into the temporary tables with ?1 bound to v, its rows
 * not wanted (a temporary table filled from a bound value). */
int sum_temp__exec_int(struct prof_store *s, const char *sql, int64_t v, struct prof_error *err);

#endif
