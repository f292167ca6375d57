/* fuzz_export.c - the whole-capture exports on a fuzzed capture: the Chrome
 * trace and the folded stacks weighted by GPU and by API time, each
 * written to /dev/null, and the flame graph drawn from the stacks. */
#include "export/export.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_store *s = fuzz_store(data, size);
	struct chrome_options co = { .warn = fuzz_null() };
	struct prof_error err = { 0 };

	if (!s)
		return 0;
	if (chrome_trace__write(s, &co, fuzz_null(), &err) < 0)
		FUZZ_CHECK(err.msg[0]);
	for (int weight = FOLDED_WEIGHT_GPU; weight <= FOLDED_WEIGHT_API; weight++) {
		struct folded_options fo = { .weight = (enum folded_weight)weight };
		struct folded_stacks st = { 0 };

		if (folded__collect(s, &fo, &st, &err) == 0) {
			FUZZ_CHECK(st.n == 0 || st.v != NULL);
			folded__write(&st, fuzz_null());
			flamegraph__write_svg(&st, "all time", fuzz_null());
		} else {
			FUZZ_CHECK(err.msg[0]);
		}
		folded_stacks__exit(&st);
	}
	prof_store__close(s);
	return 0;
}
