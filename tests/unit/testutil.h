/* testutil.h - helpers shared by the Check unit tests. */
#ifndef PERFKIT_TESTUTIL_H
#define PERFKIT_TESTUTIL_H

#include <check.h>

/* A fresh path in a per-test temporary folder (the file does not exist yet).
 * The returned string is static storage valid until the next call. */
const char *testutil_tmp_path(const char *name);
/* Path of a file under tests/data. */
const char *testutil_data_path(const char *name);
/* Run every test of the suite; the process exit status: 1 if any failed. */
int testutil_run(Suite *suite);

#endif
