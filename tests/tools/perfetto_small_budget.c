/* perfetto_small_budget.c - writes the Perfetto trace of a capture as
 * `perfkit report --format=perfetto` does, with the sequence's interned
 * strings held to a budget of a few KiB (tests/CMakeLists.txt builds this
 * tool with its own pf_sequence.c, INTERN_BUDGET_BYTES=4096), so that the
 * sequence clears its incremental state every few hundred events: the
 * command-line test compares its events with the ordinary trace's.
 *
 * usage: perfetto_small_budget CAPTURE OUT */
#include <stdio.h>

#include "export/perfetto_trace.h"
#include "prof/error.h"
#include "prof/store.h"

int main(int argc, char **argv)
{
	struct perfetto_options opts = { 0 };
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	FILE *out;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: perfetto_small_budget CAPTURE OUT\n");
		return 2;
	}
	if (prof_store__open(argv[1], &s, &err) != 0) {
		fprintf(stderr, "perfetto_small_budget: %s\n", err.msg);
		return 1;
	}
	out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		prof_store__close(s);
		return 1;
	}
	rc = perfetto_trace__write(s, &opts, out, &err);
	if (fclose(out) != 0 && rc == 0)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "perfetto_small_budget: %s\n", err.msg[0] ? err.msg : "cannot write");
	prof_store__close(s);
	return rc != 0;
}
