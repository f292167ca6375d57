/* top_draw.h - the draw step of perfkit top: one frame from the model, the
 * views and the UI state, into ncurses' standard screen. It reads these
 * structs and nothing else (no store, no clock), so what is drawn is
 * exactly what the refresh step left. */
#ifndef TUI_TOP_DRAW_H
#define TUI_TOP_DRAW_H

#include <stdbool.h>

#include "top_layout.h"
#include "top_model.h"

#define TOP_FILTER_MAX 128

/* What the keys changed. */
struct top_ui {
	enum top_sort sort;
	bool ascending;
	char filter[TOP_FILTER_MAX];  /* applied; "" shows every kernel */
	bool editing;                 /* '/' pressed: the footer is a prompt */
	char edit[TOP_FILTER_MAX];    /* the filter being typed */
	int scroll;                   /* first kernel row shown */
	bool paused;
	bool help;
	bool utf8;                    /* the terminal takes UTF-8 */
	char status[160];             /* what the capture is doing ("live", ...) */
};

/* The kernel rows that fit on one page. */
int top_draw__page_rows(const struct top_layout *l);
/* Draw one frame (erase, draw, refresh). */
void top_draw__frame(const struct top_model *m, const struct top_view *kernels,
		     const struct top_view *ranges, const struct top_ui *ui,
		     const struct top_layout *l);

#endif
