/* job_inputs.c - the capture files a command was given: files as they
 * are, a directory as its *.sqlite files in natural order (job-2 before
 * job-10, as a launcher numbers ranks). */
#define _GNU_SOURCE /* versionsort */
#include "job.h"
#include "summary/query.h"

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

int job_inputs__collect(char *const *args, int nargs, struct job_inputs *in,
			struct prof_error *err)
{
	size_t cap = 0;
	int rc = 0;

	memset(in, 0, sizeof *in);
	for (int i = 0; !rc && i < nargs; i++) {
		struct stat st;

		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_directory(in, &cap, args[i], err);
		else
			rc = add_path(in, &cap, args[i], err); /* the reader says what is wrong with it */
	}
	if (!rc)
		rc = make_name(in, args, nargs, err);
	if (rc)
		job_inputs__exit(in);
	return rc;
}

void job_inputs__exit(struct job_inputs *in)
{
	for (int i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	free(in->name);
	memset(in, 0, sizeof *in);
}
