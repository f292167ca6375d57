/* units.c - durations, byte sizes and counts written and read (prof/units.h). */
#include "prof/units.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "prof/error.h"

/* v (>= 1) with three significant figures and unit, no space. */
static void three(char *buf, size_t cap, double v, const char *unit)
{
	if (v >= 99.95)
		snprintf(buf, cap, "%.0f%s", v, unit);
	else if (v >= 9.995)
		snprintf(buf, cap, "%.1f%s", v, unit);
	else
		snprintf(buf, cap, "%.2f%s", v, unit);
}

static void compact(char *buf, size_t cap, int64_t ns)
{
	double v = (double)ns;

	if (ns < 0)
		snprintf(buf, cap, "-");
	else if (ns < 1000)
		snprintf(buf, cap, "%" PRId64 "ns", ns);
	else if (v < 999.5e3)
		three(buf, cap, v / 1e3, "us");
	else if (v < 999.5e6)
		three(buf, cap, v / 1e6, "ms");
	else if (v < 3600e9)
		three(buf, cap, v / 1e9, "s");
	else
		snprintf(buf, cap, "%lldh%02lldm", (long long)(ns / 3600000000000LL),
			 (long long)(ns / 60000000000LL % 60));
}

/* A duration of a microsecond or more in a fixed style: true when written. */
static bool fixed(char *buf, size_t cap, double v, enum prof_units_style style)
{
	if (v >= 1e9)
		snprintf(buf, cap, "%.3f s", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, cap, "%.3f ms", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, cap, style == PROF_UNITS_FIXED ? "%.2f us" : "%.3f us", v / 1e3);
	else
		return false;
	return true;
}

/* magnitude of a microsecond or more, three significant figures: true
 * when written. */
static bool sig3(char *buf, size_t cap, const char *sign, double magnitude)
{
	if (magnitude >= 1e9)
		snprintf(buf, cap, "%s%.3g s", sign, magnitude / 1e9);
	else if (magnitude >= 1e6)
		snprintf(buf, cap, "%s%.3g ms", sign, magnitude / 1e6);
	else if (magnitude >= 1e3)
		snprintf(buf, cap, "%s%.3g us", sign, magnitude / 1e3);
	else
		return false;
	return true;
}

const char *prof_units__duration(char *buf, size_t cap, int64_t ns, enum prof_units_style style)
{
	/* the magnitude as unsigned: -INT64_MIN is no int64_t (a baseline's
	 * numbers are the file's, whatever they are) */
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";

	switch (style) {
	case PROF_UNITS_COMPACT:
		compact(buf, cap, ns);
		break;
	case PROF_UNITS_SIG3:
		if (!sig3(buf, cap, sign, (double)magnitude))
			snprintf(buf, cap, "%s%" PRIu64 " ns", sign, magnitude);
		break;
	case PROF_UNITS_FIXED:
	case PROF_UNITS_FIXED3:
		if (!fixed(buf, cap, (double)ns, style))
			snprintf(buf, cap, "%" PRId64 " ns", ns);
		break;
	}
	return buf;
}

const char *prof_units__duration_f(char *buf, size_t cap, double ns, enum prof_units_style style)
{
	switch (style) {
	case PROF_UNITS_COMPACT:
		compact(buf, cap, ns < 0 ? -1 : ns >= 9.2e18 ? INT64_MAX : (int64_t)ns);
		break;
	case PROF_UNITS_SIG3:
		if (!sig3(buf, cap, ns < 0 ? "-" : "", ns < 0 ? -ns : ns))
			snprintf(buf, cap, "%.0f ns", ns);
		break;
	case PROF_UNITS_FIXED:
	case PROF_UNITS_FIXED3:
		if (!fixed(buf, cap, ns, style))
			snprintf(buf, cap, "%.0f ns", ns);
		break;
	}
	return buf;
}

const char *prof_units__bytes(char *buf, size_t cap, double bytes, enum prof_units_style style)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = bytes < 0 ? -bytes : bytes;
	const char *sign = bytes < 0 ? "-" : "";
	char num[32];
	int u = -1;

	if (style != PROF_UNITS_COMPACT) {
		if (bytes >= 1024.0 * 1024 * 1024)
			snprintf(buf, cap, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
		else if (bytes >= 1024.0 * 1024)
			snprintf(buf, cap, "%.2f MiB", bytes / (1024.0 * 1024));
		else if (bytes >= 1024.0)
			snprintf(buf, cap, "%.1f KiB", bytes / 1024.0);
		else
			snprintf(buf, cap, "%.0f B", bytes);
		return buf;
	}
	if (v < 1024) {
		snprintf(buf, cap, "%s%lldB", sign, (long long)v);
		return buf;
	}
	while (v >= 1023.5 && u < 4) {
		v /= 1024;
		u++;
	}
	three(num, sizeof num, v, unit[u]);
	snprintf(buf, cap, "%s%s", sign, num);
	return buf;
}

const char *prof_units__count(char *buf, size_t cap, double n)
{
	static const char *const unit[] = { "k", "M", "G", "T" };
	int u = -1;

	if (n < 0)
		n = 0;
	if (n < 999.5) {
		snprintf(buf, cap, "%.0f", n);
		return buf;
	}
	while (n >= 999.5 && u < 3) {
		n /= 1000;
		u++;
	}
	three(buf, cap, n, unit[u]);
	return buf;
}

const char *prof_units__clock(char *buf, size_t cap, int64_t ns)
{
	long long s = ns > 0 ? (long long)(ns / 1000000000) : 0;

	snprintf(buf, cap, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
	return buf;
}

int prof_units__parse_duration(const char *text, int64_t *out_ns)
{
	static const struct { const char *suffix; int64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 },
	};
	int64_t whole = 0, frac = 0, frac_scale = 1;
	const char *p = text;

	if (!text || !isdigit((unsigned char)*p))
		return PROF_E_USAGE;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (INT64_MAX - 9) / 10)
			return PROF_E_USAGE;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return PROF_E_USAGE;
		/* nine digits are enough for nanoseconds of seconds */
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_scale < 1000000000) {
				frac = frac * 10 + (*p - '0');
				frac_scale *= 10;
			}
		}
	}
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(p, units[i].suffix) != 0)
			continue;
		/* The fraction can carry the sum past INT64_MAX ("9223372036.9s"). */
		if (whole > INT64_MAX / units[i].ns ||
		    whole * units[i].ns > INT64_MAX - frac * units[i].ns / frac_scale)
			return PROF_E_USAGE;
		*out_ns = whole * units[i].ns + frac * units[i].ns / frac_scale;
		return 0;
	}
	return PROF_E_USAGE;
}
