/* perfetto_stub.c - --format=perfetto in a build without protobuf-c: the
 * one place that says so (see perfetto_trace.h). */
#include "export/perfetto_trace.h"

#define WHY "built without protobuf-c: --format=perfetto is unavailable"

int perfetto_trace__supported(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_USAGE, WHY);
}

int perfetto_trace__write(struct prof_store *s, const struct perfetto_options *opts, FILE *out,
			  struct prof_error *err)
{
	(void)s;
	(void)opts;
	(void)out;
	return prof_error__set(err, PROF_E_USAGE, WHY);
}
