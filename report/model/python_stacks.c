/* python_stacks.c - what a capture holds of Python (module ranges, samples,
 * CUDA calls' stacks), the time a sample stands for, and one stack's
 * frames in words (python_stacks.h). */
#include "model/python_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"
#include "prof/tables.h"

const char *py_direction__name(int direction)
{
	switch (direction) {
	case PY_FORWARD:
		return "forward";
	case PY_BACKWARD:
		return "backward";
	case PY_OPTIMIZER:
		return "optimizer";
	}
	return "?";
}

/* One integer a statement gives (0 without a row). */
static int query_int(struct prof_store *s, const char *sql, int64_t *v, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, sql, &c, err);

	*v = 0;
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0 && !prof_cursor__is_null(c, 0))
		*v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The rate asked for, when the capture says it and it is a number of
 * samples a second that gives a period of at least 1 ns. */
static int64_t period_of_meta(struct prof_store *s)
{
	char *hz = prof_store__meta(s, "python_sampling_hz"), *end = NULL;
	double v = hz ? strtod(hz, &end) : 0;
	int64_t period = 0;

	if (hz && end != hz && *end == '\0' && v >= 1 && v <= 1e9)
		period = (int64_t)(1e9 / v + 0.5);
	free(hz);
	return period;
}

int py_capture__read(struct prof_store *s, struct py_capture *c, struct prof_error *err)
{
	int64_t v;
	int rc;

	memset(c, 0, sizeof *c);
	rc = query_int(s, "SELECT EXISTS (SELECT 1 FROM " PROF_T_NVTX " n JOIN " PROF_T_STRINGS
		       " d ON d.id = n.textId WHERE n.eventType = " PROF_SQL_NVTX_DOMAIN_CREATE
		       " AND d.value = '" PY_MODULES_DOMAIN "') OR EXISTS (SELECT 1 FROM "
		       PROF_T_NVTX " n WHERE n.eventType = " PROF_SQL_NVTX_DOMAIN_CREATE
		       " AND n.text = '" PY_MODULES_DOMAIN "')", &v, err);
	if (rc < 0)
		return rc;
	c->has_modules = v != 0;
	rc = query_int(s, "SELECT EXISTS (SELECT 1 FROM " PROF_T_PY_SAMPLES ")", &v, err);
	if (rc < 0)
		return rc;
	c->has_samples = v != 0;
	rc = query_int(s, "SELECT EXISTS (SELECT 1 FROM " PROF_T_PY_CUDA_CALLS ")", &v, err);
	if (rc < 0)
		return rc;
	c->has_cuda_calls = v != 0;
	if (!c->has_samples)
		return 0;
	c->period_ns = period_of_meta(s);
	if (c->period_ns > 0)
		return 0;
	/* No rate recorded: the spacing of the thread sampled most. */
	rc = query_int(s, "SELECT (max(start) - min(start)) / (count(*) - 1) FROM "
		       PROF_T_PY_SAMPLES " WHERE globalTid = (SELECT globalTid FROM "
		       PROF_T_PY_SAMPLES " GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1)"
		       " HAVING count(*) > 1", &v, err);
	if (rc < 0)
		return rc;
	c->period_ns = v > 0 ? v : 0;
	c->period_measured = true;
	return 0;
}

int py_stack__format(struct prof_store *s, int64_t global_pid, int64_t stack_id, const char *sep,
		     char **out, struct prof_error *err)
{
	struct prof_cursor *c;
	char *text = NULL;
	int rc;

	*out = NULL;
	rc = prof_cursor__open(s, "SELECT fn.value, fi.value, f.line, f.kind FROM " PROF_T_PY_FRAMES
			       " f LEFT JOIN " PROF_T_STRINGS " fn ON fn.id = f.functionId LEFT JOIN "
			       PROF_T_STRINGS " fi ON fi.id = f.fileId"
			       " WHERE f.globalPid = ?1 AND f.stackId = ?2 ORDER BY f.depth DESC",
			       &c, err);
	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(c, 1, global_pid);
	prof_cursor__bind_int64(c, 2, stack_id);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *fn = prof_cursor__text(c, 0), *file = prof_cursor__text(c, 1);
		char *next;

		fn = fn ? fn : "?";
		file = file ? file : "?";
		if (prof_cursor__int64(c, 3) == 1)
			next = prof_strfmt("%s%s%s [%s]", text ? text : "", text ? sep : "", fn, file);
		else
			next = prof_strfmt("%s%s%s (%s:%lld)", text ? text : "", text ? sep : "", fn,
					   file, (long long)prof_cursor__int64(c, 2));
		free(text);
		text = next;
		if (!text) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc < 0) {
		free(text);
		return rc;
	}
	*out = text;
	return 0;
}
