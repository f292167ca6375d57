/* utf8.c - strict UTF-8 decoding (RFC 3629) for the output escapers. */
#include "utf8.h"

int32_t utf8_decode(const unsigned char *s, size_t *len)
{
	unsigned char c = s[0];
	int32_t cp, min;
	size_t n;

	*len = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2; cp = c & 0x1F; min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3; cp = c & 0x0F; min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4; cp = c & 0x07; min = 0x10000;
	} else {
		return -1;
	}
	/* A NUL terminator fails the continuation test, so no read past the end. */
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*len = n;
	return cp;
}
