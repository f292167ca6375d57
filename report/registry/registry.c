/* registry.c - every folder's table of reports in the order `perfkit
 * report` lists them, for `--report=` and for other commands that reuse a
 * report's rows. */
#include "registry.h"

#include <pthread.h>
#include <string.h>

#include "analysis/gpu_metrics/gpu_metrics_reports.h"
#include "analysis/ranks/ranks_reports.h"
#include "analysis/timeline/timeline_reports.h"
#include "summary/summary.h"

/* The tables in order; the overview last. */
static const struct rpt_report *(*const tables[])(size_t *n) = {
	summary__reports,
	timeline__reports,
	ranks__reports,
	gpu_metrics__reports,
	summary__overview_reports,
};

#define NTABLES (sizeof tables / sizeof tables[0])
/* Room for every table's reports (13 today). */
#define MAX_REPORTS 32

static const char *names[MAX_REPORTS];
static size_t nnames;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_collect(void)
{
	for (size_t t = 0; t < NTABLES; t++) {
		size_t n;
		const struct rpt_report *r = tables[t](&n);

		for (size_t i = 0; i < n && nnames < MAX_REPORTS; i++)
			names[nnames++] = r[i].name;
	}
}

static const struct rpt_report *find(const char *name)
{
	for (size_t t = 0; name && t < NTABLES; t++) {
		size_t n;
		const struct rpt_report *r = tables[t](&n);

		for (size_t i = 0; i < n; i++)
			if (strcmp(r[i].name, name) == 0)
				return &r[i];
	}
	return NULL;
}

int registry__run(const char *name, struct prof_store *s, struct rpt_sink *sink,
		  struct prof_error *err)
{
	const struct rpt_report *r = find(name);

	if (!r)
		return prof_error__set(err, PROF_E_USAGE, "unknown report '%s'", name ? name : "");
	return r->run(s, sink, err);
}

const char *const *registry__names(size_t *n)
{
	pthread_once(&names_once, names_collect);
	*n = nnames;
	return names;
}

const char *registry__title(const char *name)
{
	const struct rpt_report *r = find(name);

	return r ? r->title : NULL;
}
