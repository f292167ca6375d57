/* hash_embedding_ref.c - deterministic inputs and the double-precision CPU
 * reference of the hash embedding workload (feature hashing + lookups). */
#include "hash_embedding_ref.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

#define HE_SPECIES 200000 /* distinct species keys rows are drawn from */

int he_batch__new(struct he_batch *b, int rows, uint64_t seed)
{
	struct wl_rng r;
	int plot = 0, left;

	memset(b, 0, sizeof(*b));
	if (rows <= 0)
		return -EINVAL;
	b->rows = rows;
	b->keys = malloc((size_t)rows * sizeof(*b->keys));
	b->weights = malloc((size_t)rows * sizeof(*b->weights));
	b->plot = malloc((size_t)rows * sizeof(*b->plot));
	if (!b->keys || !b->weights || !b->plot)
		goto out_nomem;

	wl_rng_seed(&r, seed);
	/* Plots hold 8 to 24 species records, as in the seed's data (625K
	 * records over 50K plots, 12.5 on average); the last plot takes what
	 * is left. */
	left = HE_MIN_PLOT_ROWS +
	       (int)(wl_rng_u64(&r) % (HE_MAX_PLOT_ROWS - HE_MIN_PLOT_ROWS + 1));
	for (int i = 0; i < rows; i++) {
		if (left == 0) {
			plot++;
			left = HE_MIN_PLOT_ROWS +
			       (int)(wl_rng_u64(&r) % (HE_MAX_PLOT_ROWS - HE_MIN_PLOT_ROWS + 1));
		}
		b->plot[i] = (uint32_t)plot;
		b->keys[i] = (uint32_t)(wl_rng_u64(&r) % HE_SPECIES);
		/* 1 - u keeps abundances away from zero. */
		b->weights[i] = (float)(1.0 - wl_rng_uniform(&r));
		left--;
	}
	b->plots = plot + 1;
	b->ids = malloc((size_t)HE_TABLES * b->plots * sizeof(*b->ids));
	if (!b->ids)
		goto out_nomem;
	for (int t = 0; t < HE_TABLES; t++)
		for (int p = 0; p < b->plots; p++)
			b->ids[(size_t)t * b->plots + p] =
				(uint32_t)(wl_rng_u64(&r) % (uint64_t)he_table_vocab(t));
	return 0;

out_nomem:
	he_batch__delete(b);
	return -ENOMEM;
}

void he_batch__delete(struct he_batch *b)
{
	free(b->keys);
	free(b->weights);
	free(b->plot);
	free(b->ids);
	memset(b, 0, sizeof(*b));
}

/* Fields start on 256-byte boundaries so that every device pointer into the
 * collated buffer is aligned for vector loads. */
static size_t align256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

void he_layout__init(struct he_layout *l, int rows, int plots)
{
	l->keys = 0;
	l->weights = align256(l->keys + (size_t)rows * sizeof(uint32_t));
	l->plot = align256(l->weights + (size_t)rows * sizeof(float));
	l->ids = align256(l->plot + (size_t)rows * sizeof(uint32_t));
	l->total_bytes = align256(l->ids + (size_t)HE_TABLES * plots * sizeof(uint32_t));
}

void he_batch__collate(const struct he_batch *b, const struct he_layout *l, void *dst)
{
	char *d = dst;

	memcpy(d + l->keys, b->keys, (size_t)b->rows * sizeof(uint32_t));
	memcpy(d + l->weights, b->weights, (size_t)b->rows * sizeof(float));
	memcpy(d + l->plot, b->plot, (size_t)b->rows * sizeof(uint32_t));
	memcpy(d + l->ids, b->ids, (size_t)HE_TABLES * b->plots * sizeof(uint32_t));
}

uint32_t he_hash_bucket(uint32_t key)
{
	/* murmur3's 32-bit finalizer: every key bit reaches the low bits
	 * that pick the bucket. */
	uint32_t h = key ^ 0x9747b28cu;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h & (HE_HASH_DIM - 1);
}

int he_table_vocab(int t)
{
	return t < HE_TOP_K ? HE_GENUS_VOCAB : HE_FAMILY_VOCAB;
}

int he_table_row0(int t)
{
	int row = 0;

	for (int i = 0; i < t; i++)
		row += he_table_vocab(i);
	return row;
}

int he_total_vocab(void)
{
	return he_table_row0(HE_TABLES);
}

void he_tables_init(float *tables, uint64_t seed)
{
	struct wl_rng r;
	size_t n = (size_t)he_total_vocab() * HE_EMB_DIM;

	wl_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		tables[i] = (float)(0.1 * wl_rng_normal(&r));
}

void he_hash_ref(const struct he_batch *b, double *hashed)
{
	memset(hashed, 0, (size_t)b->plots * HE_HASH_DIM * sizeof(*hashed));
	for (int i = 0; i < b->rows; i++)
		hashed[(size_t)b->plot[i] * HE_HASH_DIM + he_hash_bucket(b->keys[i])] +=
			b->weights[i];
}

void he_hash_cpu(const struct he_batch *b, float *hashed)
{
	memset(hashed, 0, (size_t)b->plots * HE_HASH_DIM * sizeof(*hashed));
	for (int i = 0; i < b->rows; i++)
		hashed[(size_t)b->plot[i] * HE_HASH_DIM + he_hash_bucket(b->keys[i])] +=
			b->weights[i];
}

void he_lookup_ref(const struct he_batch *b, const float *tables, double *out)
{
	for (int p = 0; p < b->plots; p++)
		for (int t = 0; t < HE_TABLES; t++) {
			const float *row = tables + ((size_t)he_table_row0(t) +
						     b->ids[(size_t)t * b->plots + p]) * HE_EMB_DIM;
			double *dst = out + ((size_t)p * HE_TABLES + t) * HE_EMB_DIM;

			for (int e = 0; e < HE_EMB_DIM; e++)
				dst[e] = row[e];
		}
}

void he_bucket_counts(const struct he_batch *b, uint64_t counts[HE_HASH_DIM])
{
	memset(counts, 0, HE_HASH_DIM * sizeof(*counts));
	for (int i = 0; i < b->rows; i++)
		counts[he_hash_bucket(b->keys[i])]++;
}

const char *he_auto_kernel(int rows)
{
	return rows <= HE_SHARED_MAX_ROWS ? "shared" : "basic";
}
