/* capture_range.c - `--capture-range`'s grammar (prof/capture_range.h). */
#include "prof/capture_range.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The number at *p up to the next ',' or the end: 0, or -1. */
static int number(const char **p, uint64_t *out)
{
	const char *s = *p;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	*out = strtoull(s, &end, 10);
	if (*end && *end != ',')
		return -1;
	*p = end;
	return 0;
}

int prof_capture_range__parse(const char *text, struct prof_capture_range *out,
			      const char **why)
{
	const char *p, *name_end, *at;
	size_t name_len, domain_len;

	memset(out, 0, sizeof *out);
	out->count = 1;
	if (!strcmp(text, "cudaProfilerApi")) {
		out->profiler_api = true;
		return 0;
	}
	*why = "choose nvtx:NAME[@DOMAIN][,skip=M][,count=N] or cudaProfilerApi";
	if (strncmp(text, "nvtx:", 5))
		return -1;
	p = text + 5;
	name_end = p + strcspn(p, ",");
	at = memchr(p, '@', (size_t)(name_end - p));
	name_len = (size_t)((at ? at : name_end) - p);
	domain_len = at ? (size_t)(name_end - at - 1) : 0;
	if (!name_len || (at && !domain_len))
		return -1;
	if (name_len >= sizeof out->name || domain_len >= sizeof out->domain) {
		*why = "NAME and DOMAIN take at most 127 characters";
		return -1;
	}
	memcpy(out->name, p, name_len);
	if (at)
		memcpy(out->domain, at + 1, domain_len);
	for (p = name_end; *p; ) {
		p++; /* the ',' */
		if (!strncmp(p, "skip=", 5)) {
			p += 5;
			if (number(&p, &out->skip) < 0)
				goto bad_number;
		} else if (!strncmp(p, "count=", 6)) {
			p += 6;
			if (number(&p, &out->count) < 0 || !out->count)
				goto bad_number;
		} else {
			*why = "after NAME come skip=M and count=N only";
			return -1;
		}
	}
	return 0;
bad_number:
	*why = "skip=M takes a number, count=N a number of at least 1";
	return -1;
}
