/* fuzz_baseline.c - `perfkit gate --baseline FILE`: any bytes as the
 * baseline file. A baseline it accepts must hold what the gate relies on:
 * keys sorted and unique, min <= median <= max, one sample per capture or
 * none, and each key found by name. */
#include <string.h>

#include "compare/compare.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, "baseline.json");
	struct prof_error err = { 0 };
	struct baseline b;

	if (!path)
		return 0;
	if (baseline__load(&b, path, &err) != 0) {
		FUZZ_CHECK(err.msg[0]);
		return 0;
	}
	FUZZ_CHECK(b.program && b.gpu && b.ncaptures >= 1);
	for (size_t i = 0; i < b.nkeys; i++) {
		const struct baseline_key *k = &b.keys[i];

		FUZZ_CHECK(i == 0 || strcmp(b.keys[i - 1].name, k->name) < 0);
		FUZZ_CHECK(k->st.min <= k->st.median && k->st.median <= k->st.max);
		FUZZ_CHECK(k->nsamples == 0 || k->nsamples == b.ncaptures);
		FUZZ_CHECK(baseline__find(&b, k->name) == k);
		baseline_unit__name(k->unit);
	}
	baseline__exit(&b);
	return 0;
}
