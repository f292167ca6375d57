/* escape.c - the one escaping function per output sink (JSON, CSV, HTML,
 * terminal). Each walks the string one UTF-8 sequence at a time so that
 * invalid bytes become U+FFFD everywhere and multi-byte characters are never
 * split. */
#include "prof/escape.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void prof_fputs_json(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p) {
		int32_t cp = utf8_decode(p, &len);

		if (cp < 0)
			fputs(UTF8_REPLACEMENT, f);
		else if (cp == '"')
			fputs("\\\"", f);
		else if (cp == '\\')
			fputs("\\\\", f);
		else if (cp < 0x20)
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
	fputc('"', f);
}

/* C0, DEL and C1 controls: C1 (U+0080..U+009F) matters because some terminals
 * take U+009B as CSI, the start of an escape sequence. */
static bool is_control(int32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

/* The terminal form of one decoded sequence: its bytes, "?" or U+FFFD. */
static const char *term_form(const unsigned char *p, int32_t cp, size_t *len)
{
	if (cp < 0) {
		*len = sizeof UTF8_REPLACEMENT - 1;
		return UTF8_REPLACEMENT;
	}
	if (is_control(cp)) {
		*len = 1;
		return "?";
	}
	return (const char *)p;
}

/* A field that is a plain number ("-5", "1e3") cannot be a formula, so the
 * injection guard leaves negative numbers alone. */
static bool is_number(const char *s)
{
	char *end;

	if (!*s)
		return false;
	strtod(s, &end);
	return *end == '\0';
}

static bool csv_needs_guard(const char *s)
{
	return (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' ||
		s[0] == '\t' || s[0] == '\r') && !is_number(s);
}

/* Control characters as the terminal shows them (term_form): a CSV file is
 * read in terminals and by line-oriented tools as often as by spreadsheets,
 * and a kernel or range name's ESC, BEL or CR would act there; a line break
 * would split the row for every reader that is not a CSV parser. Only ','
 * and '"' are then left to quote. */
void prof_fputs_csv(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote;
	size_t len, out_len;

	if (!s)
		return;
	quote = strpbrk(s, ",\"") != NULL;
	if (quote)
		fputc('"', f);
	if (csv_needs_guard(s))
		fputc('\'', f);
	while (*p) {
		int32_t cp = utf8_decode(p, &len);
		const char *out;

		out_len = len;
		out = term_form(p, cp, &out_len);
		if (cp == '"')
			fputs("\"\"", f);
		else
			fwrite(out, 1, out_len, f);
		p += len;
	}
	if (quote)
		fputc('"', f);
}

/* Whether byte c is printable ASCII that HTML text keeps as it is. */
static bool html_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7F && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

void prof_fputs_html(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	if (!s)
		return;
	while (*p) {
		int32_t cp;

		/* a run of plain ASCII in one write: a kernel's name is mostly
		 * one, and the HTML page writes thousands of them */
		for (len = 0; html_plain(p[len]); len++)
			;
		if (len) {
			fwrite(p, 1, len, f);
			p += len;
			continue;
		}
		cp = utf8_decode(p, &len);

		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* Control characters other than whitespace are not allowed
			 * in HTML text; show them as the replacement character. */
			if (cp < 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
			    cp == 0x7F)
				fputs(UTF8_REPLACEMENT, f);
			else
				fwrite(p, 1, len, f);
		}
		p += len;
	}
}

void prof_fputs_term(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len, out_len;

	if (!s)
		return;
	while (*p) {
		int32_t cp = utf8_decode(p, &len);
		const char *out;

		out_len = len;
		out = term_form(p, cp, &out_len);
		fwrite(out, 1, out_len, f);
		p += len;
	}
}

size_t prof_sanitize_term(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, len, out_len;

	if (cap == 0)
		return 0;
	while (p && *p) {
		int32_t cp = utf8_decode(p, &len);
		const char *out;

		out_len = len;
		out = term_form(p, cp, &out_len);
		/* Stop before a character that does not fit whole. */
		if (used + out_len + 1 > cap)
			break;
		memcpy(dst + used, out, out_len);
		used += out_len;
		p += len;
	}
	dst[used] = '\0';
	return used;
}
