/* job_meta.c - the run metadata of a job: what its captures' own say,
 * combined (commands, hosts and GPUs each named once, the span from the
 * first start to the last end on the job's time base), and what the job
 * adds (how many captures and hosts, its time base and alignment error). */
#include "job_impl.h"
#include "model/job_time.h"
#include "prof/protocol.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct values named before the rest are counted. */
#define NAMED_AT_MOST 8

/* The distinct non-NULL values of field, in the order of the captures,
 * joined by sep; at most NAMED_AT_MOST, then how many more. NULL when no
 * capture has one. */
static char *distinct(const struct job_plan *p, size_t field, const char *sep)
{
	char *out = NULL;
	size_t len = 0;
	int named = 0, more = 0;

	for (int i = 0; i < p->n; i++) {
		const char *v = *(char *const *)((const char *)&p->c[i] + field);
		bool seen = false;

		if (!v || !*v)
			continue;
		for (int j = 0; j < i && !seen; j++) {
			const char *w = *(char *const *)((const char *)&p->c[j] + field);

			seen = w && !strcmp(v, w);
		}
		if (seen)
			continue;
		if (named == NAMED_AT_MOST) {
			more++;
			continue;
		}
		size_t add = strlen(v) + (named ? strlen(sep) : 0);
		char *grown = realloc(out, len + add + 1);

		if (!grown) {
			free(out);
			return NULL;
		}
		out = grown;
		snprintf(out + len, add + 1, "%s%s", named ? sep : "", v);
		len += add;
		named++;
	}
	if (more && out) {
		char tail[64];
		int n = snprintf(tail, sizeof tail, "%s%d more", sep, more);
		char *grown = realloc(out, len + (size_t)n + 1);

		if (grown) {
			out = grown;
			memcpy(out + len, tail, (size_t)n + 1);
		}
	}
	return out;
}

/* The same value in every capture, or NULL. */
static const char *common(const struct job_plan *p, size_t field)
{
	const char *first = *(char *const *)((const char *)&p->c[0] + field);

	for (int i = 1; i < p->n; i++) {
		const char *v = *(char *const *)((const char *)&p->c[i] + field);

		if (!first || !v || strcmp(first, v))
			return NULL;
	}
	return first;
}

/* The first exit status that is not 0, else 0 (NULL when none says). */
static const char *worst_status(const struct job_plan *p)
{
	const char *any = NULL;

	for (int i = 0; i < p->n; i++) {
		const char *v = p->c[i].exit_status;

		if (v && strcmp(v, "0"))
			return v;
		if (v)
			any = v;
	}
	return any;
}

/* Where capture i's start lands on the job's time base, as a time of the
 * first host's realtime clock. start_ns is a realtime reading, and the
 * mapping moves times of the capture's own clock: the start goes over to
 * that clock by the capture's first clock pair (its host's without one),
 * is moved, and comes back by the first host's. A capture that does not
 * move keeps its start. */
static int64_t start_on_time_base(const struct job_plan *p, int i)
{
	const struct job_capture *c = &p->c[i];
	const struct job_clock_pair *own = c->has_clock_start ? &c->clock_start : NULL, *base = NULL;

	if (!p->maps[i].shift_ns && !p->maps[i].rate)
		return c->start_ns;
	for (int j = 0; j < p->n; j++) {
		const struct job_capture *o = &p->c[j];

		if (!o->has_clock_start)
			continue;
		/* its own pair, else its host's first */
		if (o->group == c->group && !c->has_clock_start &&
		    (!own || o->clock_start.timestamp_ns < own->timestamp_ns))
			own = &o->clock_start;
		if (o->group == 0 && (!base || o->clock_start.timestamp_ns < base->timestamp_ns))
			base = &o->clock_start;
	}
	/* without pairs on both hosts nothing moved by them; only the
	 * collectives did, and they moved its capture clock: so move the start */
	if (!own || !base)
		return job_time__apply(&p->maps[i], c->start_ns);
	return job_time__apply(&p->maps[i], c->start_ns - (own->realtime_ns - own->timestamp_ns)) +
	       (base->realtime_ns - base->timestamp_ns);
}

