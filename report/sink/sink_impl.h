/* sink_impl.h - the constructors of the renderers that sink.c chooses from
 * by format (table.h: rpt_sink__new). */
#ifndef REPORT_SINK_IMPL_H
#define REPORT_SINK_IMPL_H

#include <stdio.h>

struct rpt_sink *rpt_sink_text__new(FILE *out);
struct rpt_sink *rpt_sink_csv__new(FILE *out);
struct rpt_sink *rpt_sink_json__new(FILE *out);

#endif
