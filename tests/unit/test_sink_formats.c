/* test_sink_formats.c - the text, CSV and JSON renderers: hostile names
 * (quotes, commas, newlines, <, &, ESC, invalid UTF-8) come out as valid
 * CSV, valid JSON and terminal-safe text; numbers print the same way;
 * kernel names are short in text only; notes follow the table. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/table.h"
#include "testutil.h"

static const char *const hostile[] = {
	"say \"hi\"",
	"a,b",
	"line1\nline2",
	"<script>&amp;",
	"esc\x1b[31mred",
	"bad\xff\xfeutf8",
	"=1+2",
};
#define NHOSTILE ((int)(sizeof hostile / sizeof hostile[0]))

static const struct rpt_column cols[] = {
	{ "Total Time (ns)", RPT_INT, 0 },
	{ "Avg (ns)", RPT_REAL, 1 },
	{ "Name", RPT_TEXT, 0 },
};

/* Render the hostile names as rows (Total = index, Avg = index + 0.25). */
static char *render(enum rpt_format fmt, int nreports)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(fmt, f);

	ck_assert_ptr_nonnull(sink);
	for (int r = 0; r < nreports; r++) {
		ck_assert_int_eq(sink->begin(sink, "test_report", "Test \"Report\"", cols, 3), 0);
		for (int i = 0; i < NHOSTILE; i++) {
			struct rpt_cell cells[3] = {
				{ .i = i }, { .d = i + 0.25 }, { .s = hostile[i] },
			};
			ck_assert_int_eq(sink->row(sink, cells), 0);
		}
		ck_assert_int_eq(sink->end(sink), 0);
	}
	rpt_sink__delete(sink);
	fclose(f);
	return buf;
}

/* RFC 4180 reader: fields[row][col], returns the number of records. */
#define MAXR 64
#define MAXC 4
static int parse_csv(const char *s, char *fields[MAXR][MAXC], int ncols[MAXR])
{
	int nrec = 0;

	while (*s && nrec < MAXR) {
		int c = 0;
		for (;;) {
			char *out = malloc(strlen(s) + 1);
			size_t o = 0;

			if (*s == '"') {
				s++;
				for (;;) {
					ck_assert_msg(*s, "unterminated quoted field");
					if (*s == '"' && s[1] == '"') {
						out[o++] = '"';
						s += 2;
					} else if (*s == '"') {
						s++;
						break;
					} else {
						out[o++] = *s++;
					}
				}
			} else {
				while (*s && *s != ',' && *s != '\r' && *s != '\n') {
					ck_assert_msg(*s != '"', "bare quote inside unquoted field");
					out[o++] = *s++;
				}
			}
			out[o] = '\0';
			fields[nrec][c++] = out;
			if (*s == ',') {
				s++;
				continue;
			}
			ck_assert_msg(*s == '\r' && s[1] == '\n', "record not ended by CRLF");
			s += 2;
			break;
		}
		ncols[nrec++] = c;
	}
	return nrec;
}

static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 0 : (*p >> 5) == 6 ? 1 : (*p >> 4) == 14 ? 2 : (*p >> 3) == 30 ? 3 : -1;
		if (n < 0)
			return 0;
		p++;
		for (int i = 0; i < n; i++, p++)
			if ((*p & 0xC0) != 0x80)
				return 0;
	}
	return 1;
}

START_TEST(sink_csv_round_trips_quotes_and_commas_and_shows_controls_as_text)
{
	char *out = render(RPT_FORMAT_CSV, 1);
	char *f[MAXR][MAXC];
	int nc[MAXR], n = parse_csv(out, f, nc);

	ck_assert_int_eq(n, 1 + NHOSTILE);
	ck_assert_str_eq(f[0][2], "Name");
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(nc[1 + i], 3);
	ck_assert_str_eq(f[1 + 0][2], hostile[0]);
	ck_assert_str_eq(f[1 + 1][2], hostile[1]);
	/* control characters as the text sink shows them: no line break in a
	 * row, no ESC for a terminal that shows the file */
	ck_assert_str_eq(f[1 + 2][2], "line1?line2");
	ck_assert_str_eq(f[1 + 4][2], "esc?[31mred");
	ck_assert_str_eq(f[1 + 3][2], "<script>&amp;");
	ck_assert_str_eq(f[1][0], "0");
	ck_assert_str_eq(f[2][1], "1.2");
	for (int r = 0; r < n; r++)
		for (int c = 0; c < nc[r]; c++) {
			ck_assert_msg(utf8_valid(f[r][c]), "row %d col %d not UTF-8", r, c);
			free(f[r][c]);
		}
	free(out);
}
END_TEST

