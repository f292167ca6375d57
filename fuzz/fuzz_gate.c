/* fuzz_gate.c - `perfkit gate` and `perfkit baseline save` on fuzzed input.
 * The input is a baseline's JSON followed by a capture (the capture starts
 * at the SQLite magic; seeds are `cat baseline.json capture.sqlite`).
 *
 * The capture is summarised as the gate and diff summarise it, gated against
 * the fuzzed baseline, and diffed against itself. Then the round trip a user
 * makes: a baseline saved from this capture, read back and gated with the
 * same capture, must pass, since nothing changed. */
#include "compare/compare.h"
#include "fuzz.h"
#include "prof/output.h"
#include "prof/store.h"
#include "sink/table.h"

static void gate_and_print(const struct baseline *b, const struct diff_profile *p,
			   bool must_pass)
{
	struct gate_options o;
	struct gate_result r = { 0 };
	struct prof_error err = { 0 };
	struct rpt_sink *sink;

	gate_options__init(&o);
	if (gate__run(&r, b, p, 1, &o, &err) != 0) {
		if (must_pass)
			fprintf(stderr, "%s\n", err.msg);
		FUZZ_CHECK(!must_pass && err.msg[0]);
		return;
	}
	FUZZ_CHECK(r.nfailed <= r.ncases);
	if (must_pass)
		FUZZ_CHECK(r.nfailed == 0);
	sink = rpt_sink__new(RPT_FORMAT_TEXT, fuzz_null());
	FUZZ_CHECK(sink != NULL);
	gate__report(&r, sink, true);
	rpt_sink__delete(sink);
	gate__write_junit(&r, fuzz_null());
	gate__exit(&r);
}

static void diff_with_itself(const struct diff_profile *p)
{
	struct diff_result d = { 0 };
	struct rpt_sink *sink;
	char verdict[512];

	if (diff__compute(&d, p, p) != 0)
		return;
	for (int sec = 0; sec < DIFF_NSECTIONS; sec++)
		for (size_t i = 0; i < d.nrows[sec]; i++)
			FUZZ_CHECK(d.rows[sec][i].delta_ns == 0);
	diff__verdict(&d, verdict, sizeof verdict);
	sink = rpt_sink__new(RPT_FORMAT_JSON, fuzz_null());
	FUZZ_CHECK(sink != NULL);
	diff__report(&d, sink);
	rpt_sink__delete(sink);
	diff__write_html(&d, fuzz_null());
	diff__exit(&d);
}

static void save_and_gate(const struct diff_profile *p)
{
	const char *path = fuzz_file(NULL, 0, "saved.json");
	struct prof_error err = { 0 };
	struct baseline built, loaded;

	if (!path || baseline__build(&built, p, 1, &err) != 0)
		return;
	FUZZ_CHECK(baseline__save(&built, path, PROF_OUTPUT_REPLACE, &err) == 0);
	baseline__exit(&built);
	if (baseline__load(&loaded, path, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		FUZZ_CHECK(!"a saved baseline loads back");
	}
	gate_and_print(&loaded, p, true);
	baseline__exit(&loaded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t split = fuzz_split_at_sqlite(data, size);
	const char *json = fuzz_file(data, split, "baseline.json");
	struct prof_error err = { 0 };
	struct diff_profile p = { 0 };
	struct prof_store *s;
	struct baseline b;
	bool have_baseline;
	int loaded;

	if (!json)
		return 0;
	have_baseline = baseline__load(&b, json, &err) == 0;
	s = fuzz_store(data + split, size - split);
	/* The profile is read whole; the gate never goes back to the store. */
	loaded = s && diff_profile__load(&p, s, &err) == 0;
	prof_store__close(s);
	if (loaded) {
		if (have_baseline)
			gate_and_print(&b, &p, false);
		diff_with_itself(&p);
		save_and_gate(&p);
		diff_profile__exit(&p);
	}
	if (have_baseline)
		baseline__exit(&b);
	return 0;
}
