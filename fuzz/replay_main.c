/* replay_main.c - runs a harness's LLVMFuzzerTestOneInput once over every
 * file named on the command line or found in a folder named there (not
 * recursively; names starting with '.' are skipped). It stands in for the
 * fuzzing engine where there is none: CI builds each harness with the
 * ordinary compiler, links it with this main and replays the committed
 * corpus and crash inputs, so an input that crashes again fails the test.
 * A folder that does not exist holds nothing to replay. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int read_all(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return -1;
	do {
		if (cap - len < 65536) {
			uint8_t *nbuf = realloc(buf, cap + 65536);

			if (!nbuf) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nbuf;
			cap += 65536;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*data = buf;
	*size = len;
	return 0;
}

static int replay_file(const char *path)
{
	uint8_t *data = NULL;
	size_t size = 0;

	if (read_all(path, &data, &size) < 0) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* Named before the run: if it crashes, the log says which input did. */
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int skip_hidden(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Returns how many inputs ran, or -1 when one could not be read. */
static long replay_path(const char *path)
{
	struct dirent **list;
	struct stat st;
	long ran = 0;
	int n;

	if (stat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) < 0 ? -1 : 1;
	n = scandir(path, &list, skip_hidden, alphasort);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof file, "%s/%s", path, list[i]->d_name);
		if (ran >= 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode))
			ran = replay_file(file) < 0 ? -1 : ran + 1;
		free(list[i]);
	}
	free(list);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		long ran = replay_path(argv[i]);

		if (ran < 0) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 1;
		}
		total += ran;
	}
	/* A replay that ran nothing checks nothing: a lost corpus must show. */
	if (total == 0) {
		fprintf(stderr, "replay: no input found in the folders given\n");
		return 1;
	}
	printf("replayed %ld inputs without a crash\n", total);
	return 0;
}
