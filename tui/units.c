/* units.c - human-readable numbers for perfkit top (units.h). Three
 * significant digits: enough to compare rows at a glance, short enough for
 * fixed-width columns. */
#include "units.h"

#include <stdio.h>

/* v with 3 significant digits (v >= 1) */
static void three(char *buf, size_t cap, double v, const char *unit)
{
	if (v >= 99.95)
		snprintf(buf, cap, "%.0f%s", v, unit);
	else if (v >= 9.995)
		snprintf(buf, cap, "%.1f%s", v, unit);
	else
		snprintf(buf, cap, "%.2f%s", v, unit);
}

void units__duration(char *buf, size_t cap, int64_t ns)
{
	double v = (double)ns;

	if (ns < 0) {
		snprintf(buf, cap, "-");
		return;
	}
	if (ns < 1000)
		snprintf(buf, cap, "%lldns", (long long)ns);
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

void units__bytes(char *buf, size_t cap, int64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)(bytes < 0 ? -bytes : bytes);
	const char *sign = bytes < 0 ? "-" : "";
	char num[32];
	int u = -1;

	if (v < 1024) {
		snprintf(buf, cap, "%s%lldB", sign, (long long)v);
		return;
	}
	while (v >= 1023.5 && u < 4) {
		v /= 1024;
		u++;
	}
	three(num, sizeof num, v, unit[u]);
	snprintf(buf, cap, "%s%s", sign, num);
}

void units__count(char *buf, size_t cap, double n)
{
	static const char *const unit[] = { "k", "M", "G", "T" };
	int u = -1;

	if (n < 0)
		n = 0;
	if (n < 999.5) {
		snprintf(buf, cap, "%.0f", n);
		return;
	}
	while (n >= 999.5 && u < 3) {
		n /= 1000;
		u++;
	}
	three(buf, cap, n, unit[u]);
}

void units__clock(char *buf, size_t cap, int64_t ns)
{
	long long s = ns > 0 ? (long long)(ns / 1000000000) : 0;

	snprintf(buf, cap, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
}
