// cupti_error.h - the last CUPTI failure on this thread as one line ("what:
// CUPTI's words"), shared by the profiler translation units (range_profiler.cpp,
// pm_sampler.cpp), whose C interfaces hand it out as their last error.
#ifndef PERFKIT_CUPTI_ERROR_H
#define PERFKIT_CUPTI_ERROR_H

#include <cstdio>

#include <cupti.h>

inline char *cupti_error__text()
{
	static thread_local char text[256];
	return text;
}

// Record r as the failure of what; returns -1 for the caller to return.
inline int cupti_error__set(CUptiResult r, const char *what)
{
	const char *s = nullptr;
	cuptiGetResultString(r, &s);
	std::snprintf(cupti_error__text(), 256, "%s: %s", what, s ? s : "unknown CUPTI error");
	return -1;
}

#endif
