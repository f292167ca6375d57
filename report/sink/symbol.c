/* symbol.c - short forms of demangled C++ kernel names for text output.
 *
 * Templated libraries (PyTorch, CUTLASS, cuBLASLt) give kernels names of
 * several hundred characters, most of them template arguments and
 * parameter lists. A terminal table needs the function's name and enough
 * of its template to tell instances apart, as flame-graph tools show them:
 * the return type, the namespaces and the parameters go; first-level
 * template arguments stay when they are short and simple (numbers, types,
 * CUTLASS's configuration names), nested ones become "...". */
#include "symbol.h"

#include <stdbool.h>
#include <string.h>

/* The longest first-level template argument kept, and the most text of the
 * arguments after the first kept in all (the first is often the one that
 * names the instance: CUTLASS's configuration, a vector width). */
#define ARG_MAX 64
#define ARGS_MAX 32

static bool starts(const char *s, const char *word)
{
	return strncmp(s, word, strlen(word)) == 0;
}

/* Length of a token at s that must not count as brackets: "(anonymous
 * namespace)" and an operator's name ("operator()", "operator<<", ...). */
static size_t opaque_token(const char *s)
{
	if (starts(s, "(anonymous namespace)"))
		return strlen("(anonymous namespace)");
	if (starts(s, "operator")) {
		size_t n = strlen("operator");
		if (s[n] == '(' && s[n + 1] == ')')
			return n + 2;
		while (s[n] && strchr("<>=!+-*/%&|^~[]", s[n]))
			n++;
		return n;
	}
	return 0;
}

static bool is_open(char c) { return c == '<' || c == '(' || c == '{'; }
static bool is_close(char c) { return c == '>' || c == ')' || c == '}'; }

/* perfkit's own labels ("[CUDA memcpy Host-to-Device]") and C names have
 * nothing to shorten. */
static bool is_declaration(const char *name)
{
	return strchr(name, '(') || strchr(name, '<') || strstr(name, "::");
}

/* The function's part of the name: [*begin, *end) runs from after the
 * return type and namespaces to before the parameter list. */
static void function_part(const char *name, size_t *begin, size_t *end)
{
	int depth = 0;
	size_t i = 0, start = 0;

	while (name[i]) {
		size_t skip = depth == 0 ? opaque_token(name + i) : 0;
		if (skip) {
			i += skip;
			continue;
		}
		char c = name[i];
		if (depth == 0 && c == '(')
			break; /* the parameter list */
		if (is_open(c))
			depth++;
		else if (is_close(c) && depth > 0)
			depth--;
		else if (depth == 0 && c == ' ')
			start = i + 1; /* what came before was the return type */
		else if (depth == 0 && c == ':' && name[i + 1] == ':') {
			start = i + 2; /* a namespace or class */
			i++;
		}
		i++;
	}
	*begin = start;
	*end = i;
}

/* Append text[0..n) to out, keeping room for the terminator. */
static void put(char *out, size_t cap, size_t *len, const char *text, size_t n)
{
	for (size_t i = 0; i < n && *len + 1 < cap; i++)
		out[(*len)++] = text[i];
	out[*len] = 0;
}

/* One first-level template argument: kept when short and without nested
 * brackets, else "...". */
static void put_argument(char *out, size_t cap, size_t *len, const char *arg, size_t n, bool first,
			 size_t *budget)
{
	bool simple;

	while (n && arg[0] == ' ')
		arg++, n--;
	while (n && arg[n - 1] == ' ')
		n--;
	simple = n <= ARG_MAX;
	for (size_t i = 0; simple && i < n; i++)
		if (is_open(arg[i]) || is_close(arg[i]))
			simple = false;
	if (simple && (first || n <= *budget)) {
		put(out, cap, len, arg, n);
		if (!first)
			*budget -= n;
	} else {
		put(out, cap, len, "...", 3);
		*budget = 0;
	}
}

size_t rpt_symbol__shorten(const char *name, char *out, size_t cap)
{
	size_t begin, end, len = 0, i, arg_start = 0, budget = ARGS_MAX;
	int depth = 0;

	if (!cap)
		return 0;
	out[0] = 0;
	if (!name)
		return 0;
	if (!is_declaration(name)) {
		put(out, cap, &len, name, strlen(name));
		return len;
	}
	function_part(name, &begin, &end);
	if (begin >= end) /* not a C++ declaration: keep it */
		begin = 0, end = strlen(name);
	for (i = begin; i < end; i++) {
		size_t skip = depth == 0 ? opaque_token(name + i) : 0;
		char c = name[i];

		if (skip) {
			put(out, cap, &len, name + i, skip);
			i += skip - 1;
			continue;
		}
		if (depth == 0) {
			if (c == '<') {
				put(out, cap, &len, "<", 1);
				arg_start = i + 1;
			} else {
				put(out, cap, &len, &c, 1);
			}
		} else if (depth == 1 && (c == ',' || c == '>') && name[i] != 0) {
			if (budget == 0 && c == ',')
				goto next; /* the rest of the list is already "..." */
			put_argument(out, cap, &len, name + arg_start, i - arg_start,
				     name[arg_start - 1] == '<', &budget);
			put(out, cap, &len, c == ',' ? ", " : ">", c == ',' ? 2 : 1);
			arg_start = i + 1;
		}
next:
		if (is_open(c))
			depth++;
		else if (is_close(c) && depth > 0)
			depth--;
	}
	if (depth > 0) /* a name cut inside its template arguments */
		put(out, cap, &len, "...", 3);
	/* "<4, ..., ...>": a run of elided arguments reads as one */
	for (char *p; (p = strstr(out, "..., ...")) != NULL;)
		memmove(p + 3, p + 8, strlen(p + 8) + 1);
	/* "> >" of old-style nested closings at the end */
	len = strlen(out);
	while (len >= 2 && out[len - 1] == '>' && out[len - 2] == ' ')
		memmove(out + len - 2, out + len - 1, 2), len--;
	return len;
}
