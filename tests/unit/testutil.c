/* testutil.c - temporary paths and fixture lookup for the unit tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[256];
static char path_buf[512];

const char *testutil_tmp_path(const char *name)
{
	if (!tmp_dir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmp_dir, sizeof tmp_dir, "%s/perfkit-test-XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmp_dir)) {
			perror("mkdtemp");
			abort();
		}
	}
	snprintf(path_buf, sizeof path_buf, "%s/%d-%s", tmp_dir, (int)getpid(), name);
	unlink(path_buf);
	return path_buf;
}

const char *testutil_data_path(const char *name)
{
	snprintf(path_buf, sizeof path_buf, "%s/%s", PERFKIT_TEST_DATA, name);
	return path_buf;
}

int testutil_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
