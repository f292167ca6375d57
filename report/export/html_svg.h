/* html_svg.h - what the HTML report's own SVG pictures share (html_svg.c):
 * a time axis with round ticks in us or ms, and a label cut to the width
 * it has. Every string from a capture goes through prof_fputs_html. */
#ifndef REPORT_HTML_SVG_H
#define REPORT_HTML_SVG_H

#include <stdint.h>
#include <stdio.h>

/* Ticks and grid lines from 0 to span_ns along [x0, x0 + width] at
 * y (the axis line), grid lines from top down to y, labelled in the unit
 * that suits the span ("0", "2 ms", "250 us"). */
void html_svg__time_axis(FILE *out, double x0, double width, double top, double y, int64_t span_ns);
/* name as SVG text (escaped), cut with an ellipsis to about width px of
 * 11px text; nothing when not even three letters fit. */
void html_svg__label(FILE *out, double x, double y, double width, const char *name);
/* v as printf's "%.1f" (decimals 1) or "%.2f" (2) writes it, into buf
 * (HTML_SVG_FIXED_MAX bytes); buf. A picture of a step writes four of
 * them a box, thousands of boxes, where printf's conversion of a double
 * was most of its time. */
#define HTML_SVG_FIXED_MAX 48
const char *html_svg__fixed(char *buf, double v, int decimals);

#endif
