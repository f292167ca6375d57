/* run_reserve.c - room kept back for the end of a run.
 *
 * The program's processes write until the disk is full; the finish then
 * still has to fold the last committed rows into each file, change its
 * journal and write the run's metadata, all of which take a little room. So
 * the run's folder holds a file of reserved room from the start, and the
 * finish removes it before anything else. Without it a run that filled the
 * disk could keep its rows only as files for `perfkit recover`. */
#include "run_session_impl.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define RESERVE_NAME "reserved-room"
/* An eighth of the free room, at most 64 MiB: enough for the metadata and
 * the last flush of rows, little to take from a disk. */
#define RESERVE_MAX_BYTES (64LL << 20)
#define RESERVE_SHARE 8

static void reserve_path(const char *dir, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/" RESERVE_NAME, dir);
}

void run__reserve_make(const char *dir)
{
	struct statvfs vfs;
	struct rlimit limit;
	char path[PATH_MAX];
	long long bytes;
	int fd;

	if (statvfs(dir, &vfs) < 0)
		return;
	bytes = (long long)vfs.f_bavail * (long long)vfs.f_frsize / RESERVE_SHARE;
	if (bytes > RESERVE_MAX_BYTES)
		bytes = RESERVE_MAX_BYTES;
	/* past the file size limit perfkit would get SIGXFSZ */
	if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    (long long)limit.rlim_cur / RESERVE_SHARE < bytes)
		bytes = (long long)limit.rlim_cur / RESERVE_SHARE;
	if (bytes <= 0)
		return;
	reserve_path(dir, path, sizeof path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return;
	/* allocated, not just sized: a sparse file would free nothing */
	if (posix_fallocate(fd, 0, (off_t)bytes) != 0)
		unlink(path);
	close(fd);
}

void run__reserve_free(const char *dir)
{
	char path[PATH_MAX];

	if (!dir)
		return;
	reserve_path(dir, path, sizeof path);
	unlink(path);
}
