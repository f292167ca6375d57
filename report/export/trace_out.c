/* trace_out.c - the Chrome trace's buffered output (see trace_out.h). */
#include "trace_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "export_window.h"
#include "prof/array.h"
#include "prof/escape.h"

/* Names kept escaped; a capture with more distinct ones (NVTX text made
 * unique per call) has the rest escaped where they are written. */
#define JSON_NAMES_MAX 65536

void trace_out__init(struct trace_out *o, FILE *f)
{
	o->f = f;
	o->len = 0;
	prof_strmap__init(&o->json_ids);
	o->json = NULL;
	o->njson = o->cap_json = 0;
}

void trace_out__flush(struct trace_out *o)
{
	if (o->len)
		fwrite(o->buf, 1, o->len, o->f);
	o->len = 0;
}

void trace_out__exit(struct trace_out *o)
{
	trace_out__flush(o);
	for (size_t i = 0; i < o->njson; i++)
		free(o->json[i].text);
	free(o->json);
	prof_strmap__exit(&o->json_ids);
}

void trace_out__i64(struct trace_out *o, int64_t v)
{
	char digits[24], *p = digits + sizeof digits;
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag);
	if (v < 0)
		*--p = '-';
	trace_out__put(o, p, (size_t)(digits + sizeof digits - p));
}

void trace_out__us(struct trace_out *o, int64_t ns)
{
	char text[32];

	trace_out__put(o, text, export_format_us(text, ns));
}

void trace_out__f0(struct trace_out *o, double v)
{
	double r = nearbyint(v);

	/* a whole number an int64_t holds exactly, and no negative zero
	 * (printf writes "-0") */
	if (r > -9007199254740992.0 && r < 9007199254740992.0 && !(r == 0 && signbit(r)))
		trace_out__i64(o, (int64_t)r);
	else
		trace_out__printf(o, "%.0f", v);
}

void trace_out__printf(struct trace_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sizeof o->buf - o->len < 256)
		trace_out__flush(o);
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof o->buf - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof o->buf - o->len) {
		o->len += (size_t)n;
		return;
	}
	/* longer than the room left: straight to the file */
	trace_out__flush(o);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

void trace_out__json(struct trace_out *o, const char *s)
{
	trace_out__flush(o);
	prof_fputs_json(o->f, s);
}

/* s escaped into the cache at index *i; false when it cannot be kept. */
static bool json_cache_add(struct trace_out *o, const char *s, size_t len, uint64_t hash,
			   size_t *i)
{
	char *text = NULL;
	size_t text_len = 0;
	FILE *m;

	if (o->njson >= JSON_NAMES_MAX ||
	    prof_array__grow(&o->json, &o->cap_json, o->njson + 1, sizeof *o->json) < 0)
		return false;
	m = open_memstream(&text, &text_len);
	if (!m)
		return false;
	prof_fputs_json(m, s);
	if (fclose(m) != 0 || !text) {
		free(text);
		return false;
	}
	if (prof_strmap__add(&o->json_ids, s, len, hash, (int64_t)o->njson) < 0) {
		free(text);
		return false;
	}
	o->json[o->njson] = (struct trace_out_json){ text, text_len };
	*i = o->njson++;
	return true;
}

void trace_out__json_name(struct trace_out *o, const char *s)
{
	size_t len, i;
	uint64_t hash;
	int64_t found;

	if (!s) {
		trace_out__json(o, s);
		return;
	}
	len = strlen(s);
	hash = prof_strmap__hash(s, len);
	if (prof_strmap__find(&o->json_ids, s, len, hash, &found))
		i = (size_t)found;
	else if (!json_cache_add(o, s, len, hash, &i)) {
		trace_out__json(o, s);
		return;
	}
	trace_out__put(o, o->json[i].text, o->json[i].len);
}
