/* cmd_peaks.c - `perfkit peaks`: this GPU's measured ceilings (DRAM and L2
 * bandwidth, FP64/FP32/FP16/BF16 FMA throughput, tensor-core GEMMs by
 * precision). The measuring is done by the CUDA program perfkit-peaks
 * (collectors/peaks/), installed next to perfkit; results are cached per GPU in
 * ~/.cache/perfkit/peaks-<uuid>.json and can be stored into a capture. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "cli.h"
#include "cli_reader.h"
#include "prof/escape.h"
#include "prof/file.h"
#include "prof/temp_files.h"

#define PEAKS_BIN "perfkit-peaks"

static const char *const usage[] = {
	"perfkit peaks [--refresh] [--format=text|json] [--store FILE]",
	NULL,
};

static int locate(char *buf, size_t cap)
{
	const char *env = getenv("PERFKIT_PEAKS_BIN");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, cap, "%s", env);
		return access(buf, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	if (strrchr(self, '/'))
		*strrchr(self, '/') = 0;
	if (snprintf(buf, cap, "%s/%s", self, PEAKS_BIN) < (int)cap && !access(buf, X_OK))
		return 0;
	if (snprintf(buf, cap, "%s/../collectors/peaks/%s", self, PEAKS_BIN) >= (int)cap)
		return -1;
	return access(buf, X_OK);
}

/* Run bin with one optional argument; its stdout, malloc'd, or NULL. */
static char *run_capture(const char *bin, const char *arg)
{
	int fd[2], status;
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	pid_t pid;
	ssize_t r;

	if (!out || pipe(fd)) {
		free(out);
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		free(out);
		return NULL;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(bin, bin, arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while ((r = read(fd[0], out + len, cap - len - 1)) > 0 || (r < 0 && errno == EINTR)) {
		if (r < 0)
			continue;
		len += (size_t)r;
		if (cap - len < 2) {
			char *n = realloc(out, cap * 2);
			if (!n)
				break;
			out = n;
			cap *= 2;
		}
	}
	close(fd[0]);
	out[len] = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Run argv with its output thrown away; 0 when it exits 0. */
static int run_quiet(char *const *argv)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The kinds of call whose recording cost --record-cost measures: its
 * output's key, and the peaks document's keys for the cost and the
 * untraced time. */
enum { COST_LAUNCH, COST_CALL, COST_ALLOC, COST_COPY, COST_NKINDS };
static const struct {
	const char *measured, *cost, *untraced;
} cost_keys[COST_NKINDS] = {
	{ "launch_ns", "record_launch_ns", "launch_untraced_ns" },
	{ "api_call_ns", "record_api_call_ns", "api_call_untraced_ns" },
	{ "alloc_call_ns", "record_alloc_ns", "alloc_untraced_ns" },
	{ "copy_call_ns", "record_copy_ns", "copy_untraced_ns" },
};

/* One --record-cost result: the host's ns per call of each kind. */
static int read_cost(const char *path, double ns[COST_NKINDS])
{
	char *text = NULL;
	cJSON *doc;
	int rc = 0;

	if (prof_file__read(path, 0, &text, NULL))
		return -1;
	doc = cJSON_Parse(text);
	for (int k = 0; k < COST_NKINDS; k++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, cost_keys[k].measured);

		if (cJSON_IsNumber(v))
			ns[k] = v->valuedouble;
		else
			rc = -1;
	}
	cJSON_Delete(doc);
	free(text);
	unlink(path);
	return rc;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What recording costs the host per kernel launch and per API call:
 * perfkit-peaks --record-cost run alone and under `perfkit run` (the
 * default trace), COST_ROUNDS rounds interleaved so that a change of the
 * machine's load falls on both, the difference of the medians. Measured
 * here rather than at the start of every capture: it needs launches of a
 * kernel the program does not own and a run without the collector to
 * compare with, neither of which a capture can have without changing the
 * program's own trace. The figures go into the peaks document ("peaks":
 * record_launch_ns, record_api_call_ns, record_alloc_ns, record_copy_ns
 * and the untraced times), so a
 * capture gets them with the ceilings (PERFKIT_PEAKS). */
#define COST_ROUNDS 7
static int measure_record_cost(const char *bin, cJSON *peaks)
{
	double alone_ns[COST_NKINDS][COST_ROUNDS], under_ns[COST_NKINDS][COST_ROUNDS];
	char self[PATH_MAX], dir[PATH_MAX], untraced[PATH_MAX + 16], traced[PATH_MAX + 16],
		capture[PATH_MAX + 16];
	struct prof_error err = { 0 };
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	int rc = -1;

	if (n <= 0 || prof_temp_dir__create("perfkit-cost", dir, sizeof dir, &err))
		return -1;
	self[n] = 0;
	snprintf(untraced, sizeof untraced, "%s/untraced.json", dir);
	snprintf(traced, sizeof traced, "%s/traced.json", dir);
	snprintf(capture, sizeof capture, "%s/capture.sqlite", dir);
	prof_temp__add(untraced, PROF_TEMP_FILE);
	prof_temp__add(traced, PROF_TEMP_FILE);
	prof_temp__add(capture, PROF_TEMP_FILE);
	for (int r = 0; r < COST_ROUNDS; r++) {
		char *alone[] = { (char *)bin, "--record-cost", untraced, NULL };
		char *under[] = { self, "run", "-f", "-o", capture, "--", (char *)bin, "--record-cost", traced, NULL };

		double a[COST_NKINDS], u[COST_NKINDS];

		if (run_quiet(alone) || read_cost(untraced, a) || run_quiet(under) || read_cost(traced, u))
			goto out;
		for (int k = 0; k < COST_NKINDS; k++) {
			alone_ns[k][r] = a[k];
			under_ns[k][r] = u[k];
		}
		unlink(capture);
	}
	for (int k = 0; k < COST_NKINDS; k++) {
		double t0 = median(alone_ns[k], COST_ROUNDS), t1 = median(under_ns[k], COST_ROUNDS);

		cJSON_AddNumberToObject(peaks, cost_keys[k].cost, t1 > t0 ? t1 - t0 : 0);
		cJSON_AddNumberToObject(peaks, cost_keys[k].untraced, t0);
	}
	rc = 0;
out:
	unlink(untraced);
	unlink(traced);
	unlink(capture);
	prof_temp__forget(untraced);
	prof_temp__forget(traced);
	prof_temp__forget(capture);
	rmdir(dir);
	prof_temp__forget(dir);
	return rc;
}

/* The peaks document with the recording cost added (a warning and the
 * document as it was when it cannot be measured); -1 only when out of
 * memory. */
static int add_record_cost(const char *bin, char **doc_text)
{
	cJSON *doc = cJSON_Parse(*doc_text), *peaks = cJSON_GetObjectItemCaseSensitive(doc, "peaks");
	char *text;

	if (!cJSON_IsObject(peaks)) {
		cJSON_Delete(doc);
		return 0; /* refused below, with the cache's name */
	}
	fprintf(stderr, "perfkit: measuring what recording costs per call (%d rounds with and without "
		"the collector)...\n", COST_ROUNDS);
	if (measure_record_cost(bin, peaks)) {
		cli_warning("could not measure what recording costs per call; host times will be shown "
			    "as measured only");
		cJSON_Delete(doc);
		return 0;
	}
	text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!text) {
		cli_error("out of memory");
		return -1;
	}
	free(*doc_text);
	*doc_text = text;
	return 0;
}

static void mkdirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
}

