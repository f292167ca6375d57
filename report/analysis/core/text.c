/* text.c - durations and bytes in human units, and formatted strings
 * (text.h). */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

char *diag__fmt(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

const char *diag__ns(char *buf, size_t cap, int64_t ns)
{
	double v = (double)ns;

	if (ns >= 1000000000)
		snprintf(buf, cap, "%.3f s", v / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, cap, "%.3f ms", v / 1e6);
	else if (ns >= 1000)
		snprintf(buf, cap, "%.2f us", v / 1e3);
	else
		snprintf(buf, cap, "%lld ns", (long long)ns);
	return buf;
}

const char *diag__bytes(char *buf, size_t cap, double bytes)
{
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
