/* nccl_names.c - what NCCL's kernel and API names say (nccl.h): the kind
 * of collective, the reduction operation, the datatype, the algorithm and
 * the protocol of a kernel, the kind of an API call; and the bus bandwidth
 * factors of nccl-tests (doc/PERFORMANCE.md there).
 *
 * Kernel names since NCCL 2.19: ncclDevKernel_<Kind>[_<Op>_<type>]_<ALGO>_<PROTO>
 * (ncclDevKernel_AllReduce_Sum_f32_RING_LL), ncclDevKernel_SendRecv, and
 * ncclDevKernel_Generic for a launch that runs several kinds. Before it:
 * ncclKernel_<Kind>_<ALGO>_<PROTO>_<Op>_<C type> (ncclKernel_AllReduce_RING_LL_Sum_float,
 * ..._Sum___nv_bfloat16). The name is read as '_'-separated words, so
 * "LL" is never found inside "All". */
#include <stdio.h>
#include <string.h>

#include "nccl.h"

static const char *const kind_names[NCCL_KIND__COUNT] = {
	[NCCL_KIND_UNKNOWN] = "unknown", [NCCL_ALL_REDUCE] = "AllReduce",
	[NCCL_ALL_GATHER] = "AllGather", [NCCL_REDUCE_SCATTER] = "ReduceScatter",
	[NCCL_BROADCAST] = "Broadcast", [NCCL_REDUCE] = "Reduce", [NCCL_SEND_RECV] = "SendRecv",
	[NCCL_ALL_TO_ALL] = "AllToAll",
};

const char *nccl_kind__name(enum nccl_kind k)
{
	return k > NCCL_KIND_UNKNOWN && k < NCCL_KIND__COUNT ? kind_names[k] : "unknown";
}

static enum nccl_kind kind_of_word(const char *w, size_t n)
{
	static const struct { const char *word; enum nccl_kind kind; } words[] = {
		{ "AllReduce", NCCL_ALL_REDUCE }, { "AllGather", NCCL_ALL_GATHER },
		{ "ReduceScatter", NCCL_REDUCE_SCATTER }, { "Broadcast", NCCL_BROADCAST },
		{ "Reduce", NCCL_REDUCE }, { "SendRecv", NCCL_SEND_RECV }, { "Send", NCCL_SEND_RECV },
		{ "Recv", NCCL_SEND_RECV }, { "AllToAll", NCCL_ALL_TO_ALL }, { "Alltoall", NCCL_ALL_TO_ALL },
	};

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i].word) == n && strncmp(words[i].word, w, n) == 0)
			return words[i].kind;
	return NCCL_KIND_UNKNOWN;
}

static bool word_in(const char *w, size_t n, const char *const *list, const char **canon)
{
	for (size_t i = 0; list[i]; i += 2)
		if (strlen(list[i]) == n && strncmp(list[i], w, n) == 0) {
			*canon = list[i + 1];
			return true;
		}
	return false;
}

/* word, canonical form */
static const char *const ops[] = {
	"Sum", "Sum", "Prod", "Prod", "Min", "Min", "Max", "Max", "MinMax", "MinMax",
	"PreMulSum", "PreMulSum", "SumPostDiv", "SumPostDiv", "Avg", "Avg", NULL,
};
static const char *const dtypes[] = {
	"i8", "i8", "u8", "u8", "i32", "i32", "u32", "u32", "i64", "i64", "u64", "u64",
	"f16", "f16", "bf16", "bf16", "f32", "f32", "f64", "f64", "f8e4m3", "f8e4m3",
	"f8e5m2", "f8e5m2",
	/* the C types of older names ("int8_t" reads as "int8", then "t") */
	"int8", "i8", "uint8", "u8", "int32", "i32", "uint32", "u32", "int64", "i64",
	"uint64", "u64", "half", "f16", "float", "f32", "double", "f64", "bfloat16", "bf16",
	"char", "i8", NULL,
};
static const char *const protos[] = { "LL", "LL", "LL128", "LL128", "SIMPLE", "SIMPLE", NULL };
static const char *const algos[] = {
	"RING", "RING", "TREE", "TREE", "NVLS", "NVLS", "PAT", "PAT", "COLLNET", "COLLNET", NULL,
};

