/* run_collector.h - where `perfkit run` finds the injection library. */
#ifndef PERFKIT_RUN_COLLECTOR_H
#define PERFKIT_RUN_COLLECTOR_H

/* The file name CUDA_INJECTION64_PATH points at. */
#define RUN_COLLECTOR_LIB "libperfkit-inject.so"

/* Path of the library in the build tree, or NULL when this perfkit was built
 * without CUPTI (then run cannot capture). */
const char *run_collector__build_path(void);

#endif
