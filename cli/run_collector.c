/* run_collector.c - what `perfkit run` knows about the injection library.
 *
 * The one place that differs between a build with CUPTI and one without:
 * collectors/CMakeLists.txt defines PERFKIT_INJECT_LIB (the library's path in
 * the build tree) only when it builds the collector,
 * and cmd_run.c asks these functions instead of testing the macros. */
#include "run_collector.h"

#include <stddef.h>

#ifdef PERFKIT_INJECT_LIB
const char *run_collector__build_path(void)
{
	return PERFKIT_INJECT_LIB;
}
#else
const char *run_collector__build_path(void)
{
	return NULL;
}
#endif
