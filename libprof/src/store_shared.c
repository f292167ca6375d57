/* store_shared.c - what the connections to one file share
 * (prof_store__shared_take): a store and every store opened again from it
 * (prof_store__reopen) hold one shelf, each value made once under a key
 * and a tag, by whichever connection asks first; another that asks
 * meanwhile waits for it rather than reading the file again. The values
 * live until the last of the connections closes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store_impl.h"

enum { SHARED_MAKING, SHARED_MADE };

struct shared_item {
	const void *key;
	void *tag;
	size_t tag_len;
	int state;
	void *value;
	void (*done)(void *value);
	struct shared_item *next;
};

struct store_shelf {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int refs;
	struct shared_item *items;
};

static struct store_shelf *shelf_of(struct prof_store *s)
{
	struct store_shelf *f;

	if (s->shelf)
		return s->shelf;
	f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	if (pthread_mutex_init(&f->lock, NULL) != 0) {
		free(f);
		return NULL;
	}
	if (pthread_cond_init(&f->changed, NULL) != 0) {
		pthread_mutex_destroy(&f->lock);
		free(f);
		return NULL;
	}
	f->refs = 1;
	s->shelf = f;
	return f;
}

void store__share_shelf(struct prof_store *from, struct prof_store *to)
{
	struct store_shelf *f = shelf_of(from);

	/* without one, each connection reads for itself */
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->refs++;
	pthread_mutex_unlock(&f->lock);
	to->shelf = f;
}

void store__drop_shelf(struct prof_store *s)
{
	struct store_shelf *f = s->shelf;
	int refs;

	if (!f)
		return;
	s->shelf = NULL;
	pthread_mutex_lock(&f->lock);
	refs = --f->refs;
	pthread_mutex_unlock(&f->lock);
	if (refs > 0)
		return;
	while (f->items) {
		struct shared_item *i = f->items;

		f->items = i->next;
		if (i->state == SHARED_MADE && i->done)
			i->done(i->value);
		free(i->tag);
		free(i);
	}
	pthread_cond_destroy(&f->changed);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static struct shared_item *find(struct store_shelf *f, const void *key, const void *tag, size_t tag_len)
{
	for (struct shared_item *i = f->items; i; i = i->next)
		if (i->key == key && i->tag_len == tag_len && !memcmp(i->tag, tag, tag_len))
			return i;
	return NULL;
}

int prof_store__shared_take(struct prof_store *s, const void *key, const void *tag, size_t tag_len,
			    void **value)
{
	struct store_shelf *f = shelf_of(s);
	struct shared_item *i;
	int rc;

	*value = NULL;
	if (!f)
		return PROF_E_NOMEM;
	pthread_mutex_lock(&f->lock);
	while ((i = find(f, key, tag, tag_len)) && i->state == SHARED_MAKING)
		pthread_cond_wait(&f->changed, &f->lock);
	if (i) {
		*value = i->value;
		rc = 1;
	} else {
		struct shared_item *made = calloc(1, sizeof *made);
		void *copy = malloc(tag_len ? tag_len : 1);

		if (made && copy) {
			/* the caller makes it: the others wait for its give or drop */
			memcpy(copy, tag, tag_len);
			*made = (struct shared_item){ .key = key, .tag = copy, .tag_len = tag_len,
						      .state = SHARED_MAKING, .next = f->items };
			f->items = made;
			rc = 0;
		} else {
			free(made);
			free(copy);
			rc = PROF_E_NOMEM;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void prof_store__shared_give(struct prof_store *s, const void *key, const void *tag, size_t tag_len,
			     void *value, void (*done)(void *value))
{
	struct store_shelf *f = s->shelf;
	struct shared_item *i;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	i = find(f, key, tag, tag_len);
	if (i && i->state == SHARED_MAKING) {
		i->value = value;
		i->done = done;
		i->state = SHARED_MADE;
		value = NULL;
	}
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
	/* given twice: the first stays */
	if (value && done)
		done(value);
}

int prof_store__shared_peek(struct prof_store *s, const void *key, const void *tag, size_t tag_len, void **value)
{
	struct store_shelf *f = s->shelf;
	struct shared_item *i;
	int rc = 0;

	*value = NULL;
	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	i = find(f, key, tag, tag_len);
	if (i && i->state == SHARED_MADE) {
		*value = i->value;
		rc = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void prof_store__shared_drop(struct prof_store *s, const void *key, const void *tag, size_t tag_len)
{
	struct store_shelf *f = s->shelf;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	for (struct shared_item **p = &f->items; *p; p = &(*p)->next) {
		struct shared_item *i = *p;

		if (i->key == key && i->tag_len == tag_len && !memcmp(i->tag, tag, tag_len) &&
		    i->state == SHARED_MAKING) {
			*p = i->next;
			free(i->tag);
			free(i);
			break;
		}
	}
	/* a waiter finds none now and makes it itself */
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}