static void set(char *dst, size_t cap, const char *v)
{
	snprintf(dst, cap, "%s", v);
}

bool nccl_kernel__parse(const char *name, struct nccl_kernel_name *out)
{
	static const char *const prefixes[] = { "ncclDevKernel_", "ncclKernel_" };
	const char *p = NULL, *end;

	memset(out, 0, sizeof *out);
	if (!name)
		return false;
	for (size_t i = 0; i < 2 && !p; i++) {
		p = strstr(name, prefixes[i]);
		if (p)
			p += strlen(prefixes[i]);
	}
	if (!p) {
		/* NCCL before 2.7: ncclAllReduceRingLLKernel_sum_f32 */
		return strncmp(name, "nccl", 4) == 0 && strstr(name, "Kernel") != NULL;
	}
	end = p + strcspn(p, "(<");
	while (p < end) {
		size_t n = strcspn(p, "_(<");
		const char *canon;

		if (p + n > end)
			n = (size_t)(end - p);
		if (n == 0) {
			p++;
			continue;
		}
		if (!out->kind && kind_of_word(p, n))
			out->kind = kind_of_word(p, n);
		else if (word_in(p, n, ops, &canon) && !out->op[0])
			set(out->op, sizeof out->op, canon);
		else if (word_in(p, n, dtypes, &canon) && !out->dtype[0])
			set(out->dtype, sizeof out->dtype, canon);
		else if (word_in(p, n, protos, &canon))
			set(out->proto, sizeof out->proto, canon);
		else if (word_in(p, n, algos, &canon)) {
			const char *next = p + n + 1;

			set(out->algo, sizeof out->algo, canon);
			/* COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE */
			if (p + n < end && (!strncmp(next, "DIRECT", 6) || !strncmp(next, "CHAIN", 5) ||
					    (!strcmp(canon, "NVLS") && !strncmp(next, "TREE", 4)))) {
				size_t m = strcspn(next, "_(<");

				snprintf(out->algo, sizeof out->algo, "%s_%.*s", canon, (int)m, next);
				n += 1 + m;
			}
		}
		p += n;
	}
	return true;
}

enum nccl_kind nccl_call__kind(const char *range_name)
{
	if (!range_name || strncmp(range_name, "nccl", 4) != 0)
		return NCCL_KIND_UNKNOWN;
	return kind_of_word(range_name + 4, strlen(range_name + 4));
}

double nccl_busbw_factor(enum nccl_kind kind, int nranks)
{
	double n = nranks;

	if (nranks < 1)
		return 0;
	switch (kind) {
	case NCCL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case NCCL_ALL_GATHER:
	case NCCL_REDUCE_SCATTER:
	case NCCL_ALL_TO_ALL:
		return (n - 1) / n;
	case NCCL_BROADCAST:
	case NCCL_REDUCE:
	case NCCL_SEND_RECV:
		return 1;
	default:
		return 0;
	}
}

static const struct {
	int64_t max_bytes;
	const char *label;
} size_buckets[NCCL_SIZE_BUCKETS] = {
	{ 4096, "<= 4 KiB" },
	{ 65536, "4-64 KiB" },
	{ 1048576, "64 KiB-1 MiB" },
	{ 16777216, "1-16 MiB" },
	{ 268435456, "16-256 MiB" },
	{ INT64_MAX, "> 256 MiB" },
};

int nccl_size_bucket(int64_t bytes)
{
	if (bytes < 0)
		return NCCL_SIZE_BUCKETS;
	for (int i = 0; i < NCCL_SIZE_BUCKETS; i++)
		if (bytes <= size_buckets[i].max_bytes)
			return i;
	return NCCL_SIZE_BUCKETS - 1;
}

const char *nccl_size_bucket__label(int bucket)
{
	return bucket >= 0 && bucket < NCCL_SIZE_BUCKETS ? size_buckets[bucket].label : "unknown";
}
