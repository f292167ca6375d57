/* job_together.c - whether the captures given as a job belong together.
 *
 * A job's captures are merged, or mapped and reduced, whatever they are:
 * one capture given twice counts its work twice, two runs of one job make
 * its ranks twice as many, and captures of runs days apart make a span of
 * days (an nsys export, whose times count from its session's start, beside
 * a perfkit capture's made one of 57 years). So the probe's facts are
 * compared first: what makes two captures one (the same host, program pid,
 * start and processes: a copy) is always refused; what makes them two jobs
 * (a rank of one launcher in both, launchers or world sizes that differ,
 * one process in both, runs that do not overlap in time) unless the
 * command was told to take them as one (--force). One line names two of
 * the captures and the fact. */
#include "job_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FORCE_HINT "(--force takes them as one)"

/* "2026-11-22 21:10:57.123 UTC" */
static void format_utc(char *buf, size_t cap, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	char day[32];

	if (ns >= 0 && gmtime_r(&t, &tm) && strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, cap, "%s.%03d UTC", day, (int)(ns / 1000000 % 1000));
	else
		snprintf(buf, cap, "%" PRId64 " ns", ns);
}

static bool same_pids(const struct job_capture *a, const struct job_capture *b)
{
	return a->npids == b->npids && !memcmp(a->pids, b->pids, (size_t)a->npids * sizeof *a->pids);
}

/* The same run's capture: its host, its start to the ns, its program (the
 * pid its metadata names) and the processes it holds. */
static bool same_capture(const struct job_capture *a, const struct job_capture *b)
{
	return a->has_ran && b->has_ran && a->ran_from_ns == b->ran_from_ns &&
	       !strcmp(a->host, b->host) && a->pid == b->pid && same_pids(a, b);
}

static int check_copies(const struct job_plan *p, struct prof_error *err)
{
	char when[64];

	for (int i = 0; i < p->n; i++) {
		for (int j = 0; j < i; j++) {
			const struct job_capture *a = &p->c[j], *b = &p->c[i];

			if (!same_capture(a, b))
				continue;
			format_utc(when, sizeof when, a->ran_from_ns);
			if (a->pid)
				return prof_error__set(err, PROF_E_USAGE,
						       "%s and %s are the same capture (host %s, pid %" PRId64
						       ", started %s): it would count twice", a->path,
						       b->path, *a->host ? a->host : "not recorded", a->pid,
						       when);
			return prof_error__set(err, PROF_E_USAGE,
					       "%s and %s are the same capture (host %s, its processes, "
					       "started %s): it would count twice", a->path, b->path,
					       *a->host ? a->host : "not recorded", when);
		}
	}
	return 0;
}

static const char *launcher_name(const struct job_rank *r)
{
	return *r->launcher ? r->launcher : "its launcher";
}

/* A rank of one launcher in two captures; launchers or world sizes that
 * differ. */
static int check_ranks(const struct job_plan *p, struct prof_error *err)
{
	const struct job_rank *first_world = NULL, *first_launcher = NULL;
	const struct job_capture *world_in = NULL, *launcher_in = NULL;

	for (int i = 0; i < p->n; i++) {
		const struct job_capture *b = &p->c[i];

		for (int k = 0; k < b->nranks; k++) {
			const struct job_rank *r = &b->ranks[k];

			for (int j = 0; j < i; j++) {
				const struct job_capture *a = &p->c[j];

				for (int l = 0; l < a->nranks; l++)
					if (a->ranks[l].rank == r->rank &&
					    !strcmp(a->ranks[l].launcher, r->launcher))
						return prof_error__set(err, PROF_E_USAGE,
							"%s and %s both hold rank %d of %s: captures of "
							"two runs, not one job's " FORCE_HINT, a->path,
							b->path, r->rank, launcher_name(r));
			}
			if (r->world_size >= 0 && !first_world) {
				first_world = r;
				world_in = b;
			} else if (r->world_size >= 0 && r->world_size != first_world->world_size) {
				return prof_error__set(err, PROF_E_USAGE,
						       "%s and %s are ranks of jobs of %d and of %d: not "
						       "one job's captures " FORCE_HINT, world_in->path,
						       b->path, first_world->world_size, r->world_size);
			}
			if (*r->launcher && !first_launcher) {
				first_launcher = r;
				launcher_in = b;
			} else if (*r->launcher && strcmp(r->launcher, first_launcher->launcher)) {
				return prof_error__set(err, PROF_E_USAGE,
						       "%s's ranks were numbered by %s, %s's by %s: not one "
						       "job's captures " FORCE_HINT, launcher_in->path,
						       first_launcher->launcher, b->path, r->launcher);
			}
		}
	}
	return 0;
}

