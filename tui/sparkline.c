/* sparkline.c - the rate history ring and its glyphs (sparkline.h). */
#include "sparkline.h"

#include <string.h>

#include "prof/saturate.h"

static size_t slot(int64_t bucket)
{
	int64_t m = bucket % SPARK_RING_LEN;

	return (size_t)(m < 0 ? m + SPARK_RING_LEN : m);
}

void spark_ring__init(struct spark_ring *r)
{
	memset(r, 0, sizeof *r);
}

void spark_ring__add(struct spark_ring *r, int64_t bucket, int64_t value)
{
	if (!r->started) {
		r->started = true;
		r->head = bucket;
	} else if (bucket > r->head) {
		int64_t gap = bucket - r->head;

		/* clear the slots the head passes over: they hold older buckets */
		if (gap >= SPARK_RING_LEN)
			memset(r->v, 0, sizeof r->v);
		else
			for (int64_t b = r->head + 1; b <= bucket; b++)
				r->v[slot(b)] = 0;
		r->head = bucket;
	} else if (bucket <= r->head - SPARK_RING_LEN) {
		return;
	}
	r->v[slot(bucket)] = prof_add_saturated(r->v[slot(bucket)], value);
}

int64_t spark_ring__get(const struct spark_ring *r, int64_t bucket)
{
	if (!r->started || bucket > r->head || bucket <= r->head - SPARK_RING_LEN)
		return 0;
	return r->v[slot(bucket)];
}

void spark_ring__window(const struct spark_ring *r, int64_t last, int n, int64_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = spark_ring__get(r, last - n + 1 + i);
}

size_t sparkline__render(const int64_t *v, int n, bool utf8, char *out, size_t cap)
{
	int64_t max = 0;

	for (int i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	return sparkline__render_max(v, n, max, utf8, out, cap);
}

size_t sparkline__render_max(const int64_t *v, int n, int64_t max, bool utf8, char *out, size_t cap)
{
	static const char *const bars[8] = {
		"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588",
	};
	static const char ascii[8] = { '.', ',', ':', '-', '=', '+', '*', '#' };
	size_t used = 0;

	if (!cap)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *glyph;
		char one[2] = { ' ', '\0' };
		size_t len;

		if (v[i] > 0) {
			/* any non-zero bucket shows at least the lowest bar */
			int level = v[i] >= max ? 7 : (int)((double)v[i] * 7.0 / (double)max + 0.5);

			one[0] = ascii[level];
			glyph = utf8 ? bars[level] : one;
		} else {
			glyph = one;
		}
		len = strlen(glyph);
		if (used + len + 1 > cap)
			break;
		memcpy(out + used, glyph, len);
		used += len;
	}
	out[used] = '\0';
	return used;
}
