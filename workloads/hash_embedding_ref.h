/* hash_embedding_ref.h - inputs and CPU reference of the hash embedding
 * workload (seed 000): rows of species records belong to plots; each row's
 * species key is hashed into one of HE_HASH_DIM buckets of its plot (feature
 * hashing, weighted by abundance), and every plot looks up HE_TABLES
 * embeddings (top-k genus and top-k family ids, one table per k).
 *
 * Plain C: the host program, the unit tests and the GPU check share it. */
#ifndef HASH_EMBEDDING_REF_H
#define HASH_EMBEDDING_REF_H

#include <stddef.h>
#include <stdint.h>

#define HE_TOP_K 4
#define HE_TABLES (2 * HE_TOP_K)   /* tables 0..3 genus, 4..7 family */
#define HE_EMB_DIM 32              /* floats per embedding row */
#define HE_HASH_DIM 64             /* buckets per plot (a power of two) */
#define HE_GENUS_VOCAB 2048
#define HE_FAMILY_VOCAB 512
#define HE_MIN_PLOT_ROWS 8         /* rows per plot drawn from [8, 24] */
#define HE_MAX_PLOT_ROWS 24
/* Up to this many rows the shared-memory kernel wins (the seed's auto rule:
 * the shared variant only for tiny inputs, basic for medium and large). */
#define HE_SHARED_MAX_ROWS 16384

/* One batch as the data loader yields it: separate arrays, one per field,
 * which is what the naive pipeline copies one by one. */
struct he_batch {
	int rows, plots;
	uint32_t *keys;            /* [rows] species key */
	float *weights;            /* [rows] abundance, in (0, 1] */
	uint32_t *plot;            /* [rows] plot of the row, nondecreasing */
	uint32_t *ids;             /* [HE_TABLES][plots]: id into table t */
};

/* Where each field sits in the collated buffer (byte offsets): the one
 * contiguous block the optimized pipeline copies in a single transfer. */
struct he_layout {
	size_t keys, weights, plot, ids, total_bytes;
};

int he_batch__new(struct he_batch *b, int rows, uint64_t seed);
void he_batch__delete(struct he_batch *b);

void he_layout__init(struct he_layout *l, int rows, int plots);
/* Copy the batch's fields into dst (l->total_bytes, laid out as l says). */
void he_batch__collate(const struct he_batch *b, const struct he_layout *l, void *dst);

/* The bucket of a key; the device code uses the same function (the GPU
 * check proves they agree). */
uint32_t he_hash_bucket(uint32_t key);

/* Embedding tables: table t starts at row he_table_row0(t) of one block of
 * he_total_vocab() rows of HE_EMB_DIM floats. */
int he_table_vocab(int t);
int he_table_row0(int t);
int he_total_vocab(void);
void he_tables_init(float *tables, uint64_t seed);

/* CPU reference in double: hashed[plots][HE_HASH_DIM] (zeroed here) and
 * looked-up features out[plots][HE_TABLES * HE_EMB_DIM]. */
void he_hash_ref(const struct he_batch *b, double *hashed);
void he_lookup_ref(const struct he_batch *b, const float *tables, double *out);
/* The single-precision CPU implementation (the CPU column of the CPU-vs-GPU
 * table): the same arithmetic as the device code, hashed zeroed here. */
void he_hash_cpu(const struct he_batch *b, float *hashed);
/* How many rows fell into each bucket, over all plots. */
void he_bucket_counts(const struct he_batch *b, uint64_t counts[HE_HASH_DIM]);

/* The kernel --kernel=auto picks for this many rows: "shared" or "basic". */
const char *he_auto_kernel(int rows);

#endif