START_TEST(sink_csv_replaces_invalid_utf8_and_neutralises_formulas)
{
	char *out = render(RPT_FORMAT_CSV, 1);
	char *f[MAXR][MAXC];
	int nc[MAXR], n = parse_csv(out, f, nc);

	ck_assert_ptr_nonnull(strstr(f[1 + 5][2], "\xEF\xBF\xBD"));
	ck_assert_msg(f[1 + 6][2][0] != '=', "formula left for a spreadsheet: %s", f[1 + 6][2]);
	for (int r = 0; r < n; r++)
		for (int c = 0; c < nc[r]; c++)
			free(f[r][c]);
	free(out);
}
END_TEST

START_TEST(sink_csv_separates_reports_by_an_empty_line)
{
	char *out = render(RPT_FORMAT_CSV, 2);
	char *f[MAXR][MAXC];
	int nc[MAXR], n = parse_csv(out, f, nc);

	ck_assert_int_eq(n, 2 * (1 + NHOSTILE) + 1);
	ck_assert_int_eq(nc[1 + NHOSTILE], 1);
	ck_assert_str_eq(f[1 + NHOSTILE][0], "");
	ck_assert_str_eq(f[2 + NHOSTILE][0], "Total Time (ns)");
	for (int r = 0; r < n; r++)
		for (int c = 0; c < nc[r]; c++)
			free(f[r][c]);
	free(out);
}
END_TEST

START_TEST(sink_json_parses_and_keeps_names)
{
	char *out = render(RPT_FORMAT_JSON, 2);
	cJSON *doc = cJSON_Parse(out);
	cJSON *reports, *rep, *rows;

	ck_assert_msg(doc != NULL, "not JSON: %s", out);
	reports = cJSON_GetObjectItemCaseSensitive(doc, "reports");
	ck_assert_int_eq(cJSON_GetArraySize(reports), 2);
	rep = cJSON_GetArrayItem(reports, 1);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rep, "name")->valuestring, "test_report");
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rep, "title")->valuestring,
			 "Test \"Report\"");
	rows = cJSON_GetObjectItemCaseSensitive(rep, "rows");
	ck_assert_int_eq(cJSON_GetArraySize(rows), NHOSTILE);
	for (int i = 0; i < NHOSTILE; i++) {
		cJSON *row = cJSON_GetArrayItem(rows, i);
		const char *name = cJSON_GetObjectItemCaseSensitive(row, "Name")->valuestring;

		ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(row, "Total Time (ns)")->valueint, i);
		ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(row, "Avg (ns)")->valuedouble,
					i + 0.25, 0.051);
		ck_assert_msg(utf8_valid(name), "row %d name not UTF-8", i);
		if (i != 5)
			ck_assert_str_eq(name, hostile[i]);
		else
			ck_assert_ptr_nonnull(strstr(name, "\xEF\xBF\xBD"));
	}
	cJSON_Delete(doc);
	free(out);
}
END_TEST

START_TEST(sink_json_null_and_non_finite_cells_are_null)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_JSON, f);
	struct rpt_cell cells[3] = { { .is_null = true }, { .d = 1.0 / 0.0 }, { .is_null = true } };
	cJSON *doc, *row;

	sink->begin(sink, "r", "R", cols, 3);
	sink->row(sink, cells);
	sink->end(sink);
	rpt_sink__delete(sink);
	fclose(f);
	doc = cJSON_Parse(buf);
	ck_assert_msg(doc != NULL, "not JSON: %s", buf);
	row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "reports"), 0), "rows"), 0);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "Total Time (ns)")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "Avg (ns)")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "Name")));
	cJSON_Delete(doc);
	free(buf);
}
END_TEST

START_TEST(sink_json_is_a_document_even_when_a_report_is_not_ended)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_JSON, f);
	struct rpt_cell cells[3] = { { .i = 1 }, { .d = 2 }, { .s = "x" } };
	cJSON *doc;

	sink->begin(sink, "r", "R", cols, 3);
	sink->row(sink, cells);
	rpt_sink__delete(sink);
	fclose(f);
	doc = cJSON_Parse(buf);
	ck_assert_msg(doc != NULL, "not JSON: %s", buf);
	cJSON_Delete(doc);
	free(buf);
}
END_TEST

START_TEST(sink_json_without_reports_is_an_empty_list)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cJSON *doc;

	rpt_sink__delete(rpt_sink__new(RPT_FORMAT_JSON, f));
	fclose(f);
	doc = cJSON_Parse(buf);
	ck_assert_msg(doc != NULL, "not JSON: %s", buf);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "reports")), 0);
	cJSON_Delete(doc);
	free(buf);
}
END_TEST

START_TEST(sink_text_has_no_control_bytes_and_is_valid_utf8)
{
	char *out = render(RPT_FORMAT_TEXT, 1);

	ck_assert_ptr_null(strchr(out, '\x1b'));
	ck_assert_msg(utf8_valid(out), "text output is not UTF-8");
	/* The embedded newline must not split the row into two lines. */
	ck_assert_ptr_nonnull(strstr(out, "line1?line2"));
	ck_assert_ptr_nonnull(strstr(out, "<script>&amp;"));
	free(out);
}
END_TEST

