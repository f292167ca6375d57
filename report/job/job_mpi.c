/* job_mpi.c - the MPI side of a job's map and reduce (job_mpi.h), in a
 * build with -DPERFKIT_MPI=ON. Joined only when an MPI launcher started
 * the process: a plain `perfkit report` never starts an MPI runtime. */
#include "job.h"
#include "job_mpi.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static bool joined;

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
	int inited = 0;

	*rank = 0;
	*size = 1;
	if (!launched_by_mpi())
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

int job_mpi__gather(const char *buf, size_t len, bool ok, char ***bufs, size_t **lens,
		    bool **oks)
{
	int rank, size, rc = 0;
	int64_t mine[2] = { (int64_t)len, ok }, *all = NULL;

	*bufs = NULL;
	*lens = NULL;
	*oks = NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0 && !(all = malloc(2 * sizeof *all * (size_t)size)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (MPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	if (rank != 0) {
		for (size_t off = 0; off < len; off += PIECE) {
			size_t n = len - off < PIECE ? len - off : PIECE;

			if (MPI_Send(buf + off, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD) != MPI_SUCCESS)
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

			if (MPI_Recv((*bufs)[r] + off, (int)piece, MPI_BYTE, r, 7, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE) != MPI_SUCCESS)
				rc = -1;
		}
	}
	free(all);
	return rc;
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

	if (joined) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		if (rank != 0)
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
