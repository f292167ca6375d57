/* run_window.c - capture windows, as `perfkit run` asks for them:
 * --capture-range=nvtx:NAME[@DOMAIN][,skip=M][,count=N] | cudaProfilerApi,
 * --delay=DUR, --duration=DUR and --start-paused (perfkit start and stop
 * then open and close windows). The collector opens and closes them
 * (collectors/capture_window.c); this side checks the options, hands them
 * over in the environment and says at the end how much of the run the
 * windows held. */
#include "run_session_parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof/capture_range.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "prof/trace_opts.h"
#include "prof/units.h"

int run__window_check(struct run_session *s)
{
	const struct run_options *o = &s->opt;
	const char *why = NULL;

	struct prof_capture_range range;

	if (o->capture_range && prof_capture_range__parse(o->capture_range, &range, &why) < 0) {
		s->msg->error("--capture-range=%s: %s", o->capture_range, why);
		return -1;
	}
	if (o->capture_range && !strncmp(o->capture_range, "nvtx:", 5) &&
	    !(s->trace & PROF_TRACE_NVTX)) {
		s->msg->error("--capture-range=nvtx:... watches NVTX ranges: add nvtx to --trace");
		return -1;
	}
	if (o->delay && prof_units__parse_duration(o->delay, &s->delay_ns) < 0) {
		s->msg->error("--delay=%s is not a duration (30s, 500ms)", o->delay);
		return -1;
	}
	if (o->duration &&
	    (prof_units__parse_duration(o->duration, &s->duration_ns) < 0 || s->duration_ns <= 0)) {
		s->msg->error("--duration=%s is not a duration above 0 (30s, 500ms)",
			      o->duration);
		return -1;
	}
	if (o->capture_range && (o->delay || o->duration)) {
		s->msg->error("--capture-range opens its own windows: --delay and --duration "
			      "go without it");
		return -1;
	}
	return 0;
}

bool run__windows_asked(const struct run_session *s)
{
	return s->opt.capture_range || s->opt.delay || s->opt.duration || s->opt.start_paused;
}

bool run_session__windowed(const struct run_session *s)
{
	return run__windows_asked(s);
}

int run__window_env(const struct run_session *s)
{
	char num[32];

	unsetenv(PROF_ENV_CAPTURE_RANGE);
	unsetenv(PROF_ENV_CAPTURE_DELAY_MS);
	unsetenv(PROF_ENV_CAPTURE_DURATION_MS);
	unsetenv(PROF_ENV_START_PAUSED);
	if (s->opt.capture_range && setenv(PROF_ENV_CAPTURE_RANGE, s->opt.capture_range, 1) < 0)
		return -1;
	/* the collector counts in ms: a shorter delay is no delay, a shorter
	 * duration one ms */
	snprintf(num, sizeof num, "%" PRId64, s->delay_ns / 1000000);
	if (s->opt.delay && s->delay_ns >= 1000000 && setenv(PROF_ENV_CAPTURE_DELAY_MS, num, 1) < 0)
		return -1;
	snprintf(num, sizeof num, "%" PRId64,
		 s->duration_ns < 1000000 ? (int64_t)1 : s->duration_ns / 1000000);
	if (s->opt.duration && setenv(PROF_ENV_CAPTURE_DURATION_MS, num, 1) < 0)
		return -1;
	/* a --delay of 0 still starts closed until its first look */
	if ((s->opt.start_paused || (s->opt.delay && s->delay_ns < 1000000)) &&
	    setenv(PROF_ENV_START_PAUSED, "1", 1) < 0)
		return -1;
	return 0;
}

int run__window_start_env(void)
{
	struct timespec ts;
	char num[32];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(num, sizeof num, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	return setenv(PROF_ENV_RUN_START_NS, num, 1);
}

void run__window_report(const struct run_session *s, struct prof_store *store)
{
	int64_t windows = 0, held = 0, run_ns = s->end_ns - s->start_ns;
	struct prof_cursor *c = NULL;
	struct prof_error err;

	bool has = prof_store__has_table(store, PROF_T_CAPTURE_WINDOWS);

	/* a run without window options has them once perfkit stop came */
	if (!run__windows_asked(s) && !has)
		return;
	if (!has) {
		fprintf(stderr, "perfkit: no capture window opened, so nothing was recorded%s\n",
			s->opt.capture_range && !strncmp(s->opt.capture_range, "nvtx:", 5)
				? " (the program never opened that NVTX range?)"
			: s->opt.capture_range ? " (the program never called cudaProfilerStart?)"
					       : "");
		return;
	}
	/* the process that held the most: a job's ranks open theirs together */
	if (prof_cursor__open(store,
			      "SELECT COUNT(*), SUM(COALESCE(end, start) - start) FROM "
			      PROF_T_CAPTURE_WINDOWS " GROUP BY globalPid ORDER BY 2 DESC LIMIT 1",
			      &c, &err) == 0 &&
	    prof_cursor__next(c, &err) > 0) {
		windows = prof_cursor__int64(c, 0);
		held = prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	fprintf(stderr, "perfkit: %lld capture window%s held %.3f s", (long long)windows,
		windows == 1 ? "" : "s", (double)held / 1e9);
	if (run_ns > 0)
		fprintf(stderr, " of the %.3f s run (%.1f%%)", (double)run_ns / 1e9,
			100.0 * (double)held / (double)run_ns);
	fputc('\n', stderr);
}
