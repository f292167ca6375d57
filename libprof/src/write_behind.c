/* write_behind.c - the stream a thread writes behind (see write_behind.h). */
#define _GNU_SOURCE /* fopencookie */
#include "write_behind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Blocks of the size of the stream's own buffer, so each full buffer is
 * one block; a few of them let the formatting run ahead of a write that
 * the kernel holds up (dirty pages over its limit). Four were too few at
 * 10M kernels (8.6 GB of Chrome trace on the 2-core VM: 45.7 and 47.6 s,
 * against 36.5 and 37.0 s with sixteen, and 76 against 60 s of CPU);
 * thirty-two did no better there. On a VM whose disk stalls the writes
 * for a while (iowait 7 to 19% of its 2 cores), sixteen let the
 * formatting wait 9.9 s of a 67 s trace for a free block: sixty-four,
 * 54.7 -> 48.1 s (3 interleaved rounds, 0.844 a round), its peak RSS
 * 56.7 -> 58.6 MB; 128 did no better. A block is touched only once
 * written to. */
#define BLOCK_BYTES ((size_t)1 << 20)
#define BLOCKS 64
/* Each block goes to the kernel in pieces of this size: a write of 1 MiB
 * into the page cache cost two to five times the system time of four
 * writes of 256 KiB (3 GB from a formatting thread to ext4 on the 2-core
 * VM: 3.0-5.9 s against 1.0-1.4 s; 128 and 64 KiB cost more again), and
 * at 10M kernels the Chrome trace writes 8.6 GB. */
#define WRITE_BYTES ((size_t)256 << 10)
/* Past this much, a regular file is written with O_DIRECT, a whole block a
 * write, straight from the block to the disk: the copy into the page cache
 * was a fifth of the CPU of a 10M-kernel Chrome trace, its system time 25
 * s on the 2-core VM, where dd writes 4 GB with O_DIRECT in 1 s of system
 * time against 7 s (3.8 against 11.6 s). Below it the page cache takes a
 * small export at once, whatever the disk. A block whose length, or an
 * offset, is not a multiple of DIRECT_ALIGN (the last), and a file system
 * that refuses O_DIRECT, go on through the page cache. */
#ifndef DIRECT_AFTER_BYTES
#define DIRECT_AFTER_BYTES ((long long)512 << 20)
#endif
#define DIRECT_ALIGN ((size_t)4096)

struct write_behind {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t queued;  /* a block was queued, or closing set */
	pthread_cond_t written; /* a block was written */
	char *block[BLOCKS];
	size_t len[BLOCKS];
	size_t head, count;     /* the queued blocks: head .. head + count - 1,
				 * the thread's at head until it is written */
	bool closing;
	int error;              /* errno of the first failed write, or 0 */
	/* the thread's own: bytes written, and whether O_DIRECT is on, off
	 * for good (tried, refused, or an unaligned block), or not tried */
	long long bytes_out;
	enum { DIRECT_NOT_TRIED, DIRECT_ON, DIRECT_OFF } direct;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n < WRITE_BYTES ? n : WRITE_BYTES);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static bool set_direct(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) == 0;
}

/* A block written: with O_DIRECT where it is on or due and the block
 * allows, else through the page cache. */
static int write_block(struct write_behind *wb, const char *p, size_t n)
{
	struct stat st;
	int e;

	if (wb->direct == DIRECT_NOT_TRIED && wb->bytes_out >= DIRECT_AFTER_BYTES) {
		/* a pipe takes O_DIRECT as its packet mode: regular files only */
		wb->direct = wb->bytes_out % (long long)DIRECT_ALIGN == 0 && fstat(wb->fd, &st) == 0 &&
				     S_ISREG(st.st_mode) && set_direct(wb->fd, true)
			     ? DIRECT_ON
			     : DIRECT_OFF;
	}
	/* the blocks are aligned (write_behind__open); their lengths may not be */
	if (wb->direct == DIRECT_ON && n % DIRECT_ALIGN) {
		set_direct(wb->fd, false);
		wb->direct = DIRECT_OFF;
	}
	if (wb->direct == DIRECT_ON) {
		size_t done = 0;

		while (done < n) {
			ssize_t w = write(wb->fd, p + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0 || (size_t)w % DIRECT_ALIGN) {
				/* refused (EINVAL where the file system will not),
				 * or cut short: the rest through the page cache */
				if (w > 0)
					done += (size_t)w;
				set_direct(wb->fd, false);
				wb->direct = DIRECT_OFF;
				break;
			}
			done += (size_t)w;
		}
		wb->bytes_out += (long long)done;
		p += done;
		n -= done;
	}
	e = n ? write_all(wb->fd, p, n) : 0;
	if (!e)
		wb->bytes_out += (long long)n;
	return e;
}

