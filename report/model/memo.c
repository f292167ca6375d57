/* memo.c - a connection's memo tables handed to another (memo.h). */
#include "model/memo.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"

static const char *const memo_tables[] = {
	MEMO_RANK_ROWS, MEMO_RANK_ROWS_NOTED, MEMO_ALL_EXTENT, MEMO_REPEATED_CALLS, MEMO_API_NAME_PLACES,
	MEMO_GPU_METRICS_ORDER,
};

int sum_temp__exists(struct prof_store *s, const char *name, bool *yes, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, "SELECT count(*) FROM sqlite_temp_master WHERE name = ?1", &c,
				   err);

	*yes = false;
	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, name);
	rc = prof_cursor__next(c, err);
	if (rc == 1)
		*yes = prof_cursor__int64(c, 0) > 0;
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Each statement sql (?1 the table) finds in from's temporary schema, run
 * on to: the schema keeps a temporary table's as "CREATE TABLE", which
 * would make it in the file (an index follows its table). */
static int replay_schema(struct prof_store *from, struct prof_store *to, const char *sql, const char *table,
			 struct prof_error *err)
{
	static const char table_head[] = "CREATE TABLE ";
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(from, sql, &c, err);

	if (rc == 0)
		prof_cursor__bind_text(c, 1, table);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		const char *made = prof_cursor__text(c, 0);
		char *temp;

		if (!made || strncmp(made, table_head, sizeof table_head - 1) != 0) {
			rc = prof_store__exec(to, made ? made : "", err);
			continue;
		}
		temp = prof_strfmt("CREATE TEMP TABLE %s", made + sizeof table_head - 1);
		rc = temp ? prof_store__exec(to, temp, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");
		free(temp);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Every row of from's table into to's, values as they are. */
static int copy_rows(struct prof_store *from, struct prof_store *to, const char *table, struct prof_error *err)
{
	struct prof_cursor *src = NULL, *dst = NULL;
	char sql[256], *at;
	int rc, ncols;

	snprintf(sql, sizeof sql, "SELECT * FROM temp.%s", table);
	rc = prof_cursor__open(from, sql, &src, err);
	if (rc)
		return rc;
	ncols = prof_cursor__columns(src);
	at = sql + snprintf(sql, sizeof sql, "INSERT INTO temp.%s VALUES (?", table);
	for (int c = 1; c < ncols && at < sql + sizeof sql - 4; c++)
		at += snprintf(at, (size_t)(sql + sizeof sql - at), ", ?");
	snprintf(at, (size_t)(sql + sizeof sql - at), ")");
	rc = prof_cursor__open(to, sql, &dst, err);
	while (rc >= 0 && (rc = prof_cursor__next(src, err)) > 0) {
		for (int c = 0; c < ncols; c++) {
			switch (prof_cursor__kind(src, c)) {
			case PROF_VALUE_INT:
				prof_cursor__bind_int64(dst, c + 1, prof_cursor__int64(src, c));
				break;
			case PROF_VALUE_REAL:
				prof_cursor__bind_double(dst, c + 1, prof_cursor__double(src, c));
				break;
			case PROF_VALUE_TEXT:
				prof_cursor__bind_text(dst, c + 1, prof_cursor__text(src, c));
				break;
			default: /* the memo tables hold no blobs */
				prof_cursor__bind_text(dst, c + 1, NULL);
				break;
			}
		}
		rc = prof_cursor__next(dst, err);
		prof_cursor__reset(dst);
	}
	prof_cursor__close(src);
	prof_cursor__close(dst);
	return rc < 0 ? rc : 0;
}

static int share_one(struct prof_store *from, struct prof_store *to, const char *table, struct prof_error *err)
{
	bool kept, there;
	int rc = sum_temp__exists(from, table, &kept, err);

	if (rc == 0 && kept)
		rc = sum_temp__exists(to, table, &there, err);
	if (rc || !kept || there)
		return rc;
	rc = replay_schema(from, to, "SELECT sql FROM temp.sqlite_master WHERE type = 'table' AND name = ?1", table,
			   err);
	if (rc == 0)
		rc = replay_schema(from, to, "SELECT sql FROM temp.sqlite_master WHERE type = 'index' AND "
				   "tbl_name = ?1 AND sql IS NOT NULL", table, err);
	return rc == 0 ? copy_rows(from, to, table, err) : rc;
}

int sum_memo__share(struct prof_store *from, struct prof_store *to, struct prof_error *err)
{
	/* one transaction: a table half copied, or the rank bounds without
	 * the list of tables they bound, would be taken for an answer */
	int rc = prof_store__exec(to, "BEGIN", err);

	for (size_t i = 0; rc == 0 && i < sizeof memo_tables / sizeof memo_tables[0]; i++)
		rc = share_one(from, to, memo_tables[i], err);
	if (rc == 0)
		return prof_store__exec(to, "COMMIT", err);
	(void)prof_store__exec(to, "ROLLBACK", NULL);
	return rc;
}

int sum_shared__take_value(struct prof_store *s, const void *key, const char *tag, void *v, size_t size)
{
	void *found = NULL;
	int got;

	if (!prof_store__is_finished(s))
		return -1;
	got = prof_store__shared_take(s, key, tag, strlen(tag), &found);
	if (got == 1)
		memcpy(v, found, size);
	return got < 0 ? -1 : got;
}

void sum_shared__give_value(struct prof_store *s, const void *key, const char *tag, const void *v, size_t size,
			    bool found)
{
	void *copy = found ? malloc(size) : NULL;

	if (!copy) {
		prof_store__shared_drop(s, key, tag, strlen(tag));
		return;
	}
	memcpy(copy, v, size);
	prof_store__shared_give(s, key, tag, strlen(tag), copy, free);
}

int sum_shared__value(struct prof_store *s, const void *key, void *v, size_t size,
		      int (*make)(struct prof_store *s, void *v, struct prof_error *err), struct prof_error *err)
{
	int got = prof_store__restricted(s) ? -1 : sum_shared__take_value(s, key, "", v, size);
	int rc;

	if (got == 1)
		return 0;
	rc = make(s, v, err);
	if (got == 0)
		sum_shared__give_value(s, key, "", v, size, rc == 0);
	return rc;
}

bool sum_shared__offer(struct prof_store *s, const void *key, const char *tag, void *value,
		       void (*done)(void *value))
{
	void *known = NULL;

	if (prof_store__shared_take(s, key, tag, strlen(tag), &known) != 0)
		return false;
	prof_store__shared_give(s, key, tag, strlen(tag), value, done);
	return true;
}

bool sum_shared__given(struct prof_store *s, const void *key, const char *tag, const void **value)
{
	void *known = NULL;

	*value = NULL;
	if (!prof_store__is_finished(s) || prof_store__shared_peek(s, key, tag, strlen(tag), &known) != 1 || !known)
		return false;
	*value = known;
	return true;
}

int sum_shared__take(struct prof_store *s, const void *key, const char *tag, int64_t *v, size_t n)
{
	return sum_shared__take_value(s, key, tag, v, n * sizeof *v);
}

void sum_shared__give(struct prof_store *s, const void *key, const char *tag, const int64_t *v, size_t n,
		      bool found)
{
	sum_shared__give_value(s, key, tag, v, n * sizeof *v, found);
}
