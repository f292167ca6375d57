/* job_env.c - the rank of a process from its launcher's environment, and
 * output names made from it (prof/job_env.h). */
#include "prof/job_env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"

/* The largest rank, world size or local rank a variable may hold: MPI's
 * are ints. */
#define RANK_MAX INT_MAX

static const struct {
	enum prof_launcher launcher;
	const char *rank, *size, *local;
} launchers[] = {
	{ PROF_LAUNCHER_TORCHRUN, "RANK", "WORLD_SIZE", "LOCAL_RANK" },
	{ PROF_LAUNCHER_OPENMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	  "OMPI_COMM_WORLD_LOCAL_RANK" },
	{ PROF_LAUNCHER_PMI, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
	{ PROF_LAUNCHER_SLURM, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
};

/* A decimal integer from 0 to RANK_MAX, else -1. */
static long env_long(prof_env_fn env, void *ctx, const char *name)
{
	const char *s = env(name, ctx);
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v > RANK_MAX ? -1 : v;
}

void prof_job_rank__read(struct prof_job_rank *r, prof_env_fn env, void *ctx)
{
	r->launcher = PROF_LAUNCHER_NONE;
	r->rank = r->world_size = r->local_rank = -1;
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		long rank = env_long(env, ctx, launchers[i].rank);

		if (rank < 0)
			continue;
		r->launcher = launchers[i].launcher;
		r->rank = rank;
		r->world_size = env_long(env, ctx, launchers[i].size);
		r->local_rank = env_long(env, ctx, launchers[i].local);
		return;
	}
}

const char *prof_launcher__name(enum prof_launcher l)
{
	switch (l) {
	case PROF_LAUNCHER_TORCHRUN: return "torchrun";
	case PROF_LAUNCHER_OPENMPI: return "Open MPI";
	case PROF_LAUNCHER_PMI: return "PMI";
	case PROF_LAUNCHER_SLURM: return "Slurm";
	case PROF_LAUNCHER_NONE: break;
	}
	return "none";
}

struct out {
	char *buf;
	size_t cap, len;
};

static int put(struct out *o, const char *s, size_t n, struct prof_error *err)
{
	if (o->len + n >= o->cap)
		return prof_error__set(err, PROF_E_USAGE, "-o: the name is longer than %zu bytes",
				       o->cap - 1);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
	return 0;
}

/* A variable's value as a message shows it: its first bytes, made safe
 * for a terminal (the message is one line of text). */
static void shown_value(const char *value, char *buf, size_t cap)
{
	char head[33];
	size_t len = strlen(value);

	snprintf(head, sizeof head, "%s", value);
	prof_sanitize_term(buf, cap - 3, head);
	if (len >= sizeof head)
		strcat(buf, "...");
}

/* A value that becomes part of a file name. field is how the pattern
 * named it ("%h", "%q{JOB}"), what how a message names the value ("the
 * host name", "JOB"). */
static int put_value(struct out *o, const char *field, const char *what, const char *value,
		     struct prof_error *err)
{
	char shown[64];

	if (!*value)
		return prof_error__set(err, PROF_E_USAGE, "-o: %s: %s is empty", field, what);
	if (!strcmp(value, ".") || !strcmp(value, ".."))
		return prof_error__set(err, PROF_E_USAGE,
				       "-o: %s: %s is '%s', which is not allowed as a name part "
				       "(it names a folder)",
				       field, what, value);
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return prof_error__set(err, PROF_E_USAGE,
					       "-o: %s: %s holds a control character (byte 0x%02x), "
					       "which a file name must not",
					       field, what, (unsigned char)*c);
	if (strchr(value, '/')) {
		shown_value(value, shown, sizeof shown);
		return prof_error__set(err, PROF_E_USAGE,
				       "-o: %s: %s holds a '/' ('%s'), and a value names a file, "
				       "not a folder",
				       field, what, shown);
	}
	return put(o, value, strlen(value), err);
}

/* %r without a rank: the first launcher variable that is set, and why its
 * value is not a rank, or that none is set. */
static int no_rank(prof_env_fn env, void *ctx, struct prof_error *err)
{
	char shown[64];

	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		const char *name = launchers[i].rank, *value = env(name, ctx);

		if (!value)
			continue;
		if (!*value)
			return prof_error__set(err, PROF_E_USAGE,
					       "-o: %%r needs a rank, and %s is set but empty", name);
		shown_value(value, shown, sizeof shown);
		return prof_error__set(err, PROF_E_USAGE,
				       "-o: %%r needs a rank: %s=%s is not a rank (a number from 0 "
				       "to %d)",
				       name, shown, RANK_MAX);
	}
	return prof_error__set(err, PROF_E_USAGE,
			       "-o: %%r needs a rank, and none of RANK, OMPI_COMM_WORLD_RANK, "
			       "PMI_RANK, SLURM_PROCID is set");
}

