/* fuzz_roofline.c - `perfkit roofline` on a fuzzed capture: peaks (measured
 * or nominal), the per-kernel metrics join and the rows it prints. */
#include "analysis/analysis.h"
#include "fuzz.h"
#include "sink/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_store *s = fuzz_store(data, size);
	struct prof_error err = { 0 };
	struct roof_peaks peaks = { 0 };
	struct roof_kernel *k = NULL;
	struct rpt_sink *sink;
	int n = 0;

	if (!s)
		return 0;
	if (roof_peaks__load(s, &peaks, &err) == 0 && roof__load(s, &peaks, 0, 0, &k, &n, &err) == 0) {
		FUZZ_CHECK(n >= 0 && (n == 0 || k != NULL));
		roof__any_flops(k, n);
		sink = rpt_sink__new(RPT_FORMAT_TEXT, fuzz_null());
		FUZZ_CHECK(sink != NULL);
		roof__rows(k, n, sink);
		rpt_sink__delete(sink);
		roof__free(k, n);
	} else {
		FUZZ_CHECK(err.msg[0]);
	}
	prof_store__close(s);
	return 0;
}
