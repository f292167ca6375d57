/* python_names.c - the names the Python parts of the collector record
 * (modules, functions, files), interned once on the thread that sees them
 * and read by index on the writer thread, which turns each into a StringIds
 * id the first time it writes it. A lock guards both: names are few and
 * each is interned once, so it is taken rarely after warm-up. */
#include "python_runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "prof/strmap.h"

static struct {
	pthread_mutex_t lock;
	struct prof_strmap map; /* text -> index */
	char **texts;           /* by index - 1 */
	size_t used, cap;
	int64_t *string_ids;    /* by index: its StringIds id, 0 until written */
	size_t string_ids_cap;  /* (writer thread only) */
} names = { .lock = PTHREAD_MUTEX_INITIALIZER };

int32_t python_names__intern(const char *text, size_t len)
{
	int64_t idx = 0;
	uint64_t hash;
	char *copy;

	if (memchr(text, '\0', len))
		len = strlen(text);
	hash = prof_strmap__hash(text, len);
	pthread_mutex_lock(&names.lock);
	if (prof_strmap__find(&names.map, text, len, hash, &idx))
		goto out;
	idx = 0;
	if (names.used == names.cap) {
		size_t cap = names.cap ? names.cap * 2 : 256;
		char **t = realloc(names.texts, cap * sizeof *t);

		if (!t)
			goto out;
		names.texts = t;
		names.cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		goto out;
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (prof_strmap__add(&names.map, text, len, hash, (int64_t)names.used + 1) < 0) {
		free(copy);
		goto out;
	}
	names.texts[names.used++] = copy;
	idx = (int64_t)names.used;
out:
	pthread_mutex_unlock(&names.lock);
	return (int32_t)idx;
}

const char *python_names__text(int32_t idx)
{
	const char *t = NULL;

	pthread_mutex_lock(&names.lock);
	if (idx > 0 && (size_t)idx <= names.used)
		t = names.texts[idx - 1];
	pthread_mutex_unlock(&names.lock);
	return t;
}

int64_t python_names__string_id(struct prof_writer *w, int32_t idx)
{
	const char *text;

	if (idx <= 0)
		return 0;
	if ((size_t)idx >= names.string_ids_cap) {
		size_t cap = names.string_ids_cap ? names.string_ids_cap : 256;
		int64_t *ids;

		while (cap <= (size_t)idx)
			cap *= 2;
		ids = realloc(names.string_ids, cap * sizeof *ids);
		if (!ids)
			return 0;
		memset(ids + names.string_ids_cap, 0, (cap - names.string_ids_cap) * sizeof *ids);
		names.string_ids = ids;
		names.string_ids_cap = cap;
	}
	if (!names.string_ids[idx]) {
		text = python_names__text(idx);
		names.string_ids[idx] = text ? prof_writer__string(w, text) : 0;
	}
	return names.string_ids[idx];
}