START_TEST(sink_text_right_aligns_numbers_with_thousands_separators)
{
	static const struct rpt_column c2[] = { { "Total Time (ns)", RPT_INT, 0 },
						{ "Name", RPT_TEXT, 0 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_TEXT, f);
	struct rpt_cell a[2] = { { .i = 1234567 }, { .s = "big" } };
	struct rpt_cell b[2] = { { .i = 5 }, { .s = "small" } };

	sink->begin(sink, "r", "R", c2, 2);
	sink->row(sink, a);
	sink->row(sink, b);
	sink->end(sink);
	rpt_sink__delete(sink);
	fclose(f);
	/* "Total Time (ns)" is 15 wide: numbers end under its last character. */
	ck_assert_msg(strstr(buf, "\n      1,234,567  big\n") != NULL, "got:\n%s", buf);
	ck_assert_msg(strstr(buf, "\n              5  small\n") != NULL, "got:\n%s", buf);
	free(buf);
}
END_TEST

START_TEST(sink_text_streams_rows_beyond_its_buffer)
{
	static const struct rpt_column c1[] = { { "N", RPT_INT, 0 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_TEXT, f);
	int lines = 0;

	sink->begin(sink, "r", "R", c1, 1);
	for (int i = 0; i < 5000; i++) {
		struct rpt_cell c = { .i = i };
		ck_assert_int_eq(sink->row(sink, &c), 0);
	}
	sink->end(sink);
	rpt_sink__delete(sink);
	fclose(f);
	for (char *p = buf; *p; p++)
		lines += *p == '\n';
	/* blank, title, blank, header, rule, 5000 rows */
	ck_assert_int_eq(lines, 5 + 5000);
	ck_assert_ptr_nonnull(strstr(buf, "4,999\n"));
	free(buf);
}
END_TEST

/* Kernel names of tests/data/torch_train.sqlite (sqlite3 CLI): two
 * instances of one template, and a name without template arguments. */
#define FILL_KERNEL                                                                        \
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "  \
	"std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
#define REDUCE_KERNEL(A, B)                                                                  \
	"void at::native::reduce_kernel<" A ", " B ", at::native::ReduceOp<float, at::native::" \
	"func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::"   \
	"TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::" \
	"ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, "      \
	"float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned "   \
	"int, float, 4, 4>)"
static const char *const kernels[] = { FILL_KERNEL, REDUCE_KERNEL("256", "2"),
				       REDUCE_KERNEL("128", "4") };
static const struct rpt_column kernel_cols[] = { { "Instances", RPT_INT, 0 },
						 { "Name", RPT_SYMBOL, 0 } };

/* The kernels as rows of one table, with a note of left_out rows. */
static char *render_kernels(enum rpt_format fmt, bool full_names, int64_t left_out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(fmt, f);

	sink->full_names = full_names;
	ck_assert_int_eq(sink->begin(sink, "kernels", "Kernels", kernel_cols, 2), 0);
	ck_assert_int_eq(rpt_sink__note(sink, &(struct rpt_note){ "rows_left_out", left_out,
								  "3 rows whose end precedes their "
								  "start were left out" }), 0);
	for (int i = 0; i < 3; i++) {
		struct rpt_cell cells[2] = { { .i = i }, { .s = kernels[i] } };
		ck_assert_int_eq(sink->row(sink, cells), 0);
	}
	ck_assert_int_eq(sink->end(sink), 0);
	rpt_sink__delete(sink);
	fclose(f);
	return buf;
}

START_TEST(sink_text_shows_symbols_short_and_unique)
{
	char *out = render_kernels(RPT_FORMAT_TEXT, false, 0);

	ck_assert_msg(strstr(out, "at::native::vectorized_elementwise_kernel<...>\n") &&
		      strstr(out, "at::native::reduce_kernel<256, 2, at::native::ReduceOp<...>>\n") &&
		      strstr(out, "at::native::reduce_kernel<128, 4, at::native::ReduceOp<...>>\n"),
		      "got:\n%s", out);
	ck_assert_ptr_null(strstr(out, "FillFunctor"));
	free(out);
}
END_TEST

START_TEST(sink_text_full_names_prints_symbols_whole)
{
	char *out = render_kernels(RPT_FORMAT_TEXT, true, 0);

	for (int i = 0; i < 3; i++)
		ck_assert_msg(strstr(out, kernels[i]), "missing %s in:\n%s", kernels[i], out);
	free(out);
}
END_TEST

START_TEST(sink_csv_and_json_keep_symbols_whole)
{
	char *csv = render_kernels(RPT_FORMAT_CSV, false, 0);
	char *json = render_kernels(RPT_FORMAT_JSON, false, 0);
	cJSON *doc = cJSON_Parse(json), *rows;

	ck_assert_ptr_nonnull(strstr(csv, "\"" FILL_KERNEL "\""));
	ck_assert_msg(doc != NULL, "not JSON: %s", json);
	rows = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "reports"), 0), "rows");
	for (int i = 0; i < 3; i++)
		ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, i),
								  "Name")->valuestring, kernels[i]);
	cJSON_Delete(doc);
	free(csv);
	free(json);
}
END_TEST

