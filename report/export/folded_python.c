/* folded_python.c - the Python stacks of CUDA calls as folded frames
 * (folded_python.h). Only the stacks a call names are read: the samples'
 * stacks are not the calls'. */
#include "folded_python.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sums.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

/* A call's first stack, as the GROUP BY over every call gave it: the
 * columns INTEGER, as the calls' table has them, so that the join compares
 * as it did; a call of no thread or id matches no call. */
static const char calls_sql[] =
	"DROP TABLE IF EXISTS " FOLDED_PY_CALLS ";"
	"CREATE TABLE " FOLDED_PY_CALLS " (t INTEGER, c INTEGER, p INTEGER, k INTEGER, PRIMARY KEY (t, c))"
	" WITHOUT ROWID;"
	"INSERT INTO " FOLDED_PY_CALLS " SELECT globalTid, correlationId, min(globalPid), min(stackId) FROM "
	PROF_T_PY_CUDA_CALLS " WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL GROUP BY 1, 2;";

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* One frame: a Python frame by its function and place, a native one by
 * its function and library. */
static char *frame_of(char *(*make_frame)(const char *), const char *fn, const char *file,
		      int64_t line, int64_t kind)
{
	char *raw, *safe;

	fn = fn ? fn : "?";
	file = file ? file : "?";
	raw = kind == 1 ? prof_strfmt("%s [%s]", fn, file)
			: prof_strfmt("%s (%s:%" PRId64 ")", fn, file, line);
	safe = raw ? make_frame(raw) : NULL;
	free(raw);
	return safe;
}

int folded_py__load(struct prof_store *s, char *(*make_frame)(const char *), struct folded_py *p,
		    struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	memset(p, 0, sizeof *p);
	rc = prof_cursor__open(s, "SELECT f.globalPid, f.stackId, fn.value, fi.value, f.line, f.kind FROM "
			       PROF_T_PY_FRAMES " f LEFT JOIN " PROF_T_STRINGS " fn ON fn.id = f.functionId"
			       " LEFT JOIN " PROF_T_STRINGS " fi ON fi.id = f.fileId"
			       " WHERE (f.globalPid, f.stackId) IN (SELECT globalPid, stackId FROM "
			       PROF_T_PY_CUDA_CALLS ") ORDER BY f.globalPid, f.stackId, f.depth DESC",
			       &c, err);
	if (rc < 0)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t pid = prof_cursor__int64(c, 0), stack = prof_cursor__int64(c, 1);
		char *frame = frame_of(make_frame, prof_cursor__text(c, 2), prof_cursor__text(c, 3),
				       prof_cursor__int64(c, 4), prof_cursor__int64(c, 5));
		struct folded_py_stack *st = p->n ? &p->v[p->n - 1] : NULL;
		char *joined;

		if (!frame) {
			rc = nomem(err);
			break;
		}
		if (!st || st->global_pid != pid || st->stack_id != stack) {
			if (sum_array__grow(&p->v, &p->cap, p->n, sizeof *p->v) < 0) {
				free(frame);
				rc = nomem(err);
				break;
			}
			p->v[p->n++] = (struct folded_py_stack){ pid, stack, frame };
			continue;
		}
		joined = prof_strfmt("%s;%s", st->frames, frame);
		free(frame);
		if (!joined) {
			rc = nomem(err);
			break;
		}
		free(st->frames);
		st->frames = joined;
	}
	prof_cursor__close(c);
	if (rc >= 0 && p->n)
		rc = prof_store__exec(s, calls_sql, err);
	if (rc < 0)
		folded_py__exit(p);
	return rc < 0 ? rc : 0;
}

const char *folded_py__frames(const struct folded_py *p, int64_t global_pid, int64_t stack_id)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct folded_py_stack *st = &p->v[mid];

		if (st->global_pid < global_pid || (st->global_pid == global_pid && st->stack_id < stack_id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && p->v[lo].global_pid == global_pid && p->v[lo].stack_id == stack_id
		       ? p->v[lo].frames
		       : NULL;
}

void folded_py__exit(struct folded_py *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].frames);
	free(p->v);
	memset(p, 0, sizeof *p);
}
