/* write_behind.h - a stream whose bytes a thread of its own writes to the
 * file, for prof_output's PROF_OUTPUT_WRITE_BEHIND.
 *
 * An export of millions of events spends much of its time in write(2)
 * (8.6 GB of Chrome trace at 10M kernels: 19 s of system time for dd
 * alone on the 2-core machine), time its reads and formatting need not
 * wait for. The stream copies each full buffer into one of a few blocks
 * and returns; the thread writes the blocks in order, those past the first
 * 512 MiB of a regular file with O_DIRECT (straight to the disk, not
 * copied into the page cache; write_behind.c says when not). A failed write is
 * kept: later writes to the stream fail with its errno (so ferror sees
 * it) and write_behind__drain returns it. */
#ifndef PROF_WRITE_BEHIND_H
#define PROF_WRITE_BEHIND_H

#include <stdio.h>

struct write_behind;

/* A stream writing to fd from a thread, which fclose stops, closing fd.
 * NULL (errno set) when it cannot be made; fd is then left open. */
FILE *write_behind__open(int fd, struct write_behind **wb);
/* After fflush: wait until every byte given is written. 0, or -1 with
 * errno that of the first write that failed. */
int write_behind__drain(struct write_behind *wb);

#endif
