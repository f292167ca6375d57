/* file.c - reading a whole file into memory. See prof/file.h. */
#include "prof/file.h"

#include <errno.h>
#include <stdlib.h>

#include "prof/error.h"

/* The buffer starts at FIRST_CAP_BYTES and doubles whenever less than
 * MIN_ROOM_BYTES are left for the next read. */
#define FIRST_CAP_BYTES 65536
#define MIN_ROOM_BYTES 4096

int prof_file__read_stream(FILE *f, size_t max_bytes, char **text, size_t *len_bytes)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc = 0, saved;

	*text = NULL;
	do {
		if (cap - len < MIN_ROOM_BYTES) {
			size_t ncap = cap ? cap * 2 : FIRST_CAP_BYTES;
			char *nbuf = realloc(buf, ncap);

			if (!nbuf) {
				rc = PROF_E_NOMEM;
				goto out;
			}
			buf = nbuf;
			cap = ncap;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (max_bytes && len > max_bytes) {
			errno = EFBIG;
			rc = PROF_E_IO;
			goto out;
		}
	} while (got);
	if (ferror(f))
		rc = PROF_E_IO;
out:
	if (rc) {
		saved = errno;
		free(buf);
		errno = saved;
		return rc;
	}
	buf[len] = '\0';
	*text = buf;
	if (len_bytes)
		*len_bytes = len;
	return 0;
}

int prof_file__read(const char *path, size_t max_bytes, char **text, size_t *len_bytes)
{
	FILE *f = fopen(path, "rb");
	int rc, saved;

	*text = NULL;
	if (!f)
		return PROF_E_IO;
	rc = prof_file__read_stream(f, max_bytes, text, len_bytes);
	saved = errno;
	fclose(f);
	errno = saved;
	return rc;
}
