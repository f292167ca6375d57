/* file.h - a whole file read into memory. Thresholds, baselines, peaks
 * documents and gnuplot's SVG are read by this one reader; each caller words
 * its own messages, so failures come back as codes with errno kept. */
#ifndef PROF_FILE_H
#define PROF_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Read what is left of f into a malloc'd buffer (*text) with a NUL after the
 * last byte; *len_bytes (may be NULL) gets the number of bytes read, so a
 * text with a NUL of its own is told apart by strlen. More than max_bytes
 * (0: no limit) is refused. Reads to the end, so pipes work too. Returns 0,
 * PROF_E_NOMEM, or PROF_E_IO with errno saying why (EFBIG: too long); on
 * failure *text is NULL. */
int prof_file__read_stream(FILE *f, size_t max_bytes, char **text, size_t *len_bytes);
/* The same for the file at path. PROF_E_IO also when it cannot be opened;
 * a caller that words that case apart opens the file itself. */
int prof_file__read(const char *path, size_t max_bytes, char **text, size_t *len_bytes);

#endif
