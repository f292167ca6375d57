/* threads.c - how many threads a reader runs its independent work on
 * (threads.h). */
#include "model/threads.h"

#include <stdlib.h>
#include <unistd.h>

int threads__count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("PERFKIT_THREADS");

	if (env && atoi(env) > 0)
		n = atoi(env);
	return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}