static void *writer(void *arg)
{
	struct write_behind *wb = arg;
	sigset_t all;

	/* the signals that remove the temporary file belong to the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&wb->lock);
	for (;;) {
		size_t at;
		bool failed;
		int e;

		while (!wb->count && !wb->closing)
			pthread_cond_wait(&wb->queued, &wb->lock);
		if (!wb->count)
			break;
		at = wb->head;
		failed = wb->error != 0;
		pthread_mutex_unlock(&wb->lock);
		/* after a failure the rest is dropped: the output is lost already */
		e = failed ? 0 : write_block(wb, wb->block[at], wb->len[at]);
		pthread_mutex_lock(&wb->lock);
		if (e && !wb->error)
			wb->error = e;
		wb->head = (wb->head + 1) % BLOCKS;
		wb->count--;
		pthread_cond_broadcast(&wb->written);
	}
	pthread_mutex_unlock(&wb->lock);
	return NULL;
}

/* fopencookie's write: 0 with errno on failure, as it asks. */
static ssize_t queue_bytes(void *cookie, const char *buf, size_t size)
{
	struct write_behind *wb = cookie;
	size_t done = 0;

	pthread_mutex_lock(&wb->lock);
	while (done < size && !wb->error) {
		size_t at, n = size - done < BLOCK_BYTES ? size - done : BLOCK_BYTES;

		while (wb->count == BLOCKS && !wb->error)
			pthread_cond_wait(&wb->written, &wb->lock);
		if (wb->error)
			break;
		at = (wb->head + wb->count) % BLOCKS;
		/* a free block is the thread's no more: copied outside the lock */
		pthread_mutex_unlock(&wb->lock);
		memcpy(wb->block[at], buf + done, n);
		wb->len[at] = n;
		pthread_mutex_lock(&wb->lock);
		wb->count++;
		done += n;
		pthread_cond_signal(&wb->queued);
	}
	if (wb->error) {
		errno = wb->error;
		done = 0;
	}
	pthread_mutex_unlock(&wb->lock);
	return (ssize_t)done;
}

static void free_wb(struct write_behind *wb)
{
	for (int i = 0; i < BLOCKS; i++)
		free(wb->block[i]);
	pthread_cond_destroy(&wb->written);
	pthread_cond_destroy(&wb->queued);
	pthread_mutex_destroy(&wb->lock);
	free(wb);
}

/* The thread ends once what is queued is written. */
static void stop_thread(struct write_behind *wb)
{
	pthread_mutex_lock(&wb->lock);
	wb->closing = true;
	pthread_cond_signal(&wb->queued);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
}

/* fopencookie's close */
static int stop(void *cookie)
{
	struct write_behind *wb = cookie;
	int e;

	stop_thread(wb);
	e = wb->error;
	if (close(wb->fd) != 0 && !e)
		e = errno;
	free_wb(wb);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

int write_behind__drain(struct write_behind *wb)
{
	int e;

	pthread_mutex_lock(&wb->lock);
	while (wb->count && !wb->error)
		pthread_cond_wait(&wb->written, &wb->lock);
	e = wb->error;
	pthread_mutex_unlock(&wb->lock);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

FILE *write_behind__open(int fd, struct write_behind **out)
{
	cookie_io_functions_t io = { .write = queue_bytes, .close = stop };
	struct write_behind *wb = calloc(1, sizeof *wb);
	FILE *f;
	int e;

	*out = NULL;
	if (!wb) {
		errno = ENOMEM;
		return NULL;
	}
	wb->fd = fd;
	pthread_mutex_init(&wb->lock, NULL);
	pthread_cond_init(&wb->queued, NULL);
	pthread_cond_init(&wb->written, NULL);
	for (int i = 0; i < BLOCKS; i++) {
		/* aligned for O_DIRECT */
		if (posix_memalign((void **)&wb->block[i], DIRECT_ALIGN, BLOCK_BYTES) != 0) {
			wb->block[i] = NULL;
			free_wb(wb);
			errno = ENOMEM;
			return NULL;
		}
	}
	e = pthread_create(&wb->thread, NULL, writer, wb);
	if (e) {
		free_wb(wb);
		errno = e;
		return NULL;
	}
	f = fopencookie(wb, "w", io);
	if (!f) {
		e = errno;
		stop_thread(wb);
		free_wb(wb);
		errno = e;
		return NULL;
	}
	/* full buffers of one block each; without it, glibc's smaller one
	 * works as well, only in more blocks */
	(void)setvbuf(f, NULL, _IOFBF, BLOCK_BYTES);
	*out = wb;
	return f;
}
