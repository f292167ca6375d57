/* run_collector.c - what `perfkit run` knows about the injection library.
 *
 * The one place that differs between a build with CUPTI and one without:
 * collectors/CMakeLists.txt defines PERFKIT_INJECT_LIB (the library's path in
 * the build tree) for this target only when it builds the collector, and
 * run_session.c asks this function instead of testing the macro. */
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
