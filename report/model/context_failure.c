/* context_failure.c - where a program's CUDA context failed: the first CUDA
 * call that returned one of the errors after which the context is unusable
 * (an illegal address, a device-side assert, a kernel exception...). Every
 * later CUDA call fails too, so the first one is where it happened; the
 * kernels and copies whose GPU times CUPTI had not read back by then have
 * none (the collector's incomplete_kernels and incomplete_copies). */
#include "model/context_failure.h"
#include "model/call_census.h"
#include "model/sticky_errors.h"
#include "model/memo.h"
#include "model/names.h"
#include "model/window.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/saturate.h"

/* The earliest sticky error of one API table into f, when earlier than
 * what f holds. */
static int first_in(struct prof_store *s, const char *table, bool driver,
		    struct sum_context_failure *f, struct prof_error *err)
{
	char sql[512];
	struct prof_cursor *c = NULL;
	struct call_census census;
	int rc = sum_call_census(s, table, &census, err);

	/* no call of every row failed: none of those shown did */
	if (rc < 0 || (rc == 1 && census.sticky == 0))
		return rc < 0 ? rc : 0;
	snprintf(sql, sizeof sql,
		 "SELECT r.start, s.value, r.returnValue FROM %s r JOIN " SUM_API_NAMES
		 " s ON s.id = r.nameId WHERE r.returnValue IN (" SUM_STICKY_CODES ")"
		 " ORDER BY r.start LIMIT 1",
		 table);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0 && (!f->failed || prof_cursor__int64(c, 0) < f->at_ns)) {
		const struct sum_sticky_error *e = sum_sticky_error(prof_cursor__int64(c, 2));
		const char *call = prof_cursor__text(c, 1);

		f->failed = true;
		f->at_ns = prof_cursor__int64(c, 0);
		f->code = e->code;
		f->error_name = driver ? e->driver_name : e->runtime_name;
		f->what = e->what;
		snprintf(f->call, sizeof f->call, "%s", call ? call : "a CUDA call");
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The failure of the capture as s shows it, into out (a struct
 * sum_context_failure: sum_shared__value's maker). */
static int find(struct prof_store *s, void *out, struct prof_error *err)
{
	struct sum_context_failure *f = out;
	struct sum_capture_time time;
	int rc;

	memset(f, 0, sizeof *f);
	rc = sum_capture__zero(s, &time, err);
	if (rc < 0)
		return rc;
	f->run_start_ns = time.zero_ns;
	f->incomplete_kernels = prof_store__counter(s, "incomplete_kernels");
	f->incomplete_copies = prof_store__counter(s, "incomplete_copies");
	rc = first_in(s, PROF_T_RUNTIME, false, f, err);
	if (rc >= 0)
		rc = first_in(s, PROF_T_DRIVER, true, f, err);
	return rc;
}

void sum_context_failure__say(const struct sum_context_failure *f, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (!f->failed)
		return;
	snprintf(buf, cap, "the program's CUDA context failed at +%.3f s: %s returned %s (%d, %s); no "
		 "GPU work ran after it", (double)prof_span_saturated(f->run_start_ns, f->at_ns) / 1e9,
		 f->call, f->error_name,
		 f->code, f->what);
}

void sum_context_failure__say_untimed(const struct sum_context_failure *f, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	if (f->incomplete_kernels <= 0 && f->incomplete_copies <= 0)
		return;
	if (f->incomplete_kernels > 0)
		n += (size_t)snprintf(buf + n, cap - n, "%" PRId64 " kernel%s%s", f->incomplete_kernels,
				      f->incomplete_kernels == 1 ? "" : "s",
				      f->incomplete_copies > 0 ? " and " : "");
	if (n < cap && f->incomplete_copies > 0)
		n += (size_t)snprintf(buf + n, cap - n, "%" PRId64 " %s", f->incomplete_copies,
				      f->incomplete_copies == 1 ? "copy or memset" : "copies or memsets");
	if (n < cap)
		snprintf(buf + n, cap - n, " %s no GPU times: CUPTI had not read them back when %s; "
			 "they are in no total",
			 f->incomplete_kernels + f->incomplete_copies == 1 ? "has" : "have",
			 f->failed ? "the context failed (work queued after the failure never ran)"
				   : "the capture ended");
}

/* The failure of a finished capture read whole, shared by the connections
 * to the file (prof_store__shared_take): it is a pass over every call
 * (1.7 s at 22M calls), which the HTML page's overview and its diagnosis
 * each made. */
static const char failure_key = 0;

int sum_context_failure__find(struct prof_store *s, struct sum_context_failure *f,
			      struct prof_error *err)
{
	/* its names are static strings or its own array: copied whole */
	return sum_shared__value(s, &failure_key, f, sizeof *f, find, err);
}
