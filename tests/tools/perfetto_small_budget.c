/* perfetto_small_budget.c - writes the Perfetto trace of a capture as
 * `perfkit report --format=perfetto` does, with a pf_sequence.c of its
 * own that tests/CMakeLists.txt builds two ways:
 *
 * - perfetto_small_budget (INTERN_BUDGET_BYTES=4096): the sequence's
 *   interned strings held to a few KiB, so that it clears its incremental
 *   state every few hundred events; a command-line test compares its
 *   events with the ordinary trace's.
 * - perfetto_library_pack (PF_PACK_LIBRARY_ONLY): every packet packed by
 *   protobuf-c, none by pf_pack.c; a command-line test compares its trace
 *   with the ordinary one byte for byte.
 *
 * usage: TOOL CAPTURE OUT */
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
		fprintf(stderr, "usage: %s CAPTURE OUT\n", argv[0]);
		return 2;
	}
	if (prof_store__open(argv[1], &s, &err) != 0) {
		fprintf(stderr, "%s: %s\n", argv[0], err.msg);
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
		fprintf(stderr, "%s: %s\n", argv[0], err.msg[0] ? err.msg : "cannot write");
	prof_store__close(s);
	return rc != 0;
}
