/* text_width.h - fitting already sanitised UTF-8 text into terminal
 * columns: counting display width and cutting on character boundaries, so a
 * long kernel name never spills into the next panel or splits a character. */
#ifndef TUI_TEXT_WIDTH_H
#define TUI_TEXT_WIDTH_H

#include <stdbool.h>
#include <stddef.h>

enum text_cut {
	TEXT_KEEP_HEAD, /* "void kernels::gem…": the start matters (kernel names) */
	TEXT_KEEP_TAIL, /* "…step 17 > forward": the end matters (NVTX stacks) */
};

/* Display columns of s (wide characters count 2). */
int text__width(const char *s, bool utf8);
/* Copy s into dst using at most width columns; when it does not fit, cut it
 * and mark the cut with an ellipsis ("..." without utf8). Without utf8 every
 * non-ASCII character becomes '?', since a terminal in another encoding
 * would show its bytes as several characters. Returns the columns used. */
int text__fit(char *dst, size_t cap, const char *s, int width, enum text_cut cut, bool utf8);

#endif