/* A portable environment variable name: letters, digits and '_' (every
 * launcher's variables are). The name is echoed in messages, so a byte
 * that could break the line or the terminal is refused here, not printed. */
static bool variable_name(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
	return len > 0;
}

/* What follows a '%' that names nothing: shown as typed when printable,
 * else as its byte value (the message is one line of text). */
static int unknown_field(unsigned char c, struct prof_error *err)
{
	char shown[40];

	if (c < 0x80 && isprint(c))
		snprintf(shown, sizeof shown, "%%%c", c);
	else
		snprintf(shown, sizeof shown, "%% followed by byte 0x%02x", c);
	return prof_error__set(err, PROF_E_USAGE,
			       "-o: unknown %s (use %%h host, %%p pid, %%r rank, %%q{VAR} a variable, "
			       "%%%% a %%)",
			       shown);
}

int prof_output_pattern__expand(const char *pattern, const struct prof_pattern_values *v,
				char *buf, size_t cap, struct prof_error *err)
{
	struct out o = { buf, cap, 0 };
	struct prof_job_rank rank;
	char num[32], name[256], field[sizeof name + 8];
	const char *p = pattern, *value;

	if (!cap)
		return prof_error__set(err, PROF_E_USAGE, "-o: no room for a name");
	buf[0] = '\0';
	while (*p) {
		size_t lit = strcspn(p, "%");
		int rc = put(&o, p, lit, err);

		if (rc)
			return rc;
		p += lit;
		if (!*p)
			break;
		switch (p[1]) {
		case '%':
			rc = put(&o, "%", 1, err);
			p += 2;
			break;
		case 'h':
			rc = put_value(&o, "%h", "the host name", v->host ? v->host : "", err);
			p += 2;
			break;
		case 'p':
			snprintf(num, sizeof num, "%ld", v->pid);
			rc = put_value(&o, "%p", "the pid", num, err);
			p += 2;
			break;
		case 'r':
			prof_job_rank__read(&rank, v->env, v->env_ctx);
			if (rank.launcher == PROF_LAUNCHER_NONE)
				return no_rank(v->env, v->env_ctx, err);
			snprintf(num, sizeof num, "%ld", rank.rank);
			rc = put_value(&o, "%r", "the rank", num, err);
			p += 2;
			break;
		case 'q': {
			const char *close;
			size_t len;

			if (p[2] != '{' || !(close = strchr(p + 3, '}')))
				return prof_error__set(err, PROF_E_USAGE,
						       "-o: %%q takes a variable in braces: %%q{NAME}");
			len = (size_t)(close - (p + 3));
			if (len >= sizeof name || !variable_name(p + 3, len))
				return prof_error__set(err, PROF_E_USAGE,
						       "-o: %%q{} needs a variable name of letters, digits "
						       "and '_' (at most %zu bytes)",
						       sizeof name - 1);
			memcpy(name, p + 3, len);
			name[len] = '\0';
			value = v->env(name, v->env_ctx);
			if (!value)
				return prof_error__set(err, PROF_E_USAGE, "-o: %%q{%s}: %s is not set",
						       name, name);
			snprintf(field, sizeof field, "%%q{%s}", name);
			rc = put_value(&o, field, name, value, err);
			p = close + 1;
			break;
		}
		case '\0':
			return prof_error__set(err, PROF_E_USAGE,
					       "-o: a lone %% at the end (write %%%% for a %%)");
		default:
			return unknown_field((unsigned char)p[1], err);
		}
		if (rc)
			return rc;
	}
	return 0;
}