static void print_text(cJSON *doc, const char *cache)
{
	static const struct { const char *key, *label, *unit; double scale; } rows[] = {
		{ "dram_bytes_per_s", "DRAM bandwidth", "GB/s", 1e9 },
		{ "l2_bytes_per_s", "L2 bandwidth", "GB/s", 1e9 },
		{ "fp64_flops_per_s", "FP64 FMA", "TFLOP/s", 1e12 },
		{ "fp32_flops_per_s", "FP32 FMA", "TFLOP/s", 1e12 },
		{ "fp16_flops_per_s", "FP16 FMA (half2)", "TFLOP/s", 1e12 },
		{ "bf16_flops_per_s", "BF16 FMA (bfloat162)", "TFLOP/s", 1e12 },
		{ "tensor_bf16_flops_per_s", "BF16 tensor cores (cuBLAS)", "TFLOP/s", 1e12 },
		{ "tensor_fp16_flops_per_s", "FP16 tensor cores (cuBLAS)", "TFLOP/s", 1e12 },
		{ "tensor_tf32_flops_per_s", "TF32 tensor cores (cuBLAS)", "TFLOP/s", 1e12 },
		{ "tensor_fp64_flops_per_s", "FP64 tensor cores (cuBLAS)", "TFLOP/s", 1e12 },
		{ "p2p_bytes_per_s", "Peer-to-peer (best pair)", "GB/s", 1e9 },
		{ "record_launch_ns", "Recording cost per launch", "ns", 1 },
		{ "record_api_call_ns", "Recording cost per API call", "ns", 1 },
		{ "record_alloc_ns", "Recording cost per alloc/free", "ns", 1 },
		{ "record_copy_ns", "Recording cost per copy call", "ns", 1 },
	};
	cJSON *peaks = cJSON_GetObjectItemCaseSensitive(doc, "peaks");
	cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "gpu_name");
	cJSON *uuid = cJSON_GetObjectItemCaseSensitive(doc, "gpu_uuid");

	fputs("GPU: ", stdout);
	prof_fputs_term(stdout, cJSON_IsString(name) ? name->valuestring : "?");
	fputs(" (", stdout);
	prof_fputs_term(stdout, cJSON_IsString(uuid) ? uuid->valuestring : "?");
	fputs(")\n", stdout);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(peaks, rows[i].key);
		if (cJSON_IsNumber(v))
			printf("  %-28s %10.1f %s\n", rows[i].label, v->valuedouble / rows[i].scale, rows[i].unit);
		else
			printf("  %-28s %10s\n", rows[i].label, "N/A");
	}
	fputs("cache: ", stdout);
	prof_fputs_term(stdout, cache);
	fputc('\n', stdout);
}

