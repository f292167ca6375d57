/* fuzz_options.c - the option values parsed by a function of their own:
 * `diagnose --set KEY=VALUE,...`, `run --trace=LIST` (and PERFKIT_TRACE),
 * `report --from/--to` times, `gate --min-time` durations, `gate
 * --max-regression/--min-share` percentages, and the format and weight
 * names. The first byte picks the parser; the rest is the value, as the
 * shell would pass it (up to the first NUL). */
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "compare/compare.h"
#include "export/export.h"
#include "fuzz.h"
#include "prof/trace_opts.h"
#include "prof/units.h"
#include "sink/table.h"

/* --set takes a comma-separated list, split as cmd_diagnose.c splits it. */
static void parse_sets(char *list)
{
	struct diag_settings s = { 0 };
	char *save = NULL;

	FUZZ_CHECK(diag_settings__init(&s) == 0);
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct prof_error err = { 0 };

		if (diag_settings__parse(&s, tok, &err) != 0) {
			FUZZ_CHECK(err.code == PROF_E_USAGE && err.msg[0]);
			break;
		}
	}
	for (int i = 0; i < diag_nsetting_defs; i++)
		FUZZ_CHECK(isfinite(s.values[i]) && s.values[i] >= 0);
	diag_settings__exit(&s);
}

static void parse_trace(const char *list)
{
	size_t bad_at = (size_t)-1;
	int mask = prof_trace_opts__parse(list, &bad_at);

	if (mask < 0)
		FUZZ_CHECK(mask == -1 && (bad_at == (size_t)-1 || bad_at <= strlen(list)));
	else
		FUZZ_CHECK(mask > 0 && (mask & ~PROF_TRACE_ALL) == 0);
}

/* The one duration grammar of every option (report --from/--to, gate
 * --min-time). */
static void parse_time(const char *text)
{
	int64_t ns = -1;
	int rc = prof_units__parse_duration(text, &ns);

	FUZZ_CHECK(rc == 0 || rc == PROF_E_USAGE);
	if (rc == 0)
		FUZZ_CHECK(ns >= 0);
}

/* A duration read back is written in every style within its buffer. */
static void write_time(const char *text)
{
	static const enum prof_units_style styles[] = { PROF_UNITS_COMPACT, PROF_UNITS_FIXED,
						       PROF_UNITS_FIXED3, PROF_UNITS_SIG3 };
	char buf[64];
	int64_t ns;

	if (prof_units__parse_duration(text, &ns) < 0)
		return;
	for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
		prof_units__duration(buf, sizeof buf, ns, styles[i]);
		FUZZ_CHECK(buf[0] && strlen(buf) < sizeof buf - 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	double pct = -1;

	if (size < 1)
		return 0;
	text = fuzz_string(data + 1, size - 1);
	if (!text)
		return 0;
	switch (data[0] % 6) {
	case 0:
		parse_sets(text);
		break;
	case 1:
		parse_trace(text);
		break;
	case 2:
		parse_time(text);
		break;
	case 3:
		write_time(text);
		break;
	case 4:
		if (baseline__parse_percent(text, &pct) == 0)
			FUZZ_CHECK(isfinite(pct) && pct >= 0);
		break;
	default:
		FUZZ_CHECK(rpt_format__parse(text) <= RPT_FORMAT_JSON);
		FUZZ_CHECK(folded_weight__parse(text) <= FOLDED_WEIGHT_API);
		break;
	}
	free(text);
	return 0;
}
