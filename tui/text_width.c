/* text_width.c - display width and cutting of UTF-8 text (text_width.h).
 * Input comes from prof_sanitize_term, so it is valid UTF-8 without control
 * characters; a stray invalid byte still counts as one column. wcwidth is
 * declared under _XOPEN_SOURCE, which ncursesw's pkg-config flags set. */
#include "text_width.h"

#include <string.h>
#include <wchar.h>

/* Decode one character at s: its length in bytes and code point. */
static size_t next_char(const unsigned char *s, unsigned *cp)
{
	size_t len = 1;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0)
		len = 2;
	else if ((s[0] & 0xF0) == 0xE0)
		len = 3;
	else if ((s[0] & 0xF8) == 0xF0)
		len = 4;
	else {
		*cp = 0xFFFD;
		return 1;
	}
	*cp = s[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return i;
		}
		*cp = *cp << 6 | (s[i] & 0x3F);
	}
	return len;
}

static int char_width(unsigned cp, bool utf8)
{
	int w;

	if (cp < 0x80 || !utf8)
		return 1;
	w = wcwidth((wchar_t)cp);
	/* unknown to this locale: assume one column rather than none */
	return w < 0 ? 1 : w;
}

int text__width(const char *s, bool utf8)
{
	const unsigned char *p = (const unsigned char *)s;
	int width = 0;
	unsigned cp;

	while (*p) {
		p += next_char(p, &cp);
		width += char_width(cp, utf8);
	}
	return width;
}

/* Append the character at p (len bytes) or '?' to dst. */
static size_t put(char *dst, size_t used, size_t cap, const unsigned char *p, size_t len,
		  unsigned cp, bool utf8)
{
	if (!utf8 && cp >= 0x80) {
		p = (const unsigned char *)"?";
		len = 1;
	}
	if (used + len + 1 > cap)
		return used;
	memcpy(dst + used, p, len);
	return used + len;
}

int text__fit(char *dst, size_t cap, const char *s, int width, enum text_cut cut, bool utf8)
{
	const char *mark = utf8 ? "\u2026" : "...";
	int mark_width = utf8 ? 1 : 3, total = text__width(s, utf8), used_w = 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, len;
	unsigned cp;

	if (!cap)
		return 0;
	dst[0] = '\0';
	if (width <= 0)
		return 0;
	if (total <= width) {
		while (*p) {
			len = next_char(p, &cp);
			used = put(dst, used, cap, p, len, cp, utf8);
			p += len;
		}
		dst[used] = '\0';
		return total;
	}
	if (width <= mark_width)
		mark = "", mark_width = 0;
	if (cut == TEXT_KEEP_TAIL) {
		int skip = total - (width - mark_width);

		used = put(dst, used, cap, (const unsigned char *)mark, strlen(mark), 0, true);
		used_w = mark_width;
		/* drop characters from the start until the rest fits */
		while (*p && skip > 0) {
			len = next_char(p, &cp);
			skip -= char_width(cp, utf8);
			p += len;
		}
		while (*p) {
			len = next_char(p, &cp);
			used = put(dst, used, cap, p, len, cp, utf8);
			used_w += char_width(cp, utf8);
			p += len;
		}
	} else {
		while (*p) {
			int w;

			len = next_char(p, &cp);
			w = char_width(cp, utf8);
			if (used_w + w > width - mark_width)
				break;
			used = put(dst, used, cap, p, len, cp, utf8);
			used_w += w;
			p += len;
		}
		used = put(dst, used, cap, (const unsigned char *)mark, strlen(mark), 0, true);
		used_w += mark_width;
	}
	dst[used] = '\0';
	return used_w;
}
