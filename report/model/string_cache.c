/* string_cache.c - StringIds values read once an id (see string_cache.h):
 * the ids met in an id_map, each with its value and the caller's tag. */
#include "model/string_cache.h"

#include "model/id_map.h"

#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"

/* a value met, under its id in the map */
struct cached {
	char *value; /* NULL: StringIds has none */
	int tag;
};

struct string_cache {
	struct prof_store *store;
	struct prof_cursor *ask; /* SELECT value ... WHERE id = ?1 */
	struct id_map ids;       /* id -> struct cached */
	/* an id of another type: its value until the next one */
	char *odd_value;
	int odd_tag;
};

int string_cache__new(struct prof_store *s, struct string_cache **out, struct prof_error *err)
{
	struct string_cache *c = calloc(1, sizeof *c);

	*out = NULL;
	if (!c)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	c->store = s;
	*out = c;
	return 0;
}

/* The value of the id bound to c->ask (NULL where there is none) into
 * *value, a copy of the caller's. */
static int ask(struct string_cache *c, char **value, struct prof_error *err)
{
	const char *text;
	int rc = prof_cursor__next(c->ask, err);

	*value = NULL;
	if (rc < 0)
		return rc;
	text = rc > 0 ? prof_cursor__text(c->ask, 0) : NULL;
	if (text && !(*value = strdup(text)))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	/* done with: a statement left stepping would keep the connection
	 * reading (a temporary table is dropped only while none is) */
	prof_cursor__reset(c->ask);
	return rc < 0 ? rc : 0;
}

/* c->ask ready for a new id */
static int ask_ready(struct string_cache *c, struct prof_error *err)
{
	if (c->ask)
		return 0;
	return prof_cursor__open(c->store, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &c->ask,
				 err);
}

/* An id that is no integer compares with StringIds' as SQLite compares a
 * column of its type: bound as it is, text as text, a real as a real; a
 * blob equals no integer id. */
static int odd_id(struct string_cache *c, struct prof_cursor *cur, int col, const char **value, int **tag,
		  struct prof_error *err)
{
	enum prof_value_kind kind = prof_cursor__kind(cur, col);
	int rc = 0;

	free(c->odd_value);
	c->odd_value = NULL;
	c->odd_tag = -1;
	*tag = &c->odd_tag;
	if (kind == PROF_VALUE_TEXT || kind == PROF_VALUE_REAL) {
		rc = ask_ready(c, err);
		if (rc == 0 && (kind == PROF_VALUE_TEXT ? prof_cursor__bind_text(c->ask, 1, prof_cursor__text(cur, col))
							 : prof_cursor__bind_double(c->ask, 1, prof_cursor__double(cur, col))))
			rc = prof_error__set(err, PROF_E_SQL, "cannot bind a string id");
		if (rc == 0)
			rc = ask(c, &c->odd_value, err);
	}
	*value = c->odd_value;
	return rc;
}

int string_cache__of_column(struct string_cache *c, struct prof_cursor *cur, int col, const char **value,
			    int **tag, struct prof_error *err)
{
	enum prof_value_kind kind = prof_cursor__kind(cur, col);

	*value = NULL;
	if (kind == PROF_VALUE_NULL) {
		c->odd_tag = -1;
		*tag = &c->odd_tag;
		return 0;
	}
	if (kind != PROF_VALUE_INT)
		return odd_id(c, cur, col, value, tag, err);
	return string_cache__of_id(c, prof_cursor__int64(cur, col), value, tag, err);
}

int string_cache__of_id(struct string_cache *c, int64_t id, const char **value, int **tag, struct prof_error *err)
{
	struct cached *e = id_map__get(&c->ids, id);
	int rc;

	*value = NULL;
	if (!e) {
		char *text;

		rc = ask_ready(c, err);
		if (rc == 0 && prof_cursor__bind_int64(c->ask, 1, id) != 0)
			rc = prof_error__set(err, PROF_E_SQL, "cannot bind a string id");
		if (rc == 0)
			rc = ask(c, &text, err);
		if (rc < 0)
			return rc;
		e = malloc(sizeof *e);
		if (!e || id_map__put(&c->ids, id, e) < 0) {
			free(e);
			free(text);
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		*e = (struct cached){ .value = text, .tag = -1 };
	}
	*value = e->value;
	*tag = &e->tag;
	return 0;
}

static void cached__free(void *p)
{
	struct cached *e = p;

	free(e->value);
	free(e);
}

void string_cache__free(struct string_cache *c)
{
	if (!c)
		return;
	id_map__exit(&c->ids, cached__free);
	free(c->odd_value);
	prof_cursor__close(c->ask);
	free(c);
}
