/* sink.c - choosing a renderer by format name. The only file that knows
 * every renderer; the renderers themselves know only sink_cell.h. */
#include "sink.h"

#include <string.h>

#include "sink_impl.h"

struct rpt_sink *rpt_sink__new(enum rpt_format format, FILE *out)
{
	switch (format) {
	case RPT_FORMAT_TEXT:
		return rpt_sink_text__new(out);
	case RPT_FORMAT_CSV:
		return rpt_sink_csv__new(out);
	case RPT_FORMAT_JSON:
		return rpt_sink_json__new(out);
	}
	return NULL;
}

void rpt_sink__delete(struct rpt_sink *sink)
{
	if (sink)
		sink->destroy(sink);
}

int rpt_sink__note(struct rpt_sink *sink, const struct rpt_note *note)
{
	return sink->note ? sink->note(sink, note) : 0;
}

int rpt_format__parse(const char *name)
{
	if (!name)
		return -1;
	if (strcmp(name, "text") == 0)
		return RPT_FORMAT_TEXT;
	if (strcmp(name, "csv") == 0)
		return RPT_FORMAT_CSV;
	if (strcmp(name, "json") == 0)
		return RPT_FORMAT_JSON;
	return -1;
}
