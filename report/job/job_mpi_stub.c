/* job_mpi_stub.c - a build without MPI: every process is rank 0 of 1. */
#include "job.h"
#include "job_mpi.h"

#include <stdlib.h>
#include <string.h>

void job_mpi__begin(int *rank, int *size)
{
	*rank = 0;
	*size = 1;
}

bool job_mpi__active(void)
{
	return false;
}

int job_mpi__gather(const char *buf, size_t len, bool ok, char ***bufs, size_t **lens,
		    bool **oks)
{
	*bufs = calloc(1, sizeof **bufs);
	*lens = calloc(1, sizeof **lens);
	*oks = calloc(1, sizeof **oks);
	if (!*bufs || !*lens || !*oks || !((*bufs)[0] = malloc(len + 1)))
		return -1;
	memcpy((*bufs)[0], buf, len);
	(*lens)[0] = len;
	(*oks)[0] = ok;
	return 0;
}

int job_mpi__allgather(const char *buf, size_t len, char ***bufs, size_t **lens)
{
	bool *oks = NULL;
	int rc = job_mpi__gather(buf, len, true, bufs, lens, &oks);

	free(oks);
	return rc;
}

void job_mpi__barrier(void)
{
}

bool job_mpi__not_rank0(void)
{
	return false;
}

void job_mpi__end(void)
{
}
