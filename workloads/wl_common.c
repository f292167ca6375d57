/* wl_common.c - what the four reference workloads share: option parsing,
 * the deterministic random numbers their inputs come from, error measures,
 * and the closing table / --json line. Plain C: CI builds and tests it. */
#include "wl_common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Option names come from the command line: show them without control
 * characters so a hostile argument cannot drive the terminal. */
static void fputs_term(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}

static int parse_long(const char *value, long max, long *out)
{
	char *end;
	long v;

	if (!value || !*value)
		return -1;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || end == value || *end || v <= 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int wl_parse_int(const char *value, void *target)
{
	long v;

	if (parse_long(value, INT_MAX, &v))
		return -1;
	*(int *)target = (int)v;
	return 0;
}

int wl_parse_count(const char *value, void *target)
{
	char buf[32];
	long mult = 1, v;
	size_t len;

	if (!value || (len = strlen(value)) == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, value, len + 1);
	if (buf[len - 1] == 'K' || buf[len - 1] == 'k')
		mult = 1000;
	else if (buf[len - 1] == 'M' || buf[len - 1] == 'm')
		mult = 1000000;
	if (mult > 1)
		buf[len - 1] = '\0';
	if (parse_long(buf, INT_MAX / mult, &v))
		return -1;
	*(int *)target = (int)(v * mult);
	return 0;
}

int wl_parse_int_list(const char *value, void *target)
{
	struct wl_int_list list = { 0 };
	char buf[256], *tok, *save = NULL;
	long v;

	if (!value || !*value || strlen(value) >= sizeof(buf))
		return -1;
	strcpy(buf, value);
	/* An empty element ("4,,8" or a trailing comma) is a typo, not a skip. */
	if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (list.n == (int)(sizeof(list.v) / sizeof(list.v[0])))
			return -1;
		if (parse_long(tok, INT_MAX, &v))
			return -1;
		list.v[list.n++] = (int)v;
	}
	*(struct wl_int_list *)target = list;
	return 0;
}

int wl_parse_string(const char *value, void *target)
{
	if (!value || !*value)
		return -1;
	*(const char **)target = value;
	return 0;
}

int wl_parse_flag(const char *value, void *target)
{
	if (value)
		return -1;
	*(bool *)target = true;
	return 0;
}

static void usage(FILE *f, const char *prog, const struct wl_option *extra, int nextra)
{
	fprintf(f, "usage: %s [options]\n", prog);
	fputs("  --variant=naive|optimized|both  which pipeline to run (default both)\n"
	      "  --iters=N                       timed steps per variant\n"
	      "  --check                         compare with the CPU reference (double)\n"
	      "  --json                          one JSON result line per variant\n"
	      "  --seed=N                        seed of the random inputs (default 1)\n"
	      "  --help                          this text\n", f);
	for (int i = 0; i < nextra; i++)
		fprintf(f, "  --%-30s%s\n", extra[i].name, extra[i].help);
}

static int bad_option(const char *prog, const char *what, const char *arg,
		      const struct wl_option *extra, int nextra)
{
	fprintf(stderr, "perfkit: %s: %s '", prog, what);
	fputs_term(stderr, arg);
	fputs("'\n", stderr);
	usage(stderr, prog, extra, nextra);
	return -1;
}

static int parse_u64(const char *value, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!value || !*value || *value == '-')
		return -1;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int wl_parse_args(const char *prog, int argc, char **argv, struct wl_common *common,
		  const struct wl_option *extra, int nextra)
{
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a], *eq, *value;
		size_t name_len;
		int i;

		if (strncmp(arg, "--", 2) != 0)
			return bad_option(prog, "unexpected argument", arg, extra, nextra);
		arg += 2;
		eq = strchr(arg, '=');
		name_len = eq ? (size_t)(eq - arg) : strlen(arg);
		value = eq ? eq + 1 : NULL;

#define IS(n) (name_len == strlen(n) && strncmp(arg, n, name_len) == 0)
		if (IS("help")) {
			usage(stdout, prog, extra, nextra);
			return 1;
		} else if (IS("check") && !value) {
			common->check = true;
		} else if (IS("json") && !value) {
			common->json = true;
		} else if (IS("variant")) {
			if (value && strcmp(value, "naive") == 0)
				common->variant = WL_NAIVE;
			else if (value && strcmp(value, "optimized") == 0)
				common->variant = WL_OPTIMIZED;
			else if (value && strcmp(value, "both") == 0)
				common->variant = WL_BOTH;
			else
				return bad_option(prog, "bad value for option", argv[a], extra, nextra);
		} else if (IS("iters")) {
			if (wl_parse_int(value, &common->iters))
				return bad_option(prog, "bad value for option", argv[a], extra, nextra);
		} else if (IS("seed")) {
			if (parse_u64(value, &common->seed))
				return bad_option(prog, "bad value for option", argv[a], extra, nextra);
		} else {
			for (i = 0; i < nextra; i++)
				if (IS(extra[i].name))
					break;
			if (i == nextra)
				return bad_option(prog, "unknown option", argv[a], extra, nextra);
			if (extra[i].parse(value, extra[i].target))
				return bad_option(prog, "bad value for option", argv[a], extra, nextra);
		}
