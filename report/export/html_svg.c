/* html_svg.c - the time axis and labels of the HTML report's own SVG
 * pictures (html_svg.h). */
#include "html_svg.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "prof/escape.h"

/* A round step (1, 2 or 5 times a power of ten, in ns) giving about
 * want ticks over span_ns. */
static int64_t tick_step(int64_t span_ns, int want)
{
	int64_t raw = span_ns / (want > 0 ? want : 1), step = 1;

	while (step < raw) {
		if (step * 2 >= raw)
			return step * 2;
		if (step * 5 >= raw)
			return step * 5;
		step *= 10;
	}
	return step;
}

void html_svg__time_axis(FILE *out, double x0, double width, double top, double y, int64_t span_ns)
{
	int64_t step;
	bool ms;

	if (span_ns <= 0)
		return;
	step = tick_step(span_ns, 8);
	ms = step >= 100000;
	fprintf(out, "<g class=\"axis\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0, y,
		x0 + width, y);
	for (int64_t t = 0; t <= span_ns; t += step) {
		double x = x0 + width * (double)t / (double)span_ns;

		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">", x, top, x, y + 4, x, y + 16);
		if (t == 0)
			fputs("0", out);
		else if (ms)
			fprintf(out, "%g ms", (double)t / 1e6);
		else
			fprintf(out, "%g us", (double)t / 1e3);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
}

void html_svg__label(FILE *out, double x, double y, double width, const char *name)
{
	/* about 6.2 px a letter at 11 px */
	size_t fit = width > 0 ? (size_t)(width / 6.2) : 0, n = strlen(name);
	char cut[256];

	if (fit < 3)
		return;
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x, y);
	if (n <= fit) {
		prof_fputs_html(out, name);
	} else {
		if (fit > sizeof cut)
			fit = sizeof cut;
		/* cut on a letter, not inside a UTF-8 sequence */
		size_t k = fit - 1;

		while (k > 0 && ((unsigned char)name[k] & 0xC0) == 0x80)
			k--;
		memcpy(cut, name, k);
		cut[k] = '\0';
		prof_fputs_html(out, cut);
		fputs("&hellip;", out);
	}
	fputs("</text>\n", out);
}

const char *html_svg__fixed(char *buf, double v, int decimals)
{
	const double scale = decimals == 1 ? 10.0 : 100.0;
	double s = v * scale, whole = floor(s), frac = s - whole;
	char digits[24], *p = digits + sizeof digits;
	uint64_t n;
	size_t len = 0;

	/* In integers where the digit kept is plainly on one side of a half:
	 * below 1e9 the product is within 2e-7 of v's exact value times the
	 * scale, so a fraction further than 1e-6 from a half rounds as the
	 * exact value does. printf decides the rest: a value near a half
	 * (its exact binary value decides), a negative one or -0 (its sign),
	 * one too large, not finite, or another count of decimals. */
	if ((decimals != 1 && decimals != 2) || !(s >= 0 && s < 1e9) || signbit(v) ||
	    fabs(frac - 0.5) < 1e-6) {
		snprintf(buf, HTML_SVG_FIXED_MAX, "%.*f", decimals, v);
		return buf;
	}
	n = (uint64_t)whole + (frac > 0.5);
	for (int i = 0; i < decimals; i++) {
		*--p = (char)('0' + n % 10);
		n /= 10;
	}
	*--p = '.';
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	len = (size_t)(digits + sizeof digits - p);
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}
