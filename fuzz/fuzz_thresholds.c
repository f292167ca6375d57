/* fuzz_thresholds.c - `perfkit diagnose --thresholds FILE.json`: any bytes
 * as the thresholds file. What it accepts must leave every threshold a
 * finite number >= 0, as --set does. */
#include <math.h>

#include "analysis/analysis.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, "thresholds.json");
	struct diag_settings s = { 0 };
	struct prof_error err = { 0 };

	if (!path)
		return 0;
	FUZZ_CHECK(diag_settings__init(&s) == 0);
	if (diag_settings__load_json(&s, path, &err) == 0) {
		for (int i = 0; i < diag_nsetting_defs; i++)
			FUZZ_CHECK(isfinite(s.values[i]) && s.values[i] >= 0);
	} else {
		FUZZ_CHECK(err.msg[0]);
	}
	diag_settings__exit(&s);
	return 0;
}
