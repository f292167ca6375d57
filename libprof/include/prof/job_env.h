/* job_env.h - where a process stands in a job of many ranks, read from the
 * environment its launcher sets, and the output-name patterns that use it
 * (`perfkit run -o 'job-%h-%r.sqlite'`).
 *
 * In libprof because the launcher (`perfkit run` names its output) and the
 * injection library (each traced process records its rank) read the same
 * variables the same way. */
#ifndef PROF_JOB_ENV_H
#define PROF_JOB_ENV_H

#include <stddef.h>

#include "prof/error.h"

/* A getenv: the tests and the fuzzer pass their own. */
typedef const char *(*prof_env_fn)(const char *name, void *ctx);

enum prof_launcher {
	PROF_LAUNCHER_NONE = 0,
	PROF_LAUNCHER_TORCHRUN, /* RANK, WORLD_SIZE, LOCAL_RANK (torch.distributed) */
	PROF_LAUNCHER_OPENMPI,  /* OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK */
	PROF_LAUNCHER_PMI,      /* MPICH/Hydra and others: PMI_RANK, PMI_SIZE (MPI_LOCALRANKID) */
	PROF_LAUNCHER_SLURM,    /* SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID */
};

struct prof_job_rank {
	enum prof_launcher launcher; /* NONE: not a rank of a job */
	long rank, world_size, local_rank; /* -1 where the launcher does not say */
};

/* The first launcher, in the order above, whose rank variable holds an
 * integer from 0 to INT_MAX (an MPI rank is an int). torchrun runs inside Slurm and mpirun jobs too, and
 * its variables are the ones the program itself reads, so they win. */
void prof_job_rank__read(struct prof_job_rank *r, prof_env_fn env, void *ctx);
/* "torchrun", "Open MPI", "PMI", "Slurm" or "none". */
const char *prof_launcher__name(enum prof_launcher l);

/* The values an output pattern may use. */
struct prof_pattern_values {
	const char *host; /* %h */
	long pid;         /* %p: the pid of `perfkit run` */
	prof_env_fn env;  /* %r (through prof_job_rank__read) and %q{VAR} */
	void *env_ctx;
};

/* Expand %h (host), %p (pid), %r (rank), %q{VAR} (an environment variable,
 * VAR of letters, digits and '_') and %% in pattern into buf. Values that
 * would add a '/' (or are empty, "." or "..") are refused: a variable names
 * a file, not a folder; so are values holding a control character. Returns
 * 0, or PROF_E_USAGE with a one-line message of printable text ("-o: ...")
 * in err, naming the variable and, where it helps, its value (made safe). */
int prof_output_pattern__expand(const char *pattern, const struct prof_pattern_values *v,
				char *buf, size_t cap, struct prof_error *err);

#endif
