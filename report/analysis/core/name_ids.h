/* name_ids.h - the StringIds ids whose string matches a GLOB pattern
 * (name_ids.c): a pass over the rows then asks an id of a small sorted
 * set, where SQL asked every row's name against the pattern. */
#ifndef REPORT_NAME_IDS_H
#define REPORT_NAME_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* A kernel name of NCCL's, roughly (ranks/nccl.h's NCCL_KERNEL_SQL). */
#define NCCL_KERNEL_NAME_GLOB "*nccl*Kernel*"

struct name_ids {
	int64_t *v; /* ascending */
	int n;
};

/* The ids of the strings that match glob (a constant pattern of the
 * caller, bound as a parameter). */
int name_ids__load(struct prof_store *s, const char *glob, struct name_ids *out, struct prof_error *err);
bool name_ids__has(const struct name_ids *ids, int64_t id);
void name_ids__exit(struct name_ids *ids);

#endif