int cmd_peaks(int argc, char **argv)
{
	const char *format_opt = "text", *store = NULL;
	int format;
	bool refresh = false;
	static const char *const formats[] = { "text", "json" };
	const struct cli_option opts[] = {
		CLI_FLAG(0, "refresh", &refresh, "measure again even when the cache has this GPU"),
		CLI_FORMAT_OPTION(&format_opt, formats, "text or json"),
		CLI_STRING(0, "store", &store, "FILE", "also store the ceilings into capture FILE"),
		CLI_END(),
	};
	char bin[PATH_MAX], cache[4096];
	char *id_text = NULL, *doc_text = NULL;
	cJSON *id = NULL, *doc = NULL, *uuid;
	struct prof_error err = { 0 };
	int n, status = CLI_EXIT_USAGE;

	n = cli_parse(argc, argv, opts, usage, 0);
	if (n < 0)
		return cli_parse_status(n);
	if (n != 0) {
		cli_error("peaks takes no file argument (use --store FILE)");
		return CLI_EXIT_USAGE;
	}
	format = cli_format__parse(format_opt, formats, 2);
	if (format < 0)
		return CLI_EXIT_USAGE;
	if (locate(bin, sizeof bin)) {
		cli_error("%s not found next to perfkit: this perfkit was built without CUDA", PEAKS_BIN);
		return CLI_EXIT_USAGE;
	}
	id_text = run_capture(bin, "--identify");
	id = id_text ? cJSON_Parse(id_text) : NULL;
	uuid = cJSON_GetObjectItemCaseSensitive(id, "gpu_uuid");
	if (!cJSON_IsString(uuid)) {
		cli_error("%s could not identify a GPU", PEAKS_BIN);
		goto out;
	}
	if (peaks_doc__cache_path(cache, sizeof cache, uuid->valuestring)) {
		cli_error("no cache folder: set HOME or XDG_CACHE_HOME");
		goto out;
	}
	/* a cache that cannot be read is measured again */
	if (!refresh)
		prof_file__read(cache, 0, &doc_text, NULL);
	if (!doc_text) {
		FILE *f;
		fprintf(stderr, "perfkit: measuring this GPU's ceilings (about a minute)...\n");
		doc_text = run_capture(bin, "--measure");
		if (!doc_text) {
			cli_error("%s failed", PEAKS_BIN);
			goto out;
		}
		if (add_record_cost(bin, &doc_text))
			goto out;
		mkdirs(cache);
		f = fopen(cache, "w");
		if (f) {
			fputs(doc_text, f);
			fclose(f);
		} else {
			cli_warning("cannot write the cache %s", cache);
		}
	}
	doc = cJSON_Parse(doc_text);
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "peaks"))) {
		cli_error("%s: not a peaks document (delete it or use --refresh)", cache);
		goto out;
	}
	if (store && peaks_doc__store(store, doc_text, &err)) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (format == CLI_FORMAT_JSON)
		fputs(doc_text, stdout);
	else
		print_text(doc, cache);
	status = CLI_EXIT_OK;
out:
	cJSON_Delete(id);
	cJSON_Delete(doc);
	free(id_text);
	free(doc_text);
	return status;
}
