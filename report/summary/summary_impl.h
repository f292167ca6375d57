/* summary_impl.h - internals shared by the summary reports: the grouped
 * statistics engine (count, total, mean, exact median, min, max, sample
 * standard deviation per group, in one streaming pass), names of nsys enum
 * values, and small helpers around the sink. */
#ifndef REPORT_SUMMARY_IMPL_H
#define REPORT_SUMMARY_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "summary.h"

/* Statistics of one group of integer values (durations in ns or sizes in bytes). */
struct sum_group {
	char *label;      /* malloc'd copy of the source's l1 (NULL if NULL) */
	char *label2;     /* l2 likewise */
	int64_t key;      /* the source's k (a StringIds id, an enum value, ...) */
	bool key_is_null;
	int64_t n;
	int64_t total, min, max;
	double mean, median, stddev; /* stddev: sample (n - 1), 0 for one value */
};

struct sum_groups {
	struct sum_group *g;
	size_t n, cap;
};

/* Group the rows of src, an SQL SELECT yielding the columns l1, l2, k, v
 * (text, text, integer, integer value), by (l1, l2, k) and append one
 * sum_group per group to gs. Memory stays proportional to the number of
 * groups: a GROUP BY count and an ORDER BY stream walk in step, so the
 * median is picked out of the sorted stream without holding it. */
int sum_groups__collect(struct sum_groups *gs, struct prof_store *s, const char *src,
			struct prof_error *err);
/* Total of group totals. */
int64_t sum_groups__total(const struct sum_groups *gs);
/* Order by total descending; ties by label, label2, key ascending so output
 * is deterministic. */
void sum_groups__sort_by_total(struct sum_groups *gs);
void sum_groups__exit(struct sum_groups *gs);

/* Set each group's label to the StringIds value of its key (with the API
 * version suffix cut when api_names), for sources that group by string id
 * rather than by text so the join runs once per group instead of per row. */
int sum_groups__label_from_strings(struct sum_groups *gs, struct prof_store *s, bool api_names,
				   struct prof_error *err);

/* A StringIds value (malloc'd), NULL when the id is absent. */
int sum_string(struct prof_store *s, int64_t id, char **out, struct prof_error *err);

/* "[CUDA memcpy Host-to-Device]" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_operation(int64_t copy_kind);
/* "Host-to-Device" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_direction(int64_t copy_kind);
/* "Pageable", "Pinned", ... for an ENUM_CUDA_MEM_KIND value. */
const char *sum_mem_kind(int64_t mem_kind);
#define SUM_MEMSET_OPERATION "[CUDA memset]"

/* Length of an API name without nsys's "_v<digits>" version suffix
 * ("cudaMalloc_v3020" -> strlen("cudaMalloc")). */
size_t sum_api_name_len(const char *name);

/* Cell constructors. */
static inline struct rpt_cell sum_int(int64_t v) { return (struct rpt_cell){ .i = v }; }
static inline struct rpt_cell sum_real(double v) { return (struct rpt_cell){ .d = v }; }
static inline struct rpt_cell sum_text(const char *v)
{ return (struct rpt_cell){ .s = v, .is_null = v == NULL }; }
static inline struct rpt_cell sum_null(void) { return (struct rpt_cell){ .is_null = true }; }

/* Fill err for a failed sink call. */
int sum_sink_error(int rc, struct prof_error *err);

/* Emit groups in the common nsys layout: Time (%), Total Time (ns),
 * <count_name>, Avg, Med, Min, Max, StdDev (ns), then the name column(s):
 * label2 under extra_name when extra_name is set, then label under
 * name_col. At most limit rows (0: all). */
int sum_groups__emit_time(const struct sum_groups *gs, struct rpt_sink *sink,
			  const char *report, const char *title, const char *count_name,
			  const char *extra_name, const char *name_col, size_t limit,
			  struct prof_error *err);

/* The source SQL "SELECT ... FROM A UNION ALL SELECT ... FROM B" over those
 * of the given parts whose table exists; parts[i] is used when tables[i]
 * exists. Returns a malloc'd string, or NULL (with *rc = 0) when no table
 * exists. */
char *sum_union(struct prof_store *s, const char *const *tables, const char *const *parts,
		int nparts, int *rc, struct prof_error *err);

/* The groups behind cuda_gpu_kern_sum and nvtx_sum, sorted by total (the
 * overview shows their first rows). */
int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);
int sum_nvtx_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);

/* The attribution rules nvtx_kern_sum and the folded stacks share, as SQL
 * over a kernel (or copy) row K and an API call row A, both table aliases:
 * K was launched by A when they share a correlation id within one process
 * (ids are per process; some nsys exports leave a GPU row's globalPid NULL
 * or 0). A push/pop range N is open on A's thread when the call starts. */
#define SUM_LAUNCHED_BY(K, A)                                                  \
	K ".correlationId = " A ".correlationId AND (" K ".globalPid IS NULL OR " \
	K ".globalPid = 0 OR " K ".globalPid = (" A ".globalTid >> 24) << 24)"
#define SUM_NVTX_OPEN_AT_CALL(N, A)                                              \
	N ".eventType = 59 AND " N ".globalTid = " A ".globalTid AND " N ".start <= " \
	A ".start AND " N ".end > " A ".start"

#define T_KERNEL "CUPTI_ACTIVITY_KIND_KERNEL"
#define T_MEMCPY "CUPTI_ACTIVITY_KIND_MEMCPY"
#define T_MEMSET "CUPTI_ACTIVITY_KIND_MEMSET"
#define T_RUNTIME "CUPTI_ACTIVITY_KIND_RUNTIME"
#define T_DRIVER "CUPTI_ACTIVITY_KIND_DRIVER"
#define T_NVTX "NVTX_EVENTS"
#define T_STRINGS "StringIds"
#define T_GPU "TARGET_INFO_GPU"

#endif
