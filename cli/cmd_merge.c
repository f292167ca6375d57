/* cmd_merge.c - `perfkit merge -o JOB.sqlite FILE... | DIR`: the captures
 * of one job (one per rank or per node, from one host or several) as one
 * capture: processes of different hosts kept apart, every host's times on
 * the first host's time base, and the alignment's estimated error said. */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "cli_reader.h"
#include "job/job.h"
#include "prof/escape.h"
#include "prof/output.h"

static const char *const usage[] = {
	"perfkit merge -o JOB.sqlite [-f] FILE... | DIR",
	NULL,
};

/* One line per host: where its times went. */
static void print_hosts(const struct job_plan *p)
{
	for (int g = 0; g < p->nhosts; g++) {
		const struct prof_merge_map *m = NULL;
		const char *host = NULL;
		int captures = 0;

		for (int i = 0; i < p->n; i++) {
			if (p->c[i].group != g)
				continue;
			if (!captures++) {
				m = &p->maps[i];
				host = p->c[i].host;
			}
		}
		fputs("  host ", stdout);
		prof_fputs_term(stdout, host && *host ? host : "(not recorded)");
		printf(": %d capture%s, ", captures, captures == 1 ? "" : "s");
		if (g == 0)
			printf("the time base\n");
		else if (p->time_base == JOB_TIME_UNALIGNED)
			printf("not moved\n");
		else
			printf("moved %+.3f us, %+.3f ppm\n", (double)m->shift_ns / 1e3, m->rate * 1e6);
	}
}

int cmd_merge(int argc, char **argv)
{
	const char *output = NULL;
	bool force = false;
	const struct cli_option opts[] = {
		CLI_STRING('o', "output", &output, "FILE", "the merged capture"),
		CLI_FLAG('f', "force", &force, "replace the output if it exists, and merge captures "
			 "that do not look like one job's (two runs, a rank twice, apart in time)"),
		CLI_END(),
	};
	struct job_inputs in = { 0 };
	struct job_plan plan = { 0 };
	struct prof_error err = { 0 };
	struct sum_job_time t;
	int n, status = CLI_EXIT_USAGE;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	/* one writer of the output: under mpirun, rank 0 */
	if (cli_reader__not_rank0())
		return CLI_EXIT_OK;
	if (!output || !*output) {
		cli_error("merge needs the output: -o JOB.sqlite");
		return CLI_EXIT_USAGE;
	}
	if (n == 0) {
		cli_error("merge needs the captures of a job: files, or a directory of them");
		return CLI_EXIT_USAGE;
	}
	/* a refused -o before the captures are read */
	if (prof_output__check(output, force ? PROF_OUTPUT_REPLACE : 0, NULL, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (cli_input__collect(argv, n, force, &in))
		goto out;
	if (job_plan__make(&in, &plan, &err) ||
	    job__merge(&plan, output, force ? PROF_OUTPUT_REPLACE : 0, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	printf("%s: %d capture%s of %d host%s\n", output, plan.n, plan.n == 1 ? "" : "s",
	       plan.nhosts, plan.nhosts == 1 ? "" : "s");
	print_hosts(&plan);
	if (job_plan__time(&plan, &t))
		printf("time base: %s; estimated alignment error: %s\n", t.base, t.error);
	else
		printf("time base: %s\n", job_time_base__name(plan.time_base));
	status = fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	if (status)
		cli_error("cannot write the output");
out:
	job_plan__exit(&plan);
	job_inputs__exit(&in);
	return status;
}
