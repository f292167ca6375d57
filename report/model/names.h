/* names.h - names as every reader shows them (names.c): API calls without
 * CUPTI's version suffix, in C and in SQL; copy and memory kinds. */
#ifndef REPORT_MODEL_NAMES_H
#define REPORT_MODEL_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/tables.h"

/* Length of an API name without CUPTI's "_v<digits>" version suffix
 * ("cudaMalloc_v3020" -> strlen("cudaMalloc")): calls are shown, and
 * summed, under the name without it, as Nsight Systems shows them. Other
 * suffixes stay: "cudaLaunchKernel_ptsz_v7000" is "cudaLaunchKernel_ptsz",
 * the per-thread default stream's entry point. */
size_t sum_api_name_len(const char *name);
/* The same in SQL, for a text expression X, so that readers group by the
 * name they show. */
#define SUM_API_NAME(X)                                                       \
	"(CASE WHEN rtrim(" X ", '0123456789') <> " X " AND rtrim(" X           \
	", '0123456789') GLOB '*?_v' THEN substr(" X ", 1, length(rtrim(" X     \
	", '0123456789')) - 2) ELSE " X " END)"
/* StringIds with API names as SUM_API_NAME shows them, to join in place of
 * the table: "JOIN " SUM_API_NAMES " s ON s.id = r.nameId". */
#define SUM_API_NAMES                                                          \
	"(SELECT id, " SUM_API_NAME("value") " AS value FROM " PROF_T_STRINGS ")"

/* "[CUDA memcpy Host-to-Device]" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_operation(int64_t copy_kind);
/* "Host-to-Device" for an ENUM_CUDA_MEMCPY_OPER value. */
const char *sum_copy_direction(int64_t copy_kind);
/* "HtoD", "UVM DtoH", ... for an ENUM_CUDA_MEMCPY_OPER value; NULL for
 * PROF_COPY_UNKNOWN and values outside the enum, which each caller names in
 * its own words. */
const char *sum_copy_short(int64_t copy_kind);
/* "Pageable", "Pinned", ... for an ENUM_CUDA_MEM_KIND value. */
const char *sum_mem_kind(int64_t mem_kind);
/* "pageable", "pinned", "device" or "managed" for those ENUM_CUDA_MEM_KIND
 * values, in running text; NULL for the others. */
const char *sum_mem_word(int64_t mem_kind);
#define SUM_MEMSET_OPERATION "[CUDA memset]"

/* "CUDA graph 3 (nodes not recorded)": a launch of a CUDA graph that the
 * capture recorded whole (--cuda-graph-trace=graph, PROF_T_GRAPH_TRACE),
 * by CUDA's id of the graph, as the summaries and the traces name it;
 * "CUDA graph (id and nodes not recorded)" without an id. */
void sum_graph_launch_name(char *buf, size_t cap, bool id_known, int64_t graph_id);

#endif
