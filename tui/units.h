/* units.h - numbers as perfkit top shows them: durations, byte sizes, counts
 * and rates in a few characters, with their unit. Pure functions. */
#ifndef TUI_UNITS_H
#define TUI_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "812ns", "12.3us", "4.56ms", "7.89s", "2h03m" */
void units__duration(char *buf, size_t cap, int64_t ns);
/* "512B", "1.5KiB", "12.0MiB", "3.20GiB" */
void units__bytes(char *buf, size_t cap, int64_t bytes);
/* "987", "12.3k", "4.56M", "7.89G" */
void units__count(char *buf, size_t cap, double n);
/* "00:01:23" (hours grow past 99) */
void units__clock(char *buf, size_t cap, int64_t ns);

#endif
