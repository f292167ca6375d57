/* job_fixture.h - a job of several ranks made of real single-process
 * captures, for the tests of the rank model, --rank and the per-rank
 * reports until captures of real multi-process jobs exist. The CUDA rows
 * are the captures' own (merged with prof_writer__merge, as `perfkit run`
 * merges a job's per-process files); what this writes itself is what the
 * collector records about a job: a launcher process without CUDA work
 * (PROCESSES, and PERFKIT_PROCESS_INFO without a rank) and, unless
 * JOB_NO_INFO, each capture's process as rank i of the job on host
 * "node-a" (PERFKIT_PROCESS_INFO) with the GPU its capture names
 * (PERFKIT_PROCESS_GPUS: device 0, TARGET_INFO_GPU's uuid). With
 * JOB_NO_INFO the job looks like an nsys export or an earlier capture:
 * ranks come from CUDA work. JOB_REVERSE numbers the ranks against pid
 * order. Used by the unit tests and by tests/tools/make_job.c. */
#ifndef PERFKIT_JOB_FIXTURE_H
#define PERFKIT_JOB_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "prof/store.h"

enum job_flags { JOB_NO_INFO = 1 << 0, JOB_REVERSE = 1 << 1 };

#define JOB_LAUNCHER_PID 7
#define JOB_HOST "node-a"

/* The globalPid and first GPU uuid of a single-process capture. */
static int job_fixture__describe(const char *path, int64_t *global_pid, char *uuid, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct prof_cursor *c;
	int rc = prof_store__open(path, &s, &err);

	if (rc) {
		fprintf(stderr, "job_fixture: %s\n", err.msg);
		return rc;
	}
	*global_pid = -1;
	uuid[0] = '\0';
	if (prof_cursor__open(s, "SELECT globalPid FROM PROCESSES ORDER BY rowid LIMIT 1", &c, &err) == 0) {
		if (prof_cursor__next(c, &err) == 1)
			*global_pid = prof_cursor__int64(c, 0);
		prof_cursor__close(c);
	}
	if (prof_cursor__open(s, "SELECT uuid FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", &c, &err) == 0) {
		if (prof_cursor__next(c, &err) == 1 && prof_cursor__text(c, 0))
			snprintf(uuid, cap, "%s", prof_cursor__text(c, 0));
		prof_cursor__close(c);
	}
	prof_store__close(s);
	if (*global_pid < 0) {
		fprintf(stderr, "job_fixture: %s names no process\n", path);
		return -1;
	}
	return 0;
}

/* Write the job of the n captures to out; 0, or non-zero with a message
 * on stderr. */
static int job_fixture__make(const char *out, const char *const *captures, int n, unsigned flags)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	bool info = !(flags & JOB_NO_INFO), reverse = flags & JOB_REVERSE;
	int rc = 0;

	if (prof_writer__create(out, PROF_WRITER_OVERWRITE, &w, &err)) {
		fprintf(stderr, "job_fixture: %s\n", err.msg);
		return 1;
	}
	rc |= prof_writer__meta(w, "command", "torchrun --nproc_per_node=N (made of single captures)");
	rc |= prof_writer__meta(w, "host", JOB_HOST);
	rc |= prof_writer__process(w, JOB_LAUNCHER_PID, "torchrun");
	if (info) {
		struct prof_process_info launcher = { .global_pid = prof_global_pid(JOB_LAUNCHER_PID),
						      .host = JOB_HOST, .rank = -1, .world_size = -1,
						      .local_rank = -1 };

		rc |= prof_writer__process_info(w, &launcher);
	}
	for (int i = 0; i < n && rc == 0; i++) {
		char uuid[128];
		int64_t global_pid;

		if (job_fixture__describe(captures[i], &global_pid, uuid, sizeof uuid) ||
		    prof_writer__merge(w, captures[i], &err)) {
			fprintf(stderr, "job_fixture: %s\n", err.msg[0] ? err.msg : captures[i]);
			rc = 1;
			break;
		}
		if (info) {
			long rank = reverse ? n - 1 - i : i;
			struct prof_process_info p = { .global_pid = global_pid, .host = JOB_HOST,
						       .rank = rank, .world_size = n, .local_rank = rank,
						       .launcher = "torchrun" };

			rc |= prof_writer__process_info(w, &p);
			rc |= prof_writer__process_gpu(w, global_pid, 0, uuid[0] ? uuid : NULL);
		}
	}
	if (rc) {
		prof_writer__delete(w);
		return 1;
	}
	if (prof_writer__finish(w, &err)) {
		fprintf(stderr, "job_fixture: %s\n", err.msg);
		return 1;
	}
	return 0;
}

#endif
