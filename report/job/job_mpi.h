/* job_mpi.h - the MPI side of a job's map and reduce (job_mpi.c in a
 * build with -DPERFKIT_MPI=ON, job_mpi_stub.c otherwise): which share of
 * the captures this process looks at, probes and maps, what every share
 * saw gathered to every process (the inputs, the plan), and every
 * process's summary gathered to the one that reduces and prints. Without MPI, or not started
 * by an MPI launcher, the process is rank 0 of 1. */
#ifndef REPORT_JOB_MPI_H
#define REPORT_JOB_MPI_H

#include <stdbool.h>
#include <stddef.h>

/* Join the MPI job when an MPI launcher started this process (its
 * environment says so); rank 0 of 1 otherwise, and once the process works
 * alone (job_mpi__not_rank0 was asked) or has left the MPI job. */
void job_mpi__begin(int *rank, int *size);
/* Whether job_mpi__begin joined an MPI job. */
bool job_mpi__active(void);
/* Every process's bytes (ok: whether it mapped its share) to rank 0, in
 * rank order: on rank 0 the three arrays are malloc'd, of size entries
 * (each buffer malloc'd too), elsewhere NULL. Returns 0, or -1 when the
 * transfer failed. */
int job_mpi__gather(const char *buf, size_t len, bool ok, char ***bufs, size_t **lens,
		    bool **oks);
/* Every process's bytes to every process, in rank order: bufs and lens
 * are malloc'd, of size entries (each buffer malloc'd too, this process's
 * a copy of buf). Returns 0, or -1 when the transfer failed. */
int job_mpi__allgather(const char *buf, size_t len, char ***bufs, size_t **lens);
/* Wait until every process has come here. */
void job_mpi__barrier(void);
/* Leave the MPI job (MPI_Finalize) if joined. */
void job_mpi__end(void);

#endif
