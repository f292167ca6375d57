/* escape.h - the one escaping function per output sink.
 *
 * Every string that came from a capture (kernel names, NVTX text, command
 * lines) reaches a file or terminal only through one of these. Invalid UTF-8
 * is replaced by U+FFFD in every sink, so output stays valid text. */
#ifndef PROF_ESCAPE_H
#define PROF_ESCAPE_H

#include <stdio.h>

/* A JSON string literal, quotes included. */
void prof_fputs_json(FILE *f, const char *s);
/* One CSV field (RFC 4180): quoted when it holds , or ", quotes doubled;
 * control characters (ESC, BEL, CR, LF, TAB included) shown as '?', as for
 * a terminal. Fields starting with = + - @ are prefixed with ' so
 * spreadsheets do not evaluate them. */
void prof_fputs_csv(FILE *f, const char *s);
/* Text for HTML element content or a double-quoted attribute. */
void prof_fputs_html(FILE *f, const char *s);
/* Text for a terminal: control characters (ESC included) shown as '?'. */
void prof_fputs_term(FILE *f, const char *s);
/* The same sanitising as prof_fputs_term into a buffer (for ncurses and for
 * column-width arithmetic). Returns the number of bytes written, excluding the
 * NUL; output is always NUL-terminated when cap > 0. */
size_t prof_sanitize_term(char *dst, size_t cap, const char *s);
/* Valid UTF-8 for binary formats whose strings must be UTF-8 (Perfetto's
 * protobuf): every byte kept except invalid sequences, each shown as U+FFFD.
 * Writes at most cap - 1 bytes and a NUL (when cap > 0), never splitting a
 * character; returns the length the whole result needs, excluding the NUL,
 * so a caller can grow its buffer and call again. */
size_t prof_sanitize_utf8(char *dst, size_t cap, const char *s);

#endif
