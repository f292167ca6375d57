/* units.h - durations, byte sizes and counts as perfkit writes them, and
 * durations as its options read them: one place for every sink and
 * option. Pure functions.
 *
 * A duration is written in one of a few styles: each output keeps the one
 * it always had (a text's columns, a sentence, a tooltip), so that a
 * report reads the same from one version to the next. */
#ifndef PROF_UNITS_H
#define PROF_UNITS_H

#include <stddef.h>
#include <stdint.h>

enum prof_units_style {
	/* "812ns", "12.3us", "4.56ms", "7.89s", "2h03m"; bytes "512B",
	 * "1.50KiB": three figures and no space, for narrow columns
	 * (perfkit top); a negative duration is "-" */
	PROF_UNITS_COMPACT,
	/* "812 ns", "12.35 us", "4.560 ms", "7.890 s"; bytes "512 B",
	 * "1.5 KiB", "12.00 MiB": fixed decimals (diagnose's sentences) */
	PROF_UNITS_FIXED,
	/* "812 ns", "12.345 us", "4.560 ms", "7.890 s": three decimals in
	 * every unit (the flame graph's tooltips) */
	PROF_UNITS_FIXED3,
	/* "812 ns", "12.3 us", "-4.56 ms", "7.89 s": three significant
	 * figures, signed (diff and gate) */
	PROF_UNITS_SIG3,
};

/* ns in style into buf (cut to cap); returns buf. */
const char *prof_units__duration(char *buf, size_t cap, int64_t ns, enum prof_units_style style);
/* The same for a duration held in a double (a sum of durations past what
 * 64 bits hold, or a share of one); under a microsecond it is rounded to
 * whole nanoseconds. */
const char *prof_units__duration_f(char *buf, size_t cap, double ns, enum prof_units_style style);
/* bytes in style (PROF_UNITS_COMPACT or PROF_UNITS_FIXED) into buf;
 * returns buf. */
const char *prof_units__bytes(char *buf, size_t cap, double bytes, enum prof_units_style style);
/* "987", "12.3k", "4.56M", "7.89G": a count in three figures (negative: 0). */
const char *prof_units__count(char *buf, size_t cap, double n);
/* "00:01:23": elapsed time on a clock (hours grow past 99). */
const char *prof_units__clock(char *buf, size_t cap, int64_t ns);

/* A duration as the options take it: digits, an optional fraction, and a
 * unit, ns (also when none is given), us, ms or s: "2500000", "2500us",
 * "2.5ms", "1s". No sign, exponent or space; a fraction finer than a
 * nanosecond is dropped. 0, or PROF_E_USAGE when text is none of these or
 * does not fit in an int64_t of nanoseconds (the caller says which option
 * it was). */
int prof_units__parse_duration(const char *text, int64_t *ns);

#endif
