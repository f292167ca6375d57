/* test_trace_apart.c - the timeline exports with their GPU side (the calls'
 * index, the projection, the GPU queries' sorts) made on a thread and a
 * connection of its own (begun by trace_merge__init), and the Perfetto
 * trace's rows read ahead on a thread of their own (trace_ahead.h), against
 * the same exports made in place on one connection: real captures read
 * from their files (apart) and from memory under the same name (a capture
 * in memory cannot be opened again, so its side is made in place and its
 * rows read in place), the same bytes, for the Chrome and the Perfetto
 * trace, whole and narrowed by --range and --from/--to (whose instances
 * the side's connection indexes for itself). A merge left part-way stops
 * the thread reading ahead and the feed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome_trace.h"
#include "export/perfetto_trace.h"
#include "export/trace_ahead.h"
#include "export/trace_feed.h"
#include "export/trace_merge.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

/* A capture and an NVTX range of it: PyTorch with ranges, a job, two GPUs,
 * managed memory, JAX, nsys exports (saxpy-mpi's runtime calls share
 * correlation ids, which the side finds). */
static const struct {
	const char *path;
	const char *range;
} captures[] = {
	{ "transformer_naive.sqlite", "embedding" },
	{ "ddp/ddp2_even.sqlite", "train_step" },
	{ "ddp/two_gpus/ddp2_even.sqlite", "train_step" },
	{ "corpus/hf_gpt2_train.sqlite", "train_step" },
	{ "corpus/managed_memory.sqlite", "step" },
	{ "corpus/jax_jit_mlp.sqlite", NULL },
	{ "nsys/cloverleaf-cuda.sqlite", NULL },
	{ "nsys/saxpy-mpi-cuda-rank0.sqlite", "saxpy" },
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

enum format { CHROME, PERFETTO };

/* The export of s in format with filter, into memory (*len bytes). */
static char *export_of(struct prof_store *s, enum format format, const struct export_filter *filter,
		       size_t *len)
{
	struct prof_error err = { 0 };
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	FILE *quiet = fopen("/dev/null", "w");
	int rc;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(quiet);
	if (format == CHROME) {
		struct chrome_options o = { .filter = *filter, .warn = quiet };

		rc = chrome_trace__write(s, &o, f, &err);
	} else {
		struct perfetto_options o = { .filter = *filter };

		rc = perfetto_trace__write(s, &o, f, &err);
	}
	ck_assert_msg(rc == 0, "%s (%s): %s", prof_store__path(s), format == CHROME ? "chrome" : "perfetto",
		      err.msg);
	fclose(f);
	fclose(quiet);
	return text;
}

/* The file's export (apart) against the memory copy's (in place). */
static void same_apart_and_in_place(struct prof_store *file, struct prof_store *mem,
				    enum format format, const struct export_filter *filter,
				    const char *what)
{
	size_t apart_len = 0, in_place_len = 0;
	char *apart = export_of(file, format, filter, &apart_len);
	char *in_place = export_of(mem, format, filter, &in_place_len);

	ck_assert_msg(apart_len > 100, "%s: %s: %zu bytes", prof_store__path(file), what, apart_len);
	ck_assert_msg(apart_len == in_place_len && memcmp(apart, in_place, apart_len) == 0,
		      "%s: %s: the trace made apart differs (%zu against %zu bytes)",
		      prof_store__path(file), what, apart_len, in_place_len);
	free(apart);
	free(in_place);
}

START_TEST(test_traces_made_apart_are_the_traces_made_in_place)
{
	struct prof_error why = { 0 };
	int nformats = perfetto_trace__supported(&why) == 0 ? 2 : 1;

	for (size_t i = 0; i < NCAPTURES; i++) {
		const char *path = testutil_data_path(captures[i].path);
		struct prof_store *file = NULL, *mem = NULL;
		struct prof_error err = { 0 };
		struct export_filter whole = { 0 }, range = { .range_name = captures[i].range };
		struct export_filter window = { .has_from = true, .from_ns = 200000000,
						.has_to = true, .to_ns = 900000000 };
		size_t size;
		char *data = testutil_read_file(path, &size);

		ck_assert_msg(prof_store__open(path, &file, &err) == 0, "%s", err.msg);
		ck_assert_msg(prof_store__open_memory(data, size, path, &mem, &err) == 0, "%s", err.msg);
		for (int f = 0; f < nformats; f++) {
			same_apart_and_in_place(file, mem, (enum format)f, &whole, "whole");
			same_apart_and_in_place(file, mem, (enum format)f, &window, "--from/--to");
			if (captures[i].range)
				same_apart_and_in_place(file, mem, (enum format)f, &range, "--range");
		}
		prof_store__close(file);
		prof_store__close(mem);
		free(data);
	}
}
END_TEST

/* Which merges take the GPU side apart: a file's, not a memory copy's
 * (which cannot be opened again). */
START_TEST(test_side_apart_only_where_the_capture_opens_again)
{
	const char *path = testutil_data_path(captures[0].path);
	struct prof_store *file = NULL, *mem = NULL;
	struct prof_error err = { 0 };
	struct trace_merge m;
	size_t size;
	char *data = testutil_read_file(path, &size);

	ck_assert_msg(prof_store__open(path, &file, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open_memory(data, size, path, &mem, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(trace_merge__init(&m, file, NULL, false, &err), 0);
	ck_assert_ptr_nonnull(m.side);
	/* left before open: exit waits for the thread and closes its cursors */
	trace_merge__exit(&m);
	ck_assert_int_eq(trace_merge__init(&m, mem, NULL, false, &err), 0);
	ck_assert_ptr_null(m.side);
	trace_merge__exit(&m);
	prof_store__close(file);
	prof_store__close(mem);
	free(data);
}
END_TEST

/* Whether the merge's sources with a statement are fed (trace_feed.h),
 * every one, or stepped in place, every one. */
static bool sources_fed(const struct trace_merge *m)
{
	int fed = 0, stepped = 0;

	for (int i = 0; i < m->nsrc; i++) {
		if (m->src[i].kind == TM_GPU_NVTX)
			continue;
		fed += m->src[i].fed != 0;
		stepped += m->src[i].fed == 0;
	}
	ck_assert_msg(fed == 0 || stepped == 0, "%d sources fed, %d in place", fed, stepped);
	ck_assert_int_eq(fed > 0, m->feed != NULL);
	return fed > 0;
}

/* n rows of s's merge (every row when n < 0), read ahead when
 * read_ahead; whether a thread read them. *fed: whether its sources were
 * fed. */
static bool merge_rows(struct prof_store *s, bool read_ahead, int n, bool *fed)
{
	struct prof_error err = { 0 };
	struct trace_merge m;
	struct tm_row r;
	bool ahead;
	int rc = 0;

	ck_assert_int_eq(trace_merge__init(&m, s, NULL, true, &err), 0);
	ck_assert_msg(trace_merge__open(&m) == 0, "%s", err.msg);
	*fed = sources_fed(&m);
	if (read_ahead)
		trace_ahead__start(&m);
	ahead = m.ahead != NULL;
	for (int i = 0; (n < 0 || i < n) && (rc = trace_merge__next(&m, &r)) > 0; i++)
		;
	ck_assert_msg(rc >= 0, "%s", err.msg);
	/* left part-way (n rows): exit stops the thread while it reads */
	trace_merge__exit(&m);
	return ahead;
}

/* Which merges read their rows ahead: one a writer asks to, on a file
 * whose side is apart; not a memory copy's. The file's merge feeds every
 * source with a statement (trace_feed.h); the memory copy's, none. */
START_TEST(test_rows_ahead_only_where_asked_and_apart)
{
	const char *path = testutil_data_path(captures[0].path);
	struct prof_store *file = NULL, *mem = NULL;
	struct prof_error err = { 0 };
	size_t size;
	char *data = testutil_read_file(path, &size);

	ck_assert_msg(prof_store__open(path, &file, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open_memory(data, size, path, &mem, &err) == 0, "%s", err.msg);
	bool fed;

	ck_assert(merge_rows(file, true, -1, &fed) && fed);
	ck_assert(merge_rows(file, true, 0, &fed) && fed);
	ck_assert(merge_rows(file, true, 300, &fed) && fed);
	ck_assert(!merge_rows(file, false, -1, &fed) && fed);
	/* left part-way without a reader ahead: exit stops the feed */
	ck_assert(!merge_rows(file, false, 300, &fed) && fed);
	ck_assert(!merge_rows(mem, true, -1, &fed) && !fed);
	prof_store__close(file);
	prof_store__close(mem);
	free(data);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("trace_apart");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_traces_made_apart_are_the_traces_made_in_place);
	tcase_add_test(tc, test_side_apart_only_where_the_capture_opens_again);
	tcase_add_test(tc, test_rows_ahead_only_where_asked_and_apart);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
