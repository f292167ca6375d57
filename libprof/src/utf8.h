/* utf8.h - decoding one UTF-8 sequence at a time, shared by the escapers. */
#ifndef PROF_UTF8_H
#define PROF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The replacement character U+FFFD, encoded. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Decode the sequence at s (NUL-terminated). Sets *len to the bytes consumed
 * (at least 1) and returns the code point, or -1 when the bytes are not valid
 * UTF-8 (overlong forms, surrogates and values past U+10FFFF included); an
 * invalid sequence consumes exactly one byte so decoding resynchronises. */
int32_t utf8_decode(const unsigned char *s, size_t *len);

#endif
