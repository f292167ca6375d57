/* store_kept.c - what readers above libprof keep for one connection
 * (prof_store__keep): a short list, as a reader keeps a thing or two. */
#include <stdlib.h>

#include "store_impl.h"

struct store_kept {
	const void *key;
	void *value;
	void (*done)(void *value);
	struct store_kept *next;
};

int prof_store__keep(struct prof_store *s, const void *key, void *value, void (*done)(void *value),
		     struct prof_error *err)
{
	struct store_kept *k;

	for (k = s->kept; k; k = k->next)
		if (k->key == key)
			break;
	if (!k) {
		k = calloc(1, sizeof *k);
		if (!k)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		k->key = key;
		k->next = s->kept;
		s->kept = k;
	} else if (k->done && k->value != value) {
		k->done(k->value);
	}
	k->value = value;
	k->done = done;
	return 0;
}

void *prof_store__kept(const struct prof_store *s, const void *key)
{
	for (const struct store_kept *k = s->kept; k; k = k->next)
		if (k->key == key)
			return k->value;
	return NULL;
}

void store__drop_kept(struct prof_store *s)
{
	while (s->kept) {
		struct store_kept *k = s->kept;

		s->kept = k->next;
		if (k->done)
			k->done(k->value);
		free(k);
	}
}
