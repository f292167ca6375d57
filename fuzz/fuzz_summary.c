/* fuzz_summary.c - every report `perfkit report` knows (registry__run by
 * name, the overview included) on a fuzzed capture. The sink's format is
 * picked by the input's length so each renderer's escaping sees capture
 * strings too, without tripling the time of every input. */
#include "fuzz.h"
#include "prof/store.h"
#include "sink/table.h"
#include "registry/registry.h"
#include "summary/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum rpt_format formats[] = { RPT_FORMAT_TEXT, RPT_FORMAT_CSV, RPT_FORMAT_JSON };
	struct prof_store *s = fuzz_store(data, size);
	struct rpt_sink *sink;
	const char *const *names;
	size_t n;

	if (!s)
		return 0;
	sink = rpt_sink__new(formats[size % 3], fuzz_null());
	FUZZ_CHECK(sink != NULL);
	names = registry__names(&n);
	for (size_t i = 0; i < n; i++) {
		struct prof_error err = { 0 };
		int rc = registry__run(names[i], s, sink, &err);

		/* A known report fails only with a message, never as "unknown". */
		FUZZ_CHECK(rc == 0 || (rc != PROF_E_USAGE && err.msg[0]));
	}
	rpt_sink__delete(sink);
	prof_store__close(s);
	return 0;
}
