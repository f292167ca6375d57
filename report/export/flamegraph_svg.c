/* flamegraph_svg.c - folded stacks drawn as a flame graph in one inline SVG
 * element, for the HTML report. No scripts: every frame carries a <title>,
 * which browsers show as a tooltip, and its label is cut to the width it
 * has. Layout follows flamegraph.pl: stacks in frame order, each frame as
 * wide as the summed weight of the stacks under it, root at the bottom. */
#include "folded.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/units.h"

#define FG_WIDTH 1200.0
#define FG_FRAME_H 17
#define FG_PAD 4
#define FG_MIN_PX 0.4     /* narrower frames are left out, as flamegraph.pl does */
#define FG_CHAR_PX 6.6    /* average advance of the 11 px sans-serif font */

struct frame_ref {
	const char *name;
	size_t len;
	double start;   /* cumulative weight where the frame began */
};

/* Positions are shares of the whole, in double: the weights of stacks of
 * long kernels (each held at INT64_MAX) add up past what 64 bits hold, and
 * a drawing needs each frame's share, not its nanosecond. */
struct flame {
	FILE *out;
	double total;
	int height;
};

/* flamegraph.pl's "hot" palette, chosen by the name so a frame keeps its
 * colour wherever it appears. */
static void frame_colour(const char *name, size_t len, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = (int)((h >> 8) % 230);
	*b = (int)((h >> 16) % 55);
}

/* Write name[0..len) escaped, cut to at most max_chars (>= 3) code points
 * with ".." at a character boundary (frames are valid UTF-8). */
static void put_label(FILE *out, const char *name, size_t len, size_t max_chars)
{
	size_t chars = 0, cut = len;
	char *buf;

	for (size_t i = 0; i < len; i++) {
		if (((unsigned char)name[i] & 0xC0) == 0x80)
			continue;
		if (chars == max_chars - 2)
			cut = i;
		chars++;
	}
	if (chars <= max_chars)
		cut = len;
	buf = malloc(cut + 3);
	if (!buf)
		return;
	memcpy(buf, name, cut);
	strcpy(buf + cut, cut < len ? ".." : "");
	prof_fputs_html(out, buf);
	free(buf);
}

static void put_frame(struct flame *f, int level, double start, double end, const char *name,
		      size_t len, bool root)
{
	double x = start / f->total * FG_WIDTH;
	double w = (end - start) / f->total * FG_WIDTH;
	int y = f->height - FG_PAD - (level + 1) * FG_FRAME_H, r = 200, g = 200, b = 200;
	char when[48];
	char *text;

	if (w < FG_MIN_PX)
		return;
	text = malloc(len + 1);
	if (!text)
		return;
	memcpy(text, name, len);
	text[len] = '\0';
	if (!root)
		frame_colour(name, len, &r, &g, &b);
	prof_units__duration_f(when, sizeof when, end - start, PROF_UNITS_FIXED3);
	fputs("<g><title>", f->out);
	prof_fputs_html(f->out, text);
	fprintf(f->out, " (%s, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\"/>", when, 100.0 * (end - start) / f->total,
		x, y, w, FG_FRAME_H - 1, r, g, b);
	if (w >= 3 * FG_CHAR_PX + 6) {
		fprintf(f->out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FG_FRAME_H - 5);
		put_label(f->out, text, len, (size_t)((w - 6) / FG_CHAR_PX));
		fputs("</text>", f->out);
	}
	fputs("</g>\n", f->out);
	free(text);
}

/* Split frames at ';' into refs; returns the count. */
static size_t split_frames(const char *frames, struct frame_ref *refs, size_t cap)
{
	size_t n = 0;

	for (const char *p = frames; n < cap;) {
		const char *semi = strchr(p, ';');

		refs[n].name = p;
		refs[n].len = semi ? (size_t)(semi - p) : strlen(p);
		n++;
		if (!semi)
			break;
		p = semi + 1;
	}
	return n;
}

int flamegraph__write_svg(const struct folded_stacks *st, const char *root_label, FILE *out)
{
	struct flame f = { .out = out };
	size_t depth = st->max_depth ? st->max_depth : 1, nopen = 0;
	struct frame_ref *open = calloc(depth, sizeof *open), *cur = calloc(depth, sizeof *cur);
	double x = 0;

	if (!open || !cur) {
		free(open);
		free(cur);
		return PROF_E_NOMEM;
	}
	for (size_t i = 0; i < st->n; i++)
		f.total += (double)st->v[i].weight;
	f.height = (int)(depth + 1) * FG_FRAME_H + 2 * FG_PAD;
	fprintf(out, "<svg class=\"flame\" viewBox=\"0 0 %.0f %d\" role=\"img\" "
		"font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\">\n",
		FG_WIDTH, f.height);
	for (size_t i = 0; f.total > 0 && i < st->n; i++) {
		size_t n = split_frames(st->v[i].frames, cur, depth), same = 0;

		while (same < n && same < nopen && cur[same].len == open[same].len &&
		       memcmp(cur[same].name, open[same].name, cur[same].len) == 0)
			same++;
		/* frames the new stack leaves end here, innermost first */
		while (nopen > same) {
			nopen--;
			put_frame(&f, (int)nopen + 1, open[nopen].start, x, open[nopen].name,
				  open[nopen].len, false);
		}
		for (; nopen < n; nopen++) {
			open[nopen] = cur[nopen];
			open[nopen].start = x;
		}
		x += (double)st->v[i].weight;
	}
	while (nopen > 0) {
		nopen--;
		put_frame(&f, (int)nopen + 1, open[nopen].start, x, open[nopen].name, open[nopen].len,
			  false);
	}
	if (f.total > 0)
		put_frame(&f, 0, 0, f.total, root_label, strlen(root_label), true);
	fputs("</svg>\n", out);
	free(open);
	free(cur);
	return ferror(out) ? PROF_E_IO : 0;
}
