/* fuzz_diagnose.c - `perfkit diagnose` on a fuzzed capture: the engine
 * (window, busy intervals, every rule) and the three ways it prints. */
#include "analysis/analysis.h"
#include "fuzz.h"
#include "sink/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_store *s = fuzz_store(data, size);
	struct diag_settings settings = { 0 };
	struct diag_report *r = NULL;
	struct prof_error err = { 0 };
	struct rpt_sink *sink;

	if (!s)
		return 0;
	FUZZ_CHECK(diag_settings__init(&settings) == 0);
	if (diag__run(s, &settings, &r, &err) == 0) {
		const struct sum_window *w = &r->window;

		FUZZ_CHECK(r->nfindings >= 0 && r->nskips >= 0);
		for (int i = 0; i < r->nfindings; i++)
			FUZZ_CHECK(r->findings[i].ntop >= 0 && r->findings[i].ntop <= DIAG_MAX_OFFENDERS);
		FUZZ_CHECK(w->iterations >= 0);
		diag_report__print_text(r, false, fuzz_null());
		diag_report__print_json(r, fuzz_null());
		sink = rpt_sink__new(RPT_FORMAT_CSV, fuzz_null());
		FUZZ_CHECK(sink != NULL);
		diag_report__rows(r, sink);
		rpt_sink__delete(sink);
	} else {
		FUZZ_CHECK(err.msg[0]);
	}
	diag_report__delete(r);
	diag_settings__exit(&settings);
	prof_store__close(s);
	return 0;
}
