/* folded_table.c - the table of unique folded stacks: merging equal stacks,
 * the frame-wise order they are printed in, frame names made safe, and the
 * folded text itself. */
#include "folded_impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/saturate.h"
#include "prof/error.h"

int folded_weight__parse(const char *name)
{
	if (name && strcmp(name, "gpu") == 0)
		return FOLDED_WEIGHT_GPU;
	if (name && strcmp(name, "api") == 0)
		return FOLDED_WEIGHT_API;
	return -1;
}

char *folded_frame__sanitize(const char *s)
{
	size_t len = s ? strlen(s) : 0, cap = len * 3 + 1;
	char *flat, *out;

	if (len == 0)
		return strdup("[unnamed]");
	flat = malloc(len + 1);
	out = malloc(cap);
	if (!flat || !out) {
		free(flat);
		free(out);
		return NULL;
	}
	/* Line breaks read better as spaces than as the terminal's '?'. */
	for (size_t i = 0; i <= len; i++)
		flat[i] = s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i];
	prof_sanitize_term(out, cap, flat);
	free(flat);
	/* ';' is ASCII, so it is never part of a multi-byte sequence. */
	for (char *p = out; (p = strchr(p, ';')) != NULL; p++)
		*p = ':';
	return out;
}

/* FNV-1a: short keys, no adversary to defend against (a capture can only
 * make its own export slower). */
static uint64_t hash_key(const char *key, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int stack_table__init(struct stack_table *t, struct folded_stacks *st)
{
	memset(st, 0, sizeof *st);
	t->st = st;
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	t->hashes = NULL;
	return t->slots ? 0 : PROF_E_NOMEM;
}

static int grow_slots(struct stack_table *t)
{
	size_t nslots = t->nslots * 2;
	size_t *slots = calloc(nslots, sizeof *slots);

	if (!slots)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < t->st->n; i++) {
		size_t j = t->hashes[i] & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static int append_stack(struct stack_table *t, const char *key, size_t len, uint64_t h)
{
	struct folded_stacks *st = t->st;
	size_t depth = 1;

	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct folded_stack *v = realloc(st->v, cap * sizeof *v);
		uint64_t *hashes;

		if (!v)
			return PROF_E_NOMEM;
		st->v = v;
		hashes = realloc(t->hashes, cap * sizeof *hashes);
		if (!hashes)
			return PROF_E_NOMEM;
		t->hashes = hashes;
		st->cap = cap;
	}
	st->v[st->n].frames = malloc(len + 1);
	if (!st->v[st->n].frames)
		return PROF_E_NOMEM;
	memcpy(st->v[st->n].frames, key, len);
	st->v[st->n].frames[len] = '\0';
	st->v[st->n].weight = 0;
	t->hashes[st->n] = h;
	for (size_t i = 0; i < len; i++)
		depth += key[i] == ';';
	if (depth > st->max_depth)
		st->max_depth = depth;
	st->n++;
	return 0;
}

int stack_table__add(struct stack_table *t, const char *key, size_t len, int64_t weight_ns)
{
	uint64_t h = hash_key(key, len);
	size_t j = h & (t->nslots - 1);
	int rc;

	while (t->slots[j]) {
		struct folded_stack *s = &t->st->v[t->slots[j] - 1];

		if (t->hashes[t->slots[j] - 1] == h && strncmp(s->frames, key, len) == 0 &&
		    s->frames[len] == '\0') {
			s->weight = prof_add_saturated(s->weight, weight_ns);
			t->st->total_ns = prof_add_saturated(t->st->total_ns, weight_ns);
			return 0;
		}
		j = (j + 1) & (t->nslots - 1);
	}
	rc = append_stack(t, key, len, h);
	if (rc < 0)
		return rc;
	t->slots[j] = t->st->n;
	t->st->v[t->st->n - 1].weight = weight_ns;
	t->st->total_ns = prof_add_saturated(t->st->total_ns, weight_ns);
	/* keep the load under 1/2 so probes stay short */
	return t->st->n * 2 > t->nslots ? grow_slots(t) : 0;
}

/* Byte order with ';' below every other byte and the end of the string
 * below ';': a stack sorts directly before the stacks it is a prefix of,
 * and all stacks under one frame are contiguous. */
static int frame_cmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct folded_stack *)a)->frames;
	const unsigned char *y = (const unsigned char *)((const struct folded_stack *)b)->frames;

	for (;; x++, y++) {
		int cx = *x == ';' ? 1 : *x, cy = *y == ';' ? 1 : *y;

		if (cx != cy)
			return cx - cy;
		if (!*x)
			return 0;
	}
}

void stack_table__finish(struct stack_table *t)
{
	free(t->slots);
	free(t->hashes);
	t->slots = NULL;
	t->hashes = NULL;
	if (t->st->n > 1)
		qsort(t->st->v, t->st->n, sizeof *t->st->v, frame_cmp);
}

void folded_stacks__exit(struct folded_stacks *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->v[i].frames);
	free(st->v);
	memset(st, 0, sizeof *st);
}

int folded__write(const struct folded_stacks *st, FILE *out)
{
	for (size_t i = 0; i < st->n; i++)
		fprintf(out, "%s %" PRId64 "\n", st->v[i].frames, st->v[i].weight);
	return ferror(out) ? PROF_E_IO : 0;
}
