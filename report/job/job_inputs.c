/* job_inputs.c - the capture files a command was given: files as they
 * are, a directory as its *.sqlite files in natural order (job-2 before
 * job-10, as a launcher numbers ranks), without an earlier merge's output
 * left among them; no file twice. */
#define _GNU_SOURCE /* versionsort */
#include "job_impl.h"
#include "job_mpi.h"
#include "model/sums.h"
#include "prof/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_capture_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 7 && !strcmp(name + n - 7, ".sqlite");
}

static int select_capture(const struct dirent *d)
{
	return is_capture_name(d->d_name);
}

static int add_path(struct job_inputs *in, size_t *cap, const char *path, struct prof_error *err)
{
	if (sum_array__grow(&in->paths, cap, (size_t)in->n, sizeof *in->paths))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	in->paths[in->n] = strdup(path);
	if (!in->paths[in->n])
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	in->n++;
	return 0;
}

/* Whether the capture at path is a job an earlier `perfkit merge` made. A
 * file that cannot be read is not: the probe says what is wrong with it. */
static bool is_merged_job(const char *path)
{
	struct prof_store *s;
	struct prof_error err;
	char *captures;
	bool merged;

	if (prof_store__open(path, &s, &err))
		return false;
	captures = prof_store__meta(s, JOB_META_CAPTURES);
	merged = captures != NULL;
	free(captures);
	prof_store__close(s);
	return merged;
}

/* What the other MPI processes saw of their shares of n captures
 * (merged[k] for k = r, r + size, ...): 0, or -1 where the gather failed. */
static int gather_merged(bool *merged, int n, int rank, int size)
{
	char *mine = malloc((size_t)job_share__count(n, rank, size) + 1), **bufs = NULL;
	size_t len = 0, *lens = NULL;
	int rc;

	for (int k = rank; mine && k < n; k += size)
		mine[len++] = merged[k];
	/* sent, empty, without memory too: every process takes part, or none
	 * gets past it (the others then see a share of the wrong size) */
	rc = job_mpi__allgather(mine, len, &bufs, &lens) < 0 || !mine ? -1 : 0;
	for (int r = 0; r < size && bufs; r++) {
		if (!rc && lens[r] != (size_t)job_share__count(n, r, size))
			rc = -1;
		for (int k = r, j = 0; !rc && k < n; k += size, j++)
			merged[k] = bufs[r][j] != 0;
		free(bufs[r]);
	}
	free(bufs);
	free(lens);
	free(mine);
	return rc;
}

/* Move the merged jobs among paths[from..n) to in->skipped, unless that
 * would leave none of them. Each capture is opened to see (2.4 ms a DDP
 * rank's); under an MPI launcher each process opens its share of them
 * and the processes gather what they saw. */
static int skip_merged(struct job_inputs *in, int from, struct prof_error *err)
{
	int n = in->n - from, rank, size;
	bool *merged = calloc((size_t)n + 1, sizeof *merged);
	size_t cap = 0;
	int kept = 0, rc = 0;

	if (!merged)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	job_mpi__begin(&rank, &size);
	for (int k = rank; k < n; k += size)
		merged[k] = is_merged_job(in->paths[from + k]);
	if (size > 1 && gather_merged(merged, n, rank, size)) {
		free(merged);
		return prof_error__set(err, PROF_E_IO, "the MPI processes could not gather their captures");
	}
	for (int k = 0; k < n; k++)
		kept += !merged[k];
	for (int i = from, to = from; kept && i < in->n; i++) {
		if (merged[i - from]) {
			if (!rc && sum_array__grow(&in->skipped, &cap, (size_t)in->nskipped,
						   sizeof *in->skipped))
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			if (!rc)
				in->skipped[in->nskipped++] = in->paths[i];
			else
				free(in->paths[i]);
		} else {
			in->paths[to++] = in->paths[i];
		}
	}
	if (kept)
		in->n = from + kept;
	free(merged);
	return rc;
}