char *job_meta__host(const struct job_plan *p)
{
	return distinct(p, offsetof(struct job_capture, host), ", ");
}

static int put_int(int (*put)(void *, const char *, const char *), void *ctx, const char *key,
		   int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	return put(ctx, key, buf);
}

int job_meta__write(const struct job_plan *p,
		    int (*put)(void *ctx, const char *key, const char *value), void *ctx)
{
	static const struct {
		const char *key;
		size_t field;
		const char *sep;
	} joined[] = {
		{ "command", offsetof(struct job_capture, command), "; " },
		{ "host", offsetof(struct job_capture, host), ", " }, /* job_meta__host */
		{ "gpu", offsetof(struct job_capture, gpu), "; " },
	};
	int64_t first = 0, last = 0;
	bool span = true;
	int rc = 0;

	for (size_t k = 0; k < sizeof joined / sizeof joined[0] && !rc; k++) {
		char *v = distinct(p, joined[k].field, joined[k].sep);

		if (v)
			rc = put(ctx, joined[k].key, v);
		free(v);
	}
	if (!rc && common(p, offsetof(struct job_capture, trace)))
		rc = put(ctx, "trace", common(p, offsetof(struct job_capture, trace)));
	/* the rate of every capture's Python samples, where they agree */
	if (!rc && common(p, offsetof(struct job_capture, python_sampling_hz)))
		rc = put(ctx, PROF_META_PYTHON_SAMPLING_HZ,
			 common(p, offsetof(struct job_capture, python_sampling_hz)));
	if (!rc && worst_status(p))
		rc = put(ctx, "exit_status", worst_status(p));
	for (int i = 0; i < p->n; i++) {
		int64_t s, e;

		if (!p->c[i].has_span) {
			span = false;
			break;
		}
		s = start_on_time_base(p, i);
		e = s + p->c[i].duration_ns;
		first = i == 0 || s < first ? s : first;
		last = i == 0 || e > last ? e : last;
	}
	if (!rc && span && p->n > 0)
		rc = put_int(put, ctx, "start_ns", first);
	if (!rc && span && p->n > 0)
		rc = put_int(put, ctx, "duration_ns", last - first);
	if (!rc)
		rc = put_int(put, ctx, JOB_META_CAPTURES, p->n);
	if (!rc)
		rc = put_int(put, ctx, JOB_META_HOSTS, p->nhosts);
	if (!rc)
		rc = put(ctx, JOB_META_NAME, p->name);
	if (!rc)
		rc = put(ctx, JOB_META_TIME_BASE, job_time_base__name(p->time_base));
	if (!rc && p->time_base == JOB_TIME_COLLECTIVES)
		rc = put_int(put, ctx, JOB_META_COLLECTIVES, p->collectives);
	if (!rc && p->error_ns >= 0)
		rc = put_int(put, ctx, JOB_META_TIME_ERROR, (int64_t)(p->error_ns + 0.5));
	return rc;
}

bool job_plan__time(const struct job_plan *p, struct sum_job_time *t)
{
	char hosts[32], collectives[32], error[32];

	/* the values job_meta__write records, so that the merged capture's
	 * overview and the map and reduce say the same */
	snprintf(hosts, sizeof hosts, "%d", p->nhosts);
	snprintf(collectives, sizeof collectives, "%d", p->collectives);
	snprintf(error, sizeof error, "%" PRId64, (int64_t)(p->error_ns + 0.5));
	return sum_job_time__describe(hosts, job_time_base__name(p->time_base),
				      p->time_base == JOB_TIME_COLLECTIVES ? collectives : NULL,
				      p->error_ns >= 0 ? error : NULL, t);
}