START_TEST(sink_text_symbol_clash_found_while_streaming_tells_the_newcomer_apart)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_TEXT, f);
	char *late;

	sink->begin(sink, "r", "R", kernel_cols, 2);
	/* more rows than the sink buffers, the second instance only at the end */
	for (int i = 0; i < 1000; i++) {
		struct rpt_cell cells[2] = { { .i = i }, { .s = kernels[i < 999 ? 1 : 2] } };
		ck_assert_int_eq(sink->row(sink, cells), 0);
	}
	sink->end(sink);
	rpt_sink__delete(sink);
	fclose(f);
	/* the argument forms tell them apart whenever the clash shows */
	ck_assert_ptr_nonnull(strstr(buf, "   0  at::native::reduce_kernel<...>\n"));
	late = strstr(buf, " 999  ");
	ck_assert_msg(late && strncmp(late + 6, "at::native::reduce_kernel<128, 4, "
				      "at::native::ReduceOp<...>>\n", 58) == 0, "got: %s", late);
	free(buf);
}
END_TEST

START_TEST(sink_text_prints_a_note_under_the_table_only_when_rows_were_left_out)
{
	char *with = render_kernels(RPT_FORMAT_TEXT, false, 3);
	char *without = render_kernels(RPT_FORMAT_TEXT, false, 0);
	const char *note = strstr(with, "note: 3 rows whose end precedes their start were left out\n");

	ck_assert_msg(note && note > strstr(with, "reduce_kernel<128"), "got:\n%s", with);
	ck_assert_ptr_null(strstr(without, "note:"));
	free(with);
	free(without);
}
END_TEST

START_TEST(sink_json_carries_each_note_as_a_field_of_its_report)
{
	char *with = render_kernels(RPT_FORMAT_JSON, false, 3);
	char *without = render_kernels(RPT_FORMAT_JSON, false, 0);
	cJSON *a = cJSON_Parse(with), *b = cJSON_Parse(without);

	ck_assert_msg(a && b, "not JSON: %s / %s", with, without);
	ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "reports"), 0),
		"rows_left_out")->valueint, 3);
	ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(b, "reports"), 0),
		"rows_left_out")->valueint, 0);
	cJSON_Delete(a);
	cJSON_Delete(b);
	free(with);
	free(without);
}
END_TEST

START_TEST(sink_format_names_parse)
{
	ck_assert_int_eq(rpt_format__parse("text"), RPT_FORMAT_TEXT);
	ck_assert_int_eq(rpt_format__parse("csv"), RPT_FORMAT_CSV);
	ck_assert_int_eq(rpt_format__parse("json"), RPT_FORMAT_JSON);
	ck_assert_int_eq(rpt_format__parse("xml"), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sink_formats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sink_csv_round_trips_quotes_and_commas_and_shows_controls_as_text);
	tcase_add_test(tc, sink_csv_replaces_invalid_utf8_and_neutralises_formulas);
	tcase_add_test(tc, sink_csv_separates_reports_by_an_empty_line);
	tcase_add_test(tc, sink_json_parses_and_keeps_names);
	tcase_add_test(tc, sink_json_null_and_non_finite_cells_are_null);
	tcase_add_test(tc, sink_json_is_a_document_even_when_a_report_is_not_ended);
	tcase_add_test(tc, sink_json_without_reports_is_an_empty_list);
	tcase_add_test(tc, sink_text_has_no_control_bytes_and_is_valid_utf8);
	tcase_add_test(tc, sink_text_right_aligns_numbers_with_thousands_separators);
	tcase_add_test(tc, sink_text_streams_rows_beyond_its_buffer);
	tcase_add_test(tc, sink_text_shows_symbols_short_and_unique);
	tcase_add_test(tc, sink_text_full_names_prints_symbols_whole);
	tcase_add_test(tc, sink_csv_and_json_keep_symbols_whole);
	tcase_add_test(tc, sink_text_symbol_clash_found_while_streaming_tells_the_newcomer_apart);
	tcase_add_test(tc, sink_text_prints_a_note_under_the_table_only_when_rows_were_left_out);
	tcase_add_test(tc, sink_json_carries_each_note_as_a_field_of_its_report);
	tcase_add_test(tc, sink_format_names_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