#undef IS
	}
	return 0;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void wl_rng_seed(struct wl_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t wl_rng_u64(struct wl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double wl_rng_uniform(struct wl_rng *r)
{
	return (double)(wl_rng_u64(r) >> 11) * 0x1.0p-53;
}

double wl_rng_normal(struct wl_rng *r)
{
	/* Box-Muller without a cached second value, so the sequence depends
	 * only on the generator state. 1 - u keeps the log argument in (0, 1]. */
	double u1 = 1.0 - wl_rng_uniform(r);
	double u2 = wl_rng_uniform(r);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double wl_rel_l2(const double *a, const double *b, size_t n)
{
	double diff = 0.0, ref = 0.0;

	for (size_t i = 0; i < n; i++) {
		double d = a[i] - b[i];

		diff += d * d;
		ref += b[i] * b[i];
	}
	/* An all-zero reference leaves only the absolute error to report. */
	return ref > 0.0 ? sqrt(diff / ref) : sqrt(diff);
}

double wl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

double wl_speedup(const struct wl_result *results, int n, int i)
{
	const struct wl_result *r = &results[i], *base = NULL;

	for (int j = 0; j < n && !base; j++)
		if (j != i && same(results[j].workload, r->workload) &&
		    same(results[j].variant, "naive") && same(results[j].size, r->size))
			base = &results[j];
	if (!base && !same(r->variant, "naive")) {
		for (int j = 0; j < n; j++)
			if (same(results[j].workload, r->workload)) {
				if (j != i)
					base = &results[j];
				break;
			}
	}
	if (!base)
		return 0.0;
	if (r->throughput > 0.0 && base->throughput > 0.0)
		return r->throughput / base->throughput;
	if (r->step_ms > 0.0 && base->step_ms > 0.0)
		return base->step_ms / r->step_ms;
	return 0.0;
}

void wl_print_table(FILE *out, const struct wl_result *results, int n)
{
	fprintf(out, "%-16s %-10s %-18s %12s %14s %-13s %-16s %8s\n", "workload", "variant",
		"size", "ms/step", "throughput", "unit", "check", "speedup");
	for (int i = 0; i < n; i++) {
		const struct wl_result *r = &results[i];
		char check[32], speed[16];
		double s = wl_speedup(results, n, i);

		if (r->checked)
			snprintf(check, sizeof(check), "%s %.2e", r->check_ok ? "ok" : "FAIL",
				 r->check_error);
		else
			snprintf(check, sizeof(check), "-");
		if (s > 0.0)
			snprintf(speed, sizeof(speed), "%.2fx", s);
		else
			snprintf(speed, sizeof(speed), "-");
		fprintf(out, "%-16s %-10s %-18s %12.4f %14.4g %-13s %-16s %8s\n",
			r->workload ? r->workload : "", r->variant ? r->variant : "",
			r->size ? r->size : "", r->step_ms, r->throughput, r->unit ? r->unit : "",
			check, speed);
	}
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* JSON has no NaN or infinity: a failed measurement is null. */
static void json_number(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.9g", v);
	else
		fputs("null", out);
}

void wl_print_json(FILE *out, const struct wl_result *r)
{
	fputs("{\"workload\":", out);
	json_string(out, r->workload);
	fputs(",\"variant\":", out);
	json_string(out, r->variant);
	fputs(",\"size\":", out);
	json_string(out, r->size);
	fputs(",\"step_ms\":", out);
	json_number(out, r->step_ms);
	fputs(",\"throughput\":", out);
	json_number(out, r->throughput);
	fputs(",\"unit\":", out);
	json_string(out, r->unit);
	fprintf(out, ",\"checked\":%s,\"check_ok\":%s,\"check_error\":", r->checked ? "true" : "false",
		r->check_ok ? "true" : "false");
	if (r->checked)
		json_number(out, r->check_error);
	else
		fputs("null", out);
	fputs("}\n", out);
}
