/* busy_tape.c - the busy intervals' temporary file (see busy_tape.h). */
#include "busy_tape.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "prof/strfmt.h"

struct busy_tape {
	FILE *f;
	bool failed, sealed;
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
		t->sealed = true;
}

int busy_tape__replay(struct busy_tape *t,
		      int (*interval)(void *ctx, int64_t device_id, int64_t start_ns, int64_t end_ns),
		      void *ctx)
{
	struct busy_record r;
	int rc = 0;

	if (!t || !t->sealed || fseek(t->f, 0, SEEK_SET) != 0)
		return -1;
	while (rc >= 0 && fread(&r, sizeof r, 1, t->f) == 1)
		rc = interval(ctx, r.device_id, r.start_ns, r.end_ns);
	return rc < 0 || ferror(t->f) ? -1 : 0;
}

void busy_tape__close(struct busy_tape *t)
{
	if (!t)
		return;
	fclose(t->f);
	free(t);
}
