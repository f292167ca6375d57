/* busy_tape.c - the busy intervals' temporary file (see busy_tape.h). */
#include "busy_tape.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "prof/strfmt.h"

struct busy_tape {
	FILE *f;
	bool failed;
	/* set once the walk's records are in the file: another thread (the
	 * page's diagnosis) may read them from then on */
	atomic_bool sealed;
};

struct busy_record {
	int64_t device_id, start_ns, end_ns;
};

struct busy_tape *busy_tape__open(const char *dir)
{
	struct busy_tape *t = calloc(1, sizeof *t);
	char *path = prof_strfmt("%s/busy.tape", dir);

	if (t && path && (t->f = fopen(path, "w+bx")))
		unlink(path);
	free(path);
	if (t && !t->f) {
		free(t);
		t = NULL;
	}
	return t;
}

static void record(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns)
{
	struct busy_tape *t = ctx;
	struct busy_record r = { device_id, start_ns, end_ns };

	if (!t->failed && fwrite(&r, sizeof r, 1, t->f) != 1)
		t->failed = true;
}

struct sum_busy_tap busy_tape__tap(struct busy_tape *t)
{
	return (struct sum_busy_tap){ .interval = record, .ctx = t };
}

void busy_tape__seal(struct busy_tape *t)
{
	if (t && !t->failed && fflush(t->f) == 0)
		atomic_store_explicit(&t->sealed, true, memory_order_release);
}

int busy_tape__replay(struct busy_tape *t,
		      int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
		      void *ctx)
{
	struct busy_record r[512];
	off_t at = 0;
	ssize_t got = 0;
	int rc = 0;

	if (!t || !atomic_load_explicit(&t->sealed, memory_order_acquire))
		return -1;
	/* read at an offset of its own: two threads may replay one tape */
	while (rc >= 0 && (got = pread(fileno(t->f), r, sizeof r, at)) > 0) {
		if (got % (ssize_t)sizeof *r)
			return -1;
		for (size_t i = 0; rc >= 0 && i < (size_t)got / sizeof *r; i++)
			rc = interval(ctx, r[i].device_id, r[i].start_ns, r[i].end_ns);
		at += got;
	}
	return rc < 0 || got < 0 ? -1 : 0;
}

int busy_tape__replay_lent(void *tape,
			   int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
			   void *ctx)
{
	return busy_tape__replay(tape, interval, ctx);
}

void busy_tape__close(struct busy_tape *t)
{
	if (!t)
		return;
	fclose(t->f);
	free(t);
}
