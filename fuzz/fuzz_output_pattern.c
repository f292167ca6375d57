/* fuzz_output_pattern.c - `perfkit run -o PATTERN`: the output name patterns
 * (%h host, %p pid, %r rank, %q{VAR}, %%) expanded by
 * prof_output_pattern__expand.
 *
 * The first byte is the size of the buffer the name is written into (0 to
 * 255, allocated to the byte so that AddressSanitizer sees one byte too
 * many); the rest is NUL-separated words: the pattern, the host name, the
 * pid in decimal, then the environment as NAME=VALUE words, looked up as
 * getenv looks them up. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "prof/job_env.h"

#define MAX_WORDS 64

struct words {
	const char *w[MAX_WORDS];
	int n;
};

/* getenv over the words from the fourth on: the first NAME=VALUE whose
 * NAME is name. */
static const char *words_env(const char *name, void *ctx)
{
	const struct words *w = ctx;
	size_t len = strlen(name);

	for (int i = 3; i < w->n; i++)
		if (strncmp(w->w[i], name, len) == 0 && w->w[i][len] == '=')
			return w->w[i] + len + 1;
	return NULL;
}

static int count_char(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* Whether part (len bytes) is one of the '/'-separated parts of pattern. */
static bool pattern_has_part(const char *pattern, const char *part, size_t len)
{
	for (const char *p = pattern;; p++) {
		size_t plen = strcspn(p, "/");

		if (plen == len && strncmp(p, part, len) == 0)
			return true;
		p += plen;
		if (!*p)
			return false;
	}
}

/* A value names a file, never a folder: the name has no '/' the pattern
 * did not write, and no part of it is "." or ".." unless the pattern wrote
 * that part itself. */
static void check_name(const char *pattern, const char *name)
{
	FUZZ_CHECK(count_char(name, '/') <= count_char(pattern, '/'));
	for (const char *p = name;; p++) {
		size_t len = strcspn(p, "/");

		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			FUZZ_CHECK(pattern_has_part(pattern, p, len));
		p += len;
		if (!*p)
			break;
	}
}

/* The message perfkit prints as it is: "-o: ..." on one line of printable
 * text (bytes of UTF-8 names pass). */
static void check_message(const struct prof_error *err)
{
	FUZZ_CHECK(err->code == PROF_E_USAGE);
	FUZZ_CHECK(strncmp(err->msg, "-o: ", 4) == 0);
	for (const char *c = err->msg; *c; c++)
		FUZZ_CHECK((unsigned char)*c >= 0x80 || isprint((unsigned char)*c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_error err = { 0 };
	struct words w = { .n = 0 };
	struct prof_pattern_values v;
	char *text, *buf;
	size_t cap;
	int rc;

	if (size < 1)
		return 0;
	cap = data[0];
	text = fuzz_string(data + 1, size - 1);
	buf = malloc(cap ? cap : 1);
	if (!text || !buf) {
		free(text);
		free(buf);
		return 0;
	}
	for (size_t at = 0; at < size - 1 && w.n < MAX_WORDS; at += strlen(text + at) + 1)
		w.w[w.n++] = text + at;
	for (int i = w.n; i < 3; i++)
		w.w[i] = "";
	v = (struct prof_pattern_values){ w.w[1], strtol(w.w[2], NULL, 10), words_env, &w };
	rc = prof_output_pattern__expand(w.w[0], &v, buf, cap, &err);
	if (rc == 0) {
		FUZZ_CHECK(cap > 0 && strlen(buf) < cap);
		check_name(w.w[0], buf);
	} else {
		check_message(&err);
	}
	free(text);
	free(buf);
	return 0;
}