/* Refuse a file given twice, whatever its names. */
static int check_distinct(const struct job_inputs *in, struct prof_error *err)
{
	struct stat *st = calloc((size_t)in->n + 1, sizeof *st);
	bool *known = calloc((size_t)in->n + 1, sizeof *known);
	int rc = 0;

	if (!st || !known) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < in->n && !rc; i++) {
		/* a file that cannot be read: the probe says why */
		known[i] = stat(in->paths[i], &st[i]) == 0;
		for (int j = 0; known[i] && j < i && !rc; j++) {
			if (!known[j] || st[j].st_dev != st[i].st_dev || st[j].st_ino != st[i].st_ino)
				continue;
			if (!strcmp(in->paths[i], in->paths[j]))
				rc = prof_error__set(err, PROF_E_USAGE,
						     "%s is given twice: its capture would count twice",
						     in->paths[i]);
			else
				rc = prof_error__set(err, PROF_E_USAGE,
						     "%s and %s are the same file: its capture would "
						     "count twice", in->paths[j], in->paths[i]);
		}
	}
out:
	free(st);
	free(known);
	return rc;
}

/* The captures of directory dir, appended in natural order. */
static int add_directory(struct job_inputs *in, size_t *cap, const char *dir,
			 struct prof_error *err)
{
	struct dirent **found = NULL;
	int n = scandir(dir, &found, select_capture, versionsort), rc = 0, added = 0;
	size_t len = strlen(dir);
	bool slash = len && dir[len - 1] == '/';

	if (n < 0)
		return prof_error__set(err, PROF_E_IO, "%s: cannot read the directory: %s", dir,
				       strerror(errno));
	for (int i = 0; i < n; i++) {
		char *path = NULL;
		struct stat st;

		if (!rc && asprintf(&path, "%s%s%s", dir, slash ? "" : "/", found[i]->d_name) < 0) {
			path = NULL;
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		/* a directory named *.sqlite is no capture */
		if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			rc = add_path(in, cap, path, err);
			added += !rc;
		}
		free(path);
		free(found[i]);
	}
	free(found);
	if (!rc && !added)
		rc = prof_error__set(err, PROF_E_IO, "%s: the directory holds no captures (*.sqlite)",
				     dir);
	if (!rc)
		rc = skip_merged(in, in->n - added, err);
	return rc;
}

static int make_name(struct job_inputs *in, char *const *args, int nargs, struct prof_error *err)
{
	size_t len = 1;

	for (int i = 0; i < nargs; i++)
		len += strlen(args[i]) + 1;
	in->name = malloc(len);
	if (!in->name)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	in->name[0] = '\0';
	for (int i = 0; i < nargs; i++) {
		if (i)
			strcat(in->name, " ");
		strcat(in->name, args[i]);
	}
	return 0;
}

int job_inputs__collect(char *const *args, int nargs, unsigned flags, struct job_inputs *in,
			struct prof_error *err)
{
	size_t cap = 0;
	int rc = 0;

	memset(in, 0, sizeof *in);
	in->force = flags & JOB_INPUTS_FORCE;
	for (int i = 0; !rc && i < nargs; i++) {
		struct stat st;

		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_directory(in, &cap, args[i], err);
		else
			rc = add_path(in, &cap, args[i], err); /* the reader says what is wrong with it */
	}
	if (!rc)
		rc = check_distinct(in, err);
	if (!rc)
		rc = make_name(in, args, nargs, err);
	if (rc) {
		job_inputs__exit(in);
		job_mpi__end(); /* every process fails alike: all leave the MPI job */
	}
	return rc;
}

void job_inputs__exit(struct job_inputs *in)
{
	for (int i = 0; i < in->n; i++)
		free(in->paths[i]);
	for (int i = 0; i < in->nskipped; i++)
		free(in->skipped[i]);
	free(in->skipped);
	free(in->paths);
	free(in->name);
	memset(in, 0, sizeof *in);
}
