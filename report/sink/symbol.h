/* symbol.h - short forms of demangled kernel and function names for text
 * output, as flame-graph tools show them: the qualified function name with
 * its template arguments and parameter list elided,
 *
 *	void at::native::vectorized_elementwise_kernel<4, at::native::
 *	FillFunctor<float>, std::array<char*, 1ul> >(int, ...)
 *	-> at::native::vectorized_elementwise_kernel<...>
 *
 * and, for the names of one table, a short form that stays unique among
 * them (rpt_symbols). CSV, JSON, HTML, traces and folded stacks keep full
 * names; the text sink shortens columns of type RPT_SYMBOL (table.h). */
#ifndef REPORT_SYMBOL_H
#define REPORT_SYMBOL_H

#include <stddef.h>

enum rpt_symbol_detail {
	/* every template argument list "<...>", parameter lists left out */
	RPT_SYMBOL_SHORT,
	/* the function's own template arguments kept, each in its short form:
	 * "cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>" */
	RPT_SYMBOL_ARGS,
};

/* Write the short form of name into out (cap bytes, always terminated when
 * cap > 0) and return its full length, as snprintf does. A name without
 * template arguments or parameters ("sm80_xmma_gemm_...", "[CUDA memset]")
 * is kept as it is. Text after a declaration (after its parameter list, or
 * from a lone ':' on: "kernel(int): 38% (64 threads)") is kept as well, so
 * an offender line keeps what a rule wrote about the kernel. */
size_t rpt_symbol__shorten(const char *name, enum rpt_symbol_detail detail, char *out, size_t cap);

/* The names shown in one table. Different names whose short forms are the
 * same are told apart: by their template arguments when those are short
 * enough (RPT_SYMBOL_ARGS), else by a number in the order they were added
 * ("f<...>#1", "f<...>#2"). A name shows the same way every time; add every
 * name of the table before showing any, so that a clash is known before
 * the first of its names is shown. A name added after its short form was
 * shown for another name is numbered from #2. */
struct rpt_symbols;

struct rpt_symbols *rpt_symbols__new(void);
void rpt_symbols__delete(struct rpt_symbols *t);
/* Returns 0 or PROF_E_NOMEM. */
int rpt_symbols__add(struct rpt_symbols *t, const char *name);
/* The form of name to show (adding it when it is new) into out, as
 * rpt_symbol__shorten; a name the table cannot hold (out of memory) shows
 * in its plain short form. */
size_t rpt_symbols__show(struct rpt_symbols *t, const char *name, char *out, size_t cap);

#endif
