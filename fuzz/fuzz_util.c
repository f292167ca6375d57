/* fuzz_util.c - the helpers every harness shares (see fuzz.h). */
#include "fuzz.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "prof/store.h"

/* Sizes leave room for "/name" and a SQLite suffix after the folder. */
static char scratch[512];

static const char *const sqlite_sidecars[] = { "-wal", "-shm", "-journal" };

/* Room the scratch folder keeps free for what SQLite writes beside an input
 * (a WAL capture's -shm and -wal): see wait_for_room. */
#define SCRATCH_ROOM_BYTES (16u << 20)

/* The files fuzz_file made, so that exit can remove them and the folder. */
#define FUZZ_MAX_NAMES 8
static char made[FUZZ_MAX_NAMES][64];
static int nmade;

static void remove_sidecars(const char *path)
{
	char side[1280];

	for (size_t i = 0; i < sizeof sqlite_sidecars / sizeof sqlite_sidecars[0]; i++) {
		snprintf(side, sizeof side, "%s%s", path, sqlite_sidecars[i]);
		unlink(side);
	}
}

static void remove_scratch(void)
{
	char path[1152];

	for (int i = 0; i < nmade; i++) {
		snprintf(path, sizeof path, "%s/%s", scratch, made[i]);
		remove_sidecars(path);
		unlink(path);
	}
	rmdir(scratch);
}

/* The scratch folder goes where writing costs least: $TMPDIR when set, else
 * /dev/shm (memory), else /tmp. On a disk file system a rewritten file is
 * flushed on close (ext4 does so for a file truncated and written again),
 * which made the string targets wait on the disk at every input. */
static const char *scratch_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (scratch[0])
		return scratch;
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(scratch, sizeof scratch, "%s/perfkit-fuzz-XXXXXX", tmp);
	if (!mkdtemp(scratch)) {
		scratch[0] = '\0';
		return NULL;
	}
	atexit(remove_scratch);
	return scratch;
}

static void note_name(const char *name)
{
	for (int i = 0; i < nmade; i++)
		if (!strcmp(made[i], name))
			return;
	if (nmade < FUZZ_MAX_NAMES && strlen(name) < sizeof made[0])
		strcpy(made[nmade++], name);
}

/* Wait until the scratch folder has room for SQLite's files. On a full file
 * system opening an input from its file can fail where the copy in memory
 * does not ("malformed database schema" from the file, "database disk image
 * is malformed" from memory, on a full 120 kB tmpfs; all 9 jobs on a
 * machine whose scratch filled stopped so): the machine's fault, not a
 * finding. Waiting, rather than skipping the input, keeps such inputs out of
 * the executions counted; it is said once on stderr. */
static void wait_for_room(const char *dir)
{
	static bool said;
	struct statvfs fs;

	while (statvfs(dir, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < SCRATCH_ROOM_BYTES) {
		if (!said)
			fprintf(stderr, "fuzz: %s has less than %u MB free: waiting for room\n", dir,
				SCRATCH_ROOM_BYTES >> 20);
		said = true;
		sleep(1);
	}
}

const char *fuzz_file(const uint8_t *data, size_t size, const char *name)
{
	static char path[1152];
	const char *dir = scratch_dir();
	size_t done = 0;
	int fd;

	if (!dir)
		return NULL;
	wait_for_room(dir);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	note_name(name);
	remove_sidecars(path);
	/* A new file each time, not the old one truncated: see scratch_dir. */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return NULL;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		done += (size_t)n;
	}
	close(fd);
	return path;
}

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

struct prof_store *fuzz_store(const uint8_t *data, size_t size)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	int rc = prof_store__open_memory(data, size, FUZZ_CAPTURE_NAME, &s, &err);

	/* A refusal says why, naming the capture; an open store has no message. */
	FUZZ_CHECK(rc == 0 ? s != NULL : (s == NULL && err.code == rc && err.msg[0]));
	return s;
}

/* With libFuzzer's -close_fd_mask=2 (or 3) what the code under test writes
 * to stderr goes to /dev/null. stderr is unbuffered: each piece of a message
 * was a write(2), and a usage text has dozens; they were most of cli_parse's
 * time. Where it all goes nowhere, stderr is buffered instead. libFuzzer
 * prints through a copy of the old stderr made for that flag, and sanitizer
 * reports do not go through stdio, so neither is held back. Called once by
 * libFuzzer and AFL++'s driver before anything is printed. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char stderr_buffer[1 << 16];
	static const char flag[] = "-close_fd_mask=";

	for (int i = 1; i < *argc; i++)
		if (!strncmp((*argv)[i], flag, sizeof flag - 1) &&
		    (atoi((*argv)[i] + sizeof flag - 1) & 2))
			setvbuf(stderr, stderr_buffer, _IOFBF, sizeof stderr_buffer);
	return 0;
}

FILE *fuzz_null(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

size_t fuzz_split_at_sqlite(const uint8_t *data, size_t size)
{
	static const char magic[] = "SQLite format 3"; /* 16 bytes with its NUL */

	for (size_t at = 0; at + sizeof magic <= size; at++)
		if (data[at] == 'S' && !memcmp(data + at, magic, sizeof magic))
			return at;
	return size;
}
