/* testutil.h - helpers shared by the Check unit tests. */
#ifndef PERFKIT_TESTUTIL_H
#define PERFKIT_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <sys/types.h>

/* A fresh path in a per-test temporary folder (the file does not exist yet).
 * The returned string is static storage valid until the next call. */
const char *testutil_tmp_path(const char *name);
/* Path of a file under tests/data (static storage of its own, valid
 * until the next call). */
const char *testutil_data_path(const char *name);
/* Copy the file at from to to (created or emptied first). */
void testutil_copy_file(const char *from, const char *to);
/* The whole file at path, malloc'ed, with a '\0' after its *len bytes. */
char *testutil_read_file(const char *path, size_t *len);
/* Files may grow to bytes from now on (the soft limit, which can be raised
 * again: bytes < 0 lifts it), SIGXFSZ ignored: a write past the limit
 * fails with EFBIG as one past a full disk fails with ENOSPC, with no
 * mount. Each Check test runs in a process of its own. */
void testutil_limit_file_size(off_t bytes);
/* Run sql on the SQLite file at path (created if missing) with the sqlite3
 * command-line tool: tests shape stores in ways the writer never would, and
 * only libprof links SQLite. Fails the test when the tool cannot run or the
 * SQL fails. */
void testutil_sqlite3(const char *path, const char *sql);
/* A copy of the fixture at tests/data/fixture under a fresh path named
 * name, changed by sql (testutil_sqlite3): a real capture damaged or
 * reshaped as a test needs. The path: static storage of its own, valid
 * until the next call. */
const char *testutil_changed_copy(const char *fixture, const char *name, const char *sql);
/* Run every test of the suite; the process exit status: 1 if any failed. */
int testutil_run(Suite *suite);

#endif