static bool overlap(const struct job_capture *a, const struct job_capture *b)
{
	return a->has_ran && b->has_ran && a->ran_from_ns <= b->ran_to_ns &&
	       b->ran_from_ns <= a->ran_to_ns;
}

/* A pid of both captures (pids without the host bits, ascending); 0: none. */
static int64_t shared_pid(const struct job_capture *a, const struct job_capture *b)
{
	for (int i = 0, j = 0; i < a->npids && j < b->npids;) {
		if (a->pids[i] == b->pids[j])
			return prof_pid_of(a->pids[i]);
		if (a->pids[i] < b->pids[j])
			i++;
		else
			j++;
	}
	return 0;
}

/* One process in two captures: a pid of one host in both, while both ran
 * (a pid is not given to another process while its own runs), and no
 * ranks to tell the two apart: a capture and a merged job that holds it,
 * or an edited copy. Two containers of one host name can give their
 * processes one pid, which --force allows. */
static int check_processes(const struct job_plan *p, struct prof_error *err)
{
	for (int i = 0; i < p->n; i++) {
		for (int j = 0; j < i; j++) {
			const struct job_capture *a = &p->c[j], *b = &p->c[i];
			int64_t pid;

			if (!*a->host || strcmp(a->host, b->host) || (a->nranks && b->nranks) ||
			    !overlap(a, b) || !(pid = shared_pid(a, b)))
				continue;
			return prof_error__set(err, PROF_E_USAGE,
					       "%s and %s both hold process %" PRId64 " of host %s, "
					       "at the same time: one process would count twice "
					       FORCE_HINT, a->path, b->path, pid, a->host);
		}
	}
	return 0;
}

/* Runs that do not overlap in time: the one that ended first ended before
 * the one that began last began. */
static int check_times(const struct job_plan *p, struct prof_error *err)
{
	const struct job_capture *ended = NULL, *began = NULL;
	char from[64], to[64], later[64];

	for (int i = 0; i < p->n; i++) {
		const struct job_capture *c = &p->c[i];

		if (!c->has_ran)
			continue;
		if (!ended || c->ran_to_ns < ended->ran_to_ns)
			ended = c;
		if (!began || c->ran_from_ns > began->ran_from_ns)
			began = c;
	}
	if (!ended || began->ran_from_ns <= ended->ran_to_ns)
		return 0;
	format_utc(from, sizeof from, ended->ran_from_ns);
	format_utc(to, sizeof to, ended->ran_to_ns);
	format_utc(later, sizeof later, began->ran_from_ns);
	return prof_error__set(err, PROF_E_USAGE,
			       "%s ran from %s to %s, %s from %s: runs that do not overlap in time "
			       "are not one job's captures " FORCE_HINT, ended->path, from, to,
			       began->path, later);
}

int job_plan__check_together(const struct job_plan *p, bool force, struct prof_error *err)
{
	int rc = check_copies(p, err);

	if (rc || force)
		return rc;
	rc = check_ranks(p, err);
	if (!rc)
		rc = check_processes(p, err);
	if (!rc)
		rc = check_times(p, err);
	return rc;
}
