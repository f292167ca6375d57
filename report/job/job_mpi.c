/* job_mpi.c - the MPI side of a job's map and reduce (job_mpi.h), in a
 * build with -DPERFKIT_MPI=ON. Joined only when an MPI launcher started
 * the process: a plain `perfkit report` never starts an MPI runtime. */
#include "job.h"
#include "job_mpi.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static bool joined;
/* job_mpi__not_rank0 was asked: what this process does from now on it
 * does alone, and it joins no MPI job (the others may have ended) */
static bool alone;

/* The variables Open MPI's, MPICH/Hydra's and PMIx launchers set. */
static bool launched_by_mpi(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK" };

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]))
			return true;
	return false;
}

void job_mpi__begin(int *rank, int *size)
{
	int inited = 0, finalized = 0;

	*rank = 0;
	*size = 1;
	if (alone || !launched_by_mpi())
		return;
	MPI_Finalized(&finalized);
	if (finalized)
		return;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return;
	joined = true;
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
}

bool job_mpi__active(void)
{
	return joined;
}

/* A summary is sent in pieces of at most this many bytes: MPI counts are
 * ints. */
#define PIECE (1 << 30)

/* The transfer an MPI_I... call started (started: what it returned, req
 * its request) waited for without holding a core: 0, or -1 where it
 * failed. Open MPI's blocking calls poll until they are done: a process
 * that has read its share and waits for the others would keep a core
 * busy all that time, one their threads lose where they share its node,
 * and count it as its own CPU time. This naps between tests instead, the
 * naps growing from 10 us to 1 ms so that a short wait stays short. */
static int wait_for(int started, MPI_Request *req)
{
	long nap_ns = 10000;
	int done = 0;

	if (started != MPI_SUCCESS)
		return -1;
	while (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		struct timespec t = { 0, nap_ns };

		nanosleep(&t, NULL);
		if (nap_ns < 1000000)
			nap_ns *= 2;
	}
	return done ? 0 : -1;
}

int job_mpi__gather(const char *buf, size_t len, bool ok, char ***bufs, size_t **lens,
		    bool **oks)
{
	int rank, size, rc = 0;
	int64_t mine[2] = { (int64_t)len, ok }, *all = NULL;
	MPI_Request req;

	*bufs = NULL;
	*lens = NULL;
	*oks = NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0 && !(all = malloc(2 * sizeof *all * (size_t)size)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (wait_for(MPI_Igather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, MPI_COMM_WORLD, &req), &req))
		return -1;
	if (rank != 0) {
		for (size_t off = 0; off < len; off += PIECE) {
			size_t n = len - off < PIECE ? len - off : PIECE;

			if (wait_for(MPI_Isend(buf + off, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req), &req))
				return -1;
		}
		return 0;
	}
	*bufs = calloc((size_t)size, sizeof **bufs);
	*lens = calloc((size_t)size, sizeof **lens);
	*oks = calloc((size_t)size, sizeof **oks);
	if (!*bufs || !*lens || !*oks)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r < size; r++) {
		size_t n = (size_t)all[2 * r];

		(*lens)[r] = n;
		(*oks)[r] = all[2 * r + 1] != 0;
		(*bufs)[r] = malloc(n + 1);
		if (!(*bufs)[r])
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (r == 0) {
			memcpy((*bufs)[0], buf, len);
			continue;
		}
		for (size_t off = 0; off < n && !rc; off += PIECE) {
			size_t piece = n - off < PIECE ? n - off : PIECE;

			char *to = (*bufs)[r] + off;

			if (wait_for(MPI_Irecv(to, (int)piece, MPI_BYTE, r, 7, MPI_COMM_WORLD, &req), &req))
				rc = -1;
		}
	}
	free(all);
	return rc;
}

int job_mpi__allgather(const char *buf, size_t len, char ***bufs, size_t **lens)
{
	int rank, size, rc = 0;
	int64_t mine = (int64_t)len, *all;
	MPI_Request req;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	all = malloc(sizeof *all * (size_t)size);
	*bufs = calloc((size_t)size, sizeof **bufs);
	*lens = calloc((size_t)size, sizeof **lens);
	if (!all || !*bufs || !*lens)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (wait_for(MPI_Iallgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD, &req), &req))
		rc = -1;
	/* each process's bytes broadcast from it, in pieces */
	for (int r = 0; r < size && !rc; r++) {
		size_t n = (size_t)all[r];

		(*lens)[r] = n;
		(*bufs)[r] = malloc(n + 1);
		if (!(*bufs)[r])
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (r == rank && n)
			memcpy((*bufs)[r], buf, n);
		for (size_t off = 0; off < n && !rc; off += PIECE) {
			size_t piece = n - off < PIECE ? n - off : PIECE;

			char *at = (*bufs)[r] + off;

			if (wait_for(MPI_Ibcast(at, (int)piece, MPI_BYTE, r, MPI_COMM_WORLD, &req), &req))
				rc = -1;
		}
	}
	free(all);
	return rc;
}

void job_mpi__barrier(void)
{
	MPI_Request req;

	if (joined)
		wait_for(MPI_Ibarrier(MPI_COMM_WORLD, &req), &req);
}

/* The rank an MPI launcher gave this process, read from its environment:
 * a process that has not joined the MPI job must not join it to ask, as
 * every other process would then have to join too. */
static int launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]))
			return atoi(getenv(vars[i]));
	return 0;
}

bool job_mpi__not_rank0(void)
{
	int rank = 0;

	alone = true;
	if (joined) {
		/* rank 0 too: what it does next, it does alone */
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		job_mpi__end();
		return rank != 0;
	}
	return launched_by_mpi() && launcher_rank() != 0;
}

void job_mpi__end(void)
{
	if (joined)
		MPI_Finalize();
	joined = false;
}
