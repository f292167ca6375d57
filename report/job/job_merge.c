/* job_merge.c - a job's captures written as one capture: each folded in by
 * libprof's merge with its host's process bits and its time base, then the
 * job's metadata. */
#include "job_impl.h"

#include <stdio.h>
#include <sys/stat.h>

#include "prof/output.h"

static int put_meta(void *ctx, const char *key, const char *value)
{
	return prof_writer__meta(ctx, key, value);
}

/* Writing over one of the inputs would destroy it before it is read. */
static int check_output(const struct job_plan *p, const char *out_path, struct prof_error *err)
{
	struct stat out, in;

	if (stat(out_path, &out) != 0)
		return 0;
	for (int i = 0; i < p->n; i++)
		if (stat(p->c[i].path, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return prof_error__set(err, PROF_E_USAGE,
					       "%s: the output is one of the captures to merge",
					       out_path);
	return 0;
}

int job__merge(const struct job_plan *p, const char *out_path, unsigned flags,
	       struct prof_error *err)
{
	struct prof_output *out = NULL;
	struct prof_writer *w = NULL;
	int rc;

	rc = check_output(p, out_path, err);
	if (!rc)
		rc = prof_output__open(out_path, flags | PROF_OUTPUT_BY_NAME, NULL, &out, err);
	if (!rc)
		rc = prof_writer__create(prof_output__temp_path(out), PROF_WRITER_CLAIMED, &w, err);
	if (!rc && prof_writer__set_name(w, out_path) < 0) {
		*err = *prof_writer__last_error(w);
		rc = err->code;
	}
	for (int i = 0; !rc && i < p->n; i++)
		rc = prof_writer__merge_mapped(w, p->c[i].path, &p->maps[i], err);
	if (!rc)
		rc = job_plan__unchanged(p, err);
	if (!rc && job_meta__write(p, put_meta, w)) {
		*err = *prof_writer__last_error(w);
		rc = err->code ? err->code : PROF_E_SQL;
	}
	if (!rc) {
		rc = prof_writer__finish(w, err);
		w = NULL;
	}
	if (w)
		prof_writer__delete(w);
	/* complete, or what was at out_path stays as it was */
	if (!rc)
		rc = prof_output__commit(out, err);
	prof_output__delete(out);
	return rc;
}
