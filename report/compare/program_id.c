/* program_id.c - the program of a command line, past its interpreters and
 * launchers (program_id.h). The launchers' options are skipped by their
 * look: a word starting with '-', or a number (mpirun -n 4); the options
 * that take a separate value among the common ones are listed. */
#include "program_id.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "prof/error.h"
#include "prof/strfmt.h"

static const char *const launchers[] = {
	"torchrun", "python", "python2", "python3", "pypy", "pypy3", "mpirun", "mpiexec", "srun",
	"accelerate", "deepspeed", "env", "nohup", "time", "taskset", "numactl", NULL,
};

/* Options of those launchers that take the next word as their value. */
static const char *const with_value[] = {
	"-n", "-np", "-N", "-c", "-H", "--host", "--hostfile", "-x", "--nproc_per_node",
	"--nproc-per-node", "--nnodes", "--node_rank", "--node-rank", "--rdzv_endpoint",
	"--rdzv-endpoint", "--rdzv_backend", "--rdzv-backend", "--master_addr", "--master-addr",
	"--master_port", "--master-port", "--ntasks", "--gpus", "--map-by", "--bind-to",
	"--num_processes", "--num-processes", "--config_file", "--config-file", "-C", "-m", NULL,
};

static bool in_list(const char *const *list, const char *w, size_t len)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == len && strncmp(list[i], w, len) == 0)
			return true;
	return false;
}

static const char *basename_of(const char *w, size_t len, size_t *blen)
{
	const char *b = w;

	for (size_t i = 0; i < len; i++)
		if (w[i] == '/')
			b = w + i + 1;
	*blen = len - (size_t)(b - w);
	return b;
}

/* python3.11, python3.12m: an interpreter by its versioned name. */
static bool versioned_python(const char *w, size_t len)
{
	size_t i = 6;

	if (len < 7 || strncmp(w, "python", 6) != 0)
		return false;
	for (; i < len; i++)
		if (!isdigit((unsigned char)w[i]) && w[i] != '.' && w[i] != 'm')
			return false;
	return true;
}

static bool is_number(const char *w, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)w[i]))
			return false;
	return len > 0;
}

int program_id__parse(const char *command, char **program, char **launcher)
{
	const char *p = command ? command : "";
	char *who = strdup(""), *prog = NULL;
	bool after_launcher = false;

	while (who && !prog && *p) {
		size_t len, blen;
		const char *w, *b;

		p += strspn(p, " \t");
		if (!*p)
			break;
		w = p;
		len = strcspn(p, " \t");
		p += len;
		b = basename_of(w, len, &blen);
		/* KEY=VALUE before the program (env's, a shell's) */
		if (memchr(w, '=', len) && w[0] != '-' && !after_launcher)
			continue;
		if (w[0] == '-' && after_launcher) {
			/* `python3 -m pkg.mod`: the module is the program */
			if (len == 2 && strncmp(w, "-m", 2) == 0) {
				p += strspn(p, " \t");
				len = strcspn(p, " \t");
				if (len)
					prog = strndup(p, len);
				p += len;
				continue;
			}
			if (in_list(with_value, w, len)) {
				p += strspn(p, " \t");
				p += strcspn(p, " \t");
			}
			continue;
		}
		if (after_launcher && is_number(w, len))
			continue;
		if (in_list(launchers, b, blen) || versioned_python(b, blen)) {
			char *more = prof_strfmt("%s%s%.*s", who, who[0] ? " " : "", (int)blen, b);

			free(who);
			who = more;
			after_launcher = true;
			continue;
		}
		prog = strndup(b, blen);
	}
	if (who && !prog)
		prog = strdup("");
	if (!who || !prog) {
		free(who);
		free(prog);
		*program = *launcher = NULL;
		return PROF_E_NOMEM;
	}
	*program = prog;
	*launcher = who;
	return 0;
}
