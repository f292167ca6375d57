/* escape_utf8.c - strings made valid UTF-8 for binary sinks (see
 * prof_sanitize_utf8 in escape.h). */
#include "prof/escape.h"

#include <stdbool.h>
#include <string.h>

#include "utf8.h"

size_t prof_sanitize_utf8(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, used = 0, len;
	bool full = cap == 0;

	while (p && *p) {
		int32_t cp = utf8_decode(p, &len);
		const char *out = cp < 0 ? UTF8_REPLACEMENT : (const char *)p;
		size_t out_len = cp < 0 ? sizeof UTF8_REPLACEMENT - 1 : len;

		if (!full && used + out_len + 1 <= cap) {
			memcpy(dst + used, out, out_len);
			used += out_len;
		} else {
			full = true;
		}
		need += out_len;
		p += len;
	}
	if (cap > 0)
		dst[used] = '\0';
	return need;
}
