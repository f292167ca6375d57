/* test_write_behind_direct.c - the write-behind stream's switch to
 * O_DIRECT (libprof/src/write_behind.c, built here with the switch at 1
 * MiB rather than 512): past it a regular file's whole blocks go out with
 * O_DIRECT where the file system takes it, the last, shorter block through
 * the page cache, and the file holds every byte given in order; a pipe is
 * never switched (O_DIRECT is its packet mode) and gets every byte. */
#define _GNU_SOURCE /* O_DIRECT */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "write_behind.h"

#define MIB ((size_t)1 << 20)
#define TAIL 12345

static unsigned char byte_at(size_t i)
{
	return (unsigned char)((i * 2654435761u) >> 13);
}

/* n bytes of the pattern from offset at, in uneven pieces */
static void put(FILE *f, size_t at, size_t n)
{
	static unsigned char buf[70001];

	while (n) {
		size_t k = n < sizeof buf ? n : sizeof buf;

		for (size_t i = 0; i < k; i++)
			buf[i] = byte_at(at + i);
		ck_assert_uint_eq(fwrite(buf, 1, k, f), k);
		at += k;
		n -= k;
	}
}

static void check_pattern(const unsigned char *got, size_t n, size_t want)
{
	ck_assert_uint_eq(n, want);
	for (size_t i = 0; i < n; i++)
		if (got[i] != byte_at(i))
			ck_abort_msg("byte %zu differs", i);
}

/* Whether dir's file system takes O_DIRECT (tmpfs does not). */
static bool direct_supported(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/probe", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
	if (fd >= 0)
		close(fd);
	unlink(path);
	return fd >= 0;
}

START_TEST(test_regular_file_switches_and_keeps_every_byte)
{
	char dir[] = "/tmp/test_write_behind.XXXXXX", path[4096];
	struct write_behind *wb = NULL;
	unsigned char *got;
	size_t want = 3 * MIB + TAIL;
	FILE *f, *in;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	f = write_behind__open(fd, &wb);
	ck_assert_ptr_nonnull(f);
	/* three whole blocks: the second and third go out past the switch */
	put(f, 0, 3 * MIB);
	ck_assert_int_eq(fflush(f), 0);
	ck_assert_int_eq(write_behind__drain(wb), 0);
	if (direct_supported(dir))
		ck_assert_msg(fcntl(fd, F_GETFL) & O_DIRECT, "O_DIRECT not on past the switch");
	/* a last, shorter block: through the page cache */
	put(f, 3 * MIB, TAIL);
	ck_assert_int_eq(fclose(f), 0);
	got = malloc(want + 1);
	ck_assert_ptr_nonnull(got);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	check_pattern(got, fread(got, 1, want + 1, in), want);
	fclose(in);
	free(got);
	unlink(path);
	rmdir(dir);
}
END_TEST

struct drain_pipe {
	int fd;
	unsigned char *buf;
	size_t n, cap;
};

static void *read_all(void *arg)
{
	struct drain_pipe *d = arg;
	ssize_t r;

	while ((r = read(d->fd, d->buf + d->n, d->cap - d->n)) > 0)
		d->n += (size_t)r;
	return NULL;
}

START_TEST(test_pipe_is_never_switched)
{
	size_t want = 3 * MIB + TAIL;
	struct drain_pipe d = { .cap = want + 1 };
	struct write_behind *wb = NULL;
	pthread_t reader;
	int fds[2];
	FILE *f;

	ck_assert_int_eq(pipe(fds), 0);
	d.fd = fds[0];
	d.buf = malloc(d.cap);
	ck_assert_ptr_nonnull(d.buf);
	ck_assert_int_eq(pthread_create(&reader, NULL, read_all, &d), 0);
	f = write_behind__open(fds[1], &wb);
	ck_assert_ptr_nonnull(f);
	put(f, 0, 3 * MIB);
	ck_assert_int_eq(fflush(f), 0);
	ck_assert_int_eq(write_behind__drain(wb), 0);
	ck_assert_msg(!(fcntl(fds[1], F_GETFL) & O_DIRECT), "a pipe put in packet mode");
	put(f, 3 * MIB, TAIL);
	ck_assert_int_eq(fclose(f), 0); /* closes the write end: the reader ends */
	pthread_join(reader, NULL);
	close(fds[0]);
	check_pattern(d.buf, d.n, want);
	free(d.buf);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("write_behind_direct");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_regular_file_switches_and_keeps_every_byte);
	tcase_add_test(tc, test_pipe_is_never_switched);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
