/* symbol.c - short forms of demangled kernel names, and the names of one
 * table told apart (symbol.h).
 *
 * A demangled name reads "[return type ]scope::name<template args>(params)";
 * scopes may carry their own template arguments or be functions themselves
 * ("f(int)::{lambda()#1}"). The short form keeps the qualified name from
 * after the return type to the parameter list and writes each bracket
 * group inside it as "<...>" or "(...)". Brackets are matched as one
 * depth over <([{ and their closers; the tokens that look like brackets but
 * are not ("(anonymous namespace)", "operator()", "operator<<", ...) are
 * skipped whole. Names come from captures, so nothing here trusts them to
 * be balanced: an unclosed group ends the name. */
#include "symbol.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/error.h"

/* The longest template-argument form used to tell names apart; beyond it a
 * number is shorter to read. */
#define ARGS_FORM_MAX 96

/* ---- output ------------------------------------------------------------ */

/* A bounded buffer that keeps counting what does not fit. */
struct outbuf {
	char *p;
	size_t cap, len;
};

static void put(struct outbuf *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, o->len++)
		if (o->len + 1 < o->cap)
			o->p[o->len] = s[i];
	if (o->cap)
		o->p[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

static void puts_out(struct outbuf *o, const char *s)
{
	put(o, s, strlen(s));
}

/* ---- reading a declaration ---------------------------------------------- */

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool is_open(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
static bool is_close(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

static bool starts(const char *s, size_t n, const char *word)
{
	size_t len = strlen(word);

	return n >= len && memcmp(s, word, len) == 0;
}

/* Length of a token at s[i] that must not count as brackets, 0 if none. */
static size_t opaque_token(const char *s, size_t i, size_t n)
{
	static const char anon[] = "(anonymous namespace)";
	size_t len;

	if (starts(s + i, n - i, anon))
		return sizeof anon - 1;
	if ((i > 0 && is_ident(s[i - 1])) || !starts(s + i, n - i, "operator"))
		return 0;
	len = strlen("operator");
	if (i + len < n && is_ident(s[i + len]))
		return 0; /* "operators", "operator_fn": an identifier */
	if (starts(s + i + len, n - i - len, "()") || starts(s + i + len, n - i - len, "[]"))
		return len + 2;
	while (i + len < n && strchr("<>=!+-*/%&|^~", s[i + len]))
		len++;
	return len;
}

/* Index just past the bracket group that opens at s[i] (or n when it never
 * closes: *closed false). */
static size_t group_end(const char *s, size_t i, size_t n, bool *closed)
{
	int depth = 0;

	while (i < n) {
		size_t skip = opaque_token(s, i, n);

		if (skip) {
			i += skip;
			continue;
		}
		if (is_open(s[i]))
			depth++;
		else if (is_close(s[i]) && --depth == 0) {
			if (closed)
				*closed = true;
			return i + 1;
		}
		i++;
	}
	if (closed)
		*closed = false;
	return n;
}

/* Where the parts of a declaration lie in the name. */
struct decl {
	size_t name_begin, name_end; /* the qualified name, without return type */
	size_t rest;                 /* the text after the declaration */
	size_t args_begin, args_end; /* its last template-argument group; empty: none */
};

static void read_decl(const char *s, size_t n, struct decl *d)
{
	size_t i = 0;

	memset(d, 0, sizeof *d);
	while (i < n) {
		size_t skip = opaque_token(s, i, n), j;
		char c = s[i];

		if (skip) {
			i += skip;
			continue;
		}
		if (c == '<' || c == '[' || c == '{') {
			j = group_end(s, i, n, NULL);
			if (c == '<') {
				d->args_begin = i;
				d->args_end = j;
			}
			i = j;
			continue;
		}
		if (c == '(') {
			j = group_end(s, i, n, NULL);
			if (j + 1 < n && s[j] == ':' && s[j + 1] == ':') {
				i = j; /* a function scope: "f(int)::{lambda()#1}" */
				continue;
			}
			d->name_end = i; /* the parameter list */
			d->rest = j;
			return;
		}
		if (c == ':' && i + 1 < n && s[i + 1] == ':') {
			i += 2;
			continue;
		}
		if (c == ':' || c == ',') { /* a rule's words after the name */
			d->name_end = d->rest = i;
			return;
		}
		if (c == ' ') { /* what came before was the return type */
			d->name_begin = i + 1;
			d->args_begin = d->args_end = 0;
		}
		i++;
	}
	d->name_end = d->rest = n;
}

/* ---- writing the short form -------------------------------------------- */

/* s[b, e) with its <...> and (...) groups elided; a lambda's name, in braces
 * ("{lambda()#1}") or, from older demanglers, in square brackets
 * ("[lambda(int) (instance 1)]"), stays: it is what tells lambdas apart. */
static void elide(struct outbuf *o, const char *s, size_t b, size_t e)
{
	size_t i = b;

	while (i < e) {
		size_t skip = opaque_token(s, i, e), j;
		bool closed;
		char c = s[i];

		if (skip) {
			put(o, s + i, skip);
			i += skip;
			continue;
		}
		if (!is_open(c)) {
			put(o, &c, 1);
			i++;
			continue;
		}
		j = group_end(s, i, e, &closed);
		if (c == '{' || c == '[' || (closed && j == i + 2)) {
			put(o, s + i, j - i); /* a lambda's name, or "()" */
		} else {
			put(o, &c, 1);
			puts_out(o, "...");
			if (closed)
				put(o, &s[j - 1], 1);
		}
		i = j;
	}
}

/* The template-argument group s[b, e) with each argument elided. */
static void put_args(struct outbuf *o, const char *s, size_t b, size_t e)
{
	bool closed = is_close(s[e - 1]) && e - b >= 2;
	size_t end = closed ? e - 1 : e, i = b + 1, arg = b + 1;
	int depth = 0;
	bool first = true;

	put(o, "<", 1);
	for (; i <= end; i++) {
		size_t skip = i < end ? opaque_token(s, i, end) : 0;

		if (skip) {
			i += skip - 1;
			continue;
		}
		if (i < end && is_open(s[i]))
			depth++;
		else if (i < end && is_close(s[i]))
			depth--;
		if (i < end && !(depth == 0 && s[i] == ','))
			continue;
		size_t a = arg, z = i;
		while (a < z && s[a] == ' ')
			a++;
		while (z > a && s[z - 1] == ' ')
			z--;
		if (!first)
			puts_out(o, ", ");
		elide(o, s, a, z);
		first = false;
		arg = i + 1;
	}
	puts_out(o, closed ? ">" : "...");
}

size_t rpt_symbol__shorten(const char *name, enum rpt_symbol_detail detail, char *out, size_t cap)
{
	struct outbuf o = { out, cap, 0 };
	struct decl d;
	size_t n;

	if (cap)
		out[0] = '\0';
	if (!name)
		return 0;
	n = strlen(name);
	if (!strpbrk(name, "<(")) {
		put(&o, name, n);
		return o.len;
	}
	read_decl(name, n, &d);
	if (d.name_begin >= d.name_end) { /* no name to keep: not a declaration */
		put(&o, name, n);
		return o.len;
	}
	if (detail == RPT_SYMBOL_ARGS && d.args_end > d.args_begin) {
		elide(&o, name, d.name_begin, d.args_begin);
		put_args(&o, name, d.args_begin, d.args_end);
		elide(&o, name, d.args_end, d.name_end);
	} else {
		elide(&o, name, d.name_begin, d.name_end);
	}
	put(&o, name + d.rest, n - d.rest);
	return o.len;
}

/* ---- the names of one table ------------------------------------------- */

struct symbol {
	char *decl;      /* the declaration part of a name: what is told apart */
	char *brief;     /* its RPT_SYMBOL_SHORT form */
	char *args;      /* its RPT_SYMBOL_ARGS form */
	char *shown;     /* the form chosen; NULL until the name is first shown */
};

struct rpt_symbols {
	struct symbol *sym;
	size_t n, cap;
	size_t *slot; /* open addressing on decl: index + 1, 0 empty */
	size_t nslots;
};

struct rpt_symbols *rpt_symbols__new(void)
{
	return calloc(1, sizeof(struct rpt_symbols));
}

void rpt_symbols__delete(struct rpt_symbols *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->sym[i].decl);
		free(t->sym[i].brief);
		free(t->sym[i].args);
		free(t->sym[i].shown);
	}
	free(t->sym);
	free(t->slot);
	free(t);
}

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Length of the declaration part of name (the rest is a rule's text). */
static size_t decl_len(const char *name)
{
	struct decl d;
	size_t n = strlen(name);

	if (!strpbrk(name, "<("))
		return n;
	read_decl(name, n, &d);
	return d.name_begin < d.name_end ? d.rest : n;
}

static char *form(const char *decl, enum rpt_symbol_detail detail)
{
	size_t len = rpt_symbol__shorten(decl, detail, NULL, 0);
	char *s = malloc(len + 1);

	if (s)
		rpt_symbol__shorten(decl, detail, s, len + 1);
	return s;
}

static int grow_slots(struct rpt_symbols *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	size_t *slot = calloc(nslots, sizeof *slot);

	if (!slot)
		return PROF_E_NOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash(t->sym[i].decl, strlen(t->sym[i].decl)) & (nslots - 1);

		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	return 0;
}

/* The symbol of name's declaration, added when new; NULL without memory. */
static struct symbol *lookup(struct rpt_symbols *t, const char *name)
{
	size_t len = decl_len(name), j;
	struct symbol *s;

	if ((t->n + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return NULL;
	for (j = hash(name, len) & (t->nslots - 1); t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
		s = &t->sym[t->slot[j] - 1];
		if (strlen(s->decl) == len && memcmp(s->decl, name, len) == 0)
			return s;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct symbol *sym = realloc(t->sym, cap * sizeof *sym);

		if (!sym)
			return NULL;
		t->sym = sym;
		t->cap = cap;
	}
	s = &t->sym[t->n];
	memset(s, 0, sizeof *s);
	s->decl = strndup(name, len);
	s->brief = s->decl ? form(s->decl, RPT_SYMBOL_SHORT) : NULL;
	s->args = s->brief ? form(s->decl, RPT_SYMBOL_ARGS) : NULL;
	if (!s->args) {
		free(s->decl);
		free(s->brief);
		return NULL;
	}
	t->slot[j] = ++t->n;
	return s;
}

int rpt_symbols__add(struct rpt_symbols *t, const char *name)
{
	return lookup(t, name ? name : "") ? 0 : PROF_E_NOMEM;
}

/* Whether s's template-argument form tells it apart from the other names
 * of its group, and is short enough to be worth reading. */
static bool args_tell_apart(const struct rpt_symbols *t, const struct symbol *s)
{
	if (strlen(s->args) > ARGS_FORM_MAX || strcmp(s->args, s->brief) == 0)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		const struct symbol *o = &t->sym[i];

		if (o != s && (strcmp(o->args, s->args) == 0 || (o->shown && strcmp(o->shown, s->args) == 0)))
			return false;
	}
	return true;
}

static char *numbered(const char *brief, unsigned number)
{
	size_t len = strlen(brief) + 16;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s#%u", brief, number);
	return s;
}

/* The number a shown form carries after brief ("f<...>#3" -> 3), 0 if none. */
static unsigned number_of(const char *shown, const char *brief)
{
	size_t len = strlen(brief);

	if (strncmp(shown, brief, len) != 0 || shown[len] != '#')
		return 0;
	return (unsigned)strtoul(shown + len + 1, NULL, 10);
}

/* Choose how each name of brief's group that is not shown yet will be. */
static void resolve(struct rpt_symbols *t, const char *brief)
{
	size_t members = 0, left = 0;
	unsigned top = 0;
	bool plain_shown = false;

	for (size_t i = 0; i < t->n; i++) {
		const struct symbol *s = &t->sym[i];

		if (strcmp(s->brief, brief) != 0)
			continue;
		members++;
		if (s->shown && strcmp(s->shown, brief) == 0)
			plain_shown = true;
		else if (s->shown && number_of(s->shown, brief) > top)
			top = number_of(s->shown, brief);
	}
	for (size_t i = 0; members > 1 && i < t->n; i++) {
		struct symbol *s = &t->sym[i];

		if (!s->shown && strcmp(s->brief, brief) == 0 && args_tell_apart(t, s))
			s->shown = strdup(s->args);
	}
	for (size_t i = 0; i < t->n; i++)
		left += !t->sym[i].shown && strcmp(t->sym[i].brief, brief) == 0;
	/* One name left whose short form no other shows: it needs nothing more. */
	bool alone = left == 1 && !plain_shown && top == 0;
	if (top == 0 && plain_shown)
		top = 1; /* the name shown before the clash was known reads as #1 */
	for (size_t i = 0; i < t->n; i++) {
		struct symbol *s = &t->sym[i];

		if (s->shown || strcmp(s->brief, brief) != 0)
			continue;
		s->shown = alone ? strdup(brief) : numbered(brief, ++top);
	}
}

size_t rpt_symbols__show(struct rpt_symbols *t, const char *name, char *out, size_t cap)
{
	struct outbuf o = { out, cap, 0 };
	struct symbol *s;

	if (cap)
		out[0] = '\0';
	if (!name)
		return 0;
	s = lookup(t, name);
	if (s && !s->shown)
		resolve(t, s->brief);
	if (!s || !s->shown)
		return rpt_symbol__shorten(name, RPT_SYMBOL_SHORT, out, cap);
	puts_out(&o, s->shown);
	puts_out(&o, name + strlen(s->decl));
	return o.len;
}
