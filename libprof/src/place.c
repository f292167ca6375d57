/* place.c - a finished capture put where it belongs: the side files of
 * SQLite (-wal, -shm, -journal) that would be taken for a new file's own,
 * and the file renamed (or copied across file systems) over the output's
 * name, unless another run took that name meanwhile (store_impl.h). Below
 * the writer and the take-over, which both put files in place. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/output.h"
#include "store_impl.h"

void writer__remove_side_files(const char *path)
{
	static const char *const suffix[] = { "-wal", "-shm", "-journal" };
	char buf[4096];

	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(buf, sizeof buf, "%s%s", path, suffix[i]);
		unlink(buf);
	}
}

/* Copy src to dst through a temporary file beside dst, renamed into place:
 * for a src on another file system than dst. dst is the writer's own file,
 * which the copy replaces. */
static int copy_into_place(const char *src, const char *dst, struct prof_error *err)
{
	struct prof_output *out = NULL;
	char buf[1 << 16];
	FILE *in = fopen(src, "rb");
	size_t n;
	int rc;

	if (!in)
		return prof_error__set(err, PROF_E_NOT_PLACED, "%s: cannot put the capture in place: %s",
				       dst, strerror(errno));
	rc = prof_output__open(dst, PROF_OUTPUT_REPLACE, NULL, &out, err);
	while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, prof_output__stream(out)) != n)
			rc = prof_error__set(err, PROF_E_IO, "%s: %s", dst, strerror(errno));
	if (!rc && ferror(in))
		rc = prof_error__set(err, PROF_E_IO, "%s: %s", src, strerror(errno));
	if (!rc)
		rc = prof_output__commit(out, err);
	prof_output__delete(out);
	fclose(in);
	if (rc) {
		char why[PROF_ERROR_MSG_MAX];

		snprintf(why, sizeof why, "%s", err->msg);
		return prof_error__set(err, PROF_E_NOT_PLACED, "cannot put the capture in place: %s",
				       why);
	}
	unlink(src);
	return 0;
}

int take_over__put_in_place(const char *src, const char *dst, const struct file_id *dst_id,
			    struct prof_error *err)
{
	struct stat st;

	if (dst_id->known && lstat(dst, &st) == 0 &&
	    (st.st_dev != dst_id->dev || st.st_ino != dst_id->ino))
		return prof_error__set(err, PROF_E_NOT_PLACED,
				       "another file took the output's name (%s)", dst);
	/* companions of the file being replaced would be taken for the new
	 * file's own (its WAL was folded in when its writer closed) */
	writer__remove_side_files(dst);
	if (rename(src, dst) == 0)
		return 0;
	if (errno == EXDEV)
		return copy_into_place(src, dst, err);
	return prof_error__set(err, PROF_E_NOT_PLACED, "%s: cannot rename it to %s: %s", src, dst,
			       strerror(errno));
}
