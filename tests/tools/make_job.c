/* make_job.c - a job of several ranks made of real single-process
 * captures (tests/unit/job_fixture.h says what is theirs and what is
 * written here), for the command-line tests of --rank and the per-rank
 * reports.
 *
 * usage: make_job [--no-info] [--reverse] OUT CAPTURE... */
#include <stdio.h>
#include <string.h>

#include "../unit/job_fixture.h"

int main(int argc, char **argv)
{
	unsigned flags = 0;
	int a = 1;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "--no-info") == 0)
			flags |= JOB_NO_INFO;
		else if (strcmp(argv[a], "--reverse") == 0)
			flags |= JOB_REVERSE;
		else
			break;
	}
	if (argc - a < 2) {
		fprintf(stderr, "usage: make_job [--no-info] [--reverse] OUT CAPTURE...\n");
		return 2;
	}
	return job_fixture__make(argv[a], (const char *const *)argv + a + 1, argc - a - 1, flags);
}
