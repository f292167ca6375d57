/* trace_out.h - the Chrome trace's output: text formatted into a buffer of
 * its own and written to the file in large blocks.
 *
 * A trace is most of its bytes in a few shapes repeated millions of times
 * (an event's keys, integers, times in microseconds), which stdio's
 * formatted output parsed a format for and locked the stream around at
 * every call: a third of the export's time. Here integers and times are
 * written by hand, byte for byte as printf writes them, and only doubles
 * go through a format. Strings from the capture still pass through the
 * JSON sink's one escaping function (prof_fputs_json): each distinct name
 * escaped once into a cache, anything else written straight to the file. */
#ifndef REPORT_TRACE_OUT_H
#define REPORT_TRACE_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "prof/strmap.h"

#define TRACE_OUT_BYTES (64u << 10)

struct trace_out {
	FILE *f;
	size_t len;
	struct prof_strmap json_ids; /* a name -> its index in json */
	struct trace_out_json {      /* names as JSON string literals */
		char *text;
		size_t len;
	} *json;
	size_t njson, cap_json;
	char buf[TRACE_OUT_BYTES];
};

void trace_out__init(struct trace_out *o, FILE *f);
/* Write what is buffered; the file's error flag says whether it went. */
void trace_out__flush(struct trace_out *o);
/* Flush, and free the name cache. */
void trace_out__exit(struct trace_out *o);

static inline void trace_out__put(struct trace_out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof o->buf) {
		trace_out__flush(o);
		if (n > sizeof o->buf) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* A constant or already escaped string. */
static inline void trace_out__puts(struct trace_out *o, const char *s)
{
	trace_out__put(o, s, strlen(s));
}

/* As printf's "%" PRId64. */
void trace_out__i64(struct trace_out *o, int64_t v);
/* As export_format_us: ns as microseconds with three decimals. */
void trace_out__us(struct trace_out *o, int64_t ns);
/* As printf's "%.0f": halves to even, as printf rounds in the default
 * rounding mode. */
void trace_out__f0(struct trace_out *o, double v);
/* printf-formatted (the other doubles). */
void trace_out__printf(struct trace_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s as a JSON string literal (prof_fputs_json), NULL as null. */
void trace_out__json(struct trace_out *o, const char *s);
/* The same for a string met again and again (a kernel's or a call's
 * name): escaped once, then copied from the cache. */
void trace_out__json_name(struct trace_out *o, const char *s);

#endif
