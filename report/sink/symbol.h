/* symbol.h - short forms of demangled C++ kernel names for text output
 * ("void at::native::vectorized_elementwise_kernel<4, ...lambda..., std::
 * array<char*, 2ul> >(int, ...)" -> "vectorized_elementwise_kernel<4, ...>").
 * CSV, JSON and HTML keep full names. */
#ifndef REPORT_SYMBOL_H
#define REPORT_SYMBOL_H

#include <stddef.h>

/* Write the short form of name into out (cap bytes, always terminated);
 * a name that is not a C++ declaration is kept as it is. Returns the
 * length written. */
size_t rpt_symbol__shorten(const char *name, char *out, size_t cap);

#endif
