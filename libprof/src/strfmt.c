/* strfmt.c - printf into a new allocation (prof/strfmt.h). */
#include "prof/strfmt.h"

#include <stdio.h>
#include <stdlib.h>

char *prof_vstrfmt(const char *fmt, va_list ap)
{
	va_list again;
	char *text;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || !(text = malloc((size_t)n + 1))) {
		va_end(again);
		return NULL;
	}
	vsnprintf(text, (size_t)n + 1, fmt, again);
	va_end(again);
	return text;
}

char *prof_strfmt(const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = prof_vstrfmt(fmt, ap);
	va_end(ap);
	return text;
}
