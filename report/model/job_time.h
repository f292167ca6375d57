/* job_time.h - a job's time base in words (overview.c), which the
 * overview, diagnose's header and `perfkit merge` say; cli/ reaches it
 * through summary/summary.h. */
#ifndef REPORT_MODEL_JOB_TIME_H
#define REPORT_MODEL_JOB_TIME_H

#include <stdbool.h>

#include "prof/store.h"

/* How a job of captures from several hosts was put on one time base, and
 * the estimated alignment error, in words: what the overview's "Time base"
 * and "Alignment error" rows, diagnose's header and `perfkit merge` say. */
struct sum_job_time {
	char base[192];   /* "collectives (33 matched across hosts)", "clock pairs", ... */
	char error[128];  /* "3.111 us", "unknown (...)" */
};

/* From the PERFKIT_META values a merged job records (job_hosts,
 * time_base, time_collectives, time_error_ns; NULL: absent). False (t
 * empty) when the job is of one host, or no job. */
bool sum_job_time__describe(const char *hosts, const char *base, const char *collectives,
			    const char *error_ns, struct sum_job_time *t);
/* The same from a capture's PERFKIT_META. */
bool sum_job_time__load(struct prof_store *s, struct sum_job_time *t);

#endif
