/* error.c - filling the one error record every failing libprof call carries. */
#include "prof/error.h"

#include <stdarg.h>
#include <stdio.h>

int prof_error__set(struct prof_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

void prof_error__clear(struct prof_error *err)
{
	if (!err)
		return;
	err->code = PROF_OK;
	err->msg[0] = '\0';
}
