/* program.c - the program model (program.h): what the program is built on
 * and what it already does, from kernel names, CUDA calls, copies' memory
 * kinds and NVTX ranges; and changes rendered for it. */
#include "program.h"
#include "id_groups.h"
#include "input_gaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/saturate.h"
#include "prof/strfmt.h"
#include "prof/tables.h"
#include "model/memo.h"
#include "model/sql.h"
#include "model/sums.h"
#include "model/window.h"
#include "analysis/core/grow.h"
#include "analysis/core/scope.h"

/* Short ids (as change templates name them) and the names the JSON and the
 * text show, frameworks first. */
static const struct {
	const char *id, *name;
} framework_names[PROG_NFRAMEWORKS] = {
	[PROG_PYTORCH] = { "pytorch", "pytorch" },
	[PROG_TORCH_COMPILE] = { "torch_compile", "torch.compile" },
	[PROG_CUDA_GRAPHS] = { "graph_nodes", "cuda graphs" },
	[PROG_JAX] = { "jax", "jax/xla" },
	[PROG_TRITON] = { "triton", "triton" },
	[PROG_NCCL] = { "nccl", "nccl" },
}, practice_names[USE_NPRACTICES] = {
	[USE_CUDA_GRAPHS] = { "graphs", "cuda graphs" },
	[USE_TORCH_COMPILE] = { "compile", "torch.compile" },
	[USE_PINNED] = { "pinned", "pinned memory" },
	[USE_PAGEABLE] = { "pageable", "pageable memory" },
	[USE_COPY_OVERLAP] = { "overlap", "copy/compute overlap" },
	[USE_MANAGED] = { "managed", "managed memory" },
	[USE_PREFETCH] = { "prefetch", "prefetch" },
	[USE_FUSED_OPTIMIZER] = { "fused_optimizer", "foreach or fused optimizer" },
	[USE_BF16] = { "bf16", "16-bit kernels" },
	[USE_TF32] = { "tf32", "tf32" },
	[USE_DATALOADER] = { "dataloader", "dataloader pinning thread" },
	[USE_HOST_READS] = { "host_reads", "small reads back to the host" },
};

const char *prog_framework__name(enum prog_framework f)
{
	return f >= 0 && f < PROG_NFRAMEWORKS ? framework_names[f].name : "?";
}

const char *prog_practice__name(enum prog_practice p)
{
	return p >= 0 && p < USE_NPRACTICES ? practice_names[p].name : "?";
}

static bool id_is(const char *id, const char *name, size_t len)
{
	return strlen(id) == len && memcmp(id, name, len) == 0;
}

/* The verdict's bounds (verdict.h) the templates name, by their number. */
static const struct {
	const char *id;
	int bound, also;
} bound_ids[] = {
	{ "bound_gpu", 0 /* GPU compute */, 1 /* GPU memory */ },
	{ "bound_launch", 2, -1 },
	{ "bound_sync", 3, -1 },
	{ "bound_transfer", 4, -1 },
	{ "bound_comm", 5, 6 /* another rank */ },
};

bool prog_model__has(const struct prog_model *m, const char *name, size_t len, bool *known)
{
	*known = true;
	if (id_is("input", name, len))
		return m->uses[USE_DATALOADER] || (m->iterations > 0 && m->h2d_copies >= m->iterations);
	if (id_is("input_wait", name, len))
		return m->input_wait;
	if (id_is("dispatch", name, len))
		return m->dispatch;
	if (id_is("fp32_gemm", name, len))
		return m->fp32_gemm_ns > 0;
	for (size_t b = 0; b < sizeof bound_ids / sizeof bound_ids[0]; b++)
		if (id_is(bound_ids[b].id, name, len))
			return m->bound < 0 || m->bound == bound_ids[b].bound || m->bound == bound_ids[b].also;
	for (int f = 0; f < PROG_NFRAMEWORKS; f++)
		if (id_is(framework_names[f].id, name, len))
			return m->framework[f];
	for (int p = 0; p < USE_NPRACTICES; p++)
		if (id_is(practice_names[p].id, name, len))
			return m->uses[p];
	*known = false;
	return false;
}

/* The '}' that closes the clause whose text starts at p (clauses nest). */
static const char *clause_end(const char *p)
{
	int depth = 1;

	for (; *p; p++) {
		if (p[0] == '{' && (p[1] == '!' || p[1] == '?'))
			depth++;
		else if (*p == '}' && --depth == 0)
			return p;
	}
	return NULL;
}

/* Renders [p, end) into o; returns the end of what it wrote. */
static char *render_span(const struct prog_model *m, const char *p, const char *end, char *o,
			 bool *unknown)
{
	while (p < end) {
		const char *name, *text, *close;
		bool want, known, has;

		if (p[0] != '{' || (p[1] != '!' && p[1] != '?')) {
			*o++ = *p++;
			continue;
		}
		want = p[1] == '?';
		name = p + 2;
		text = strchr(name, ' ');
		close = clause_end(name);
		if (!text || !close || text > close || close > end) {
			*o++ = *p++;
			continue;
		}
		has = prog_model__has(m, name, (size_t)(text - name), &known);
		if (!known)
			*unknown = true;
		if (!known || has == want)
			o = render_span(m, text + 1, close, o, unknown);
		p = close + 1;
	}
	return o;
}

char *prog_model__render(const struct prog_model *m, const char *change, bool *unknown)
{
	size_t n = strlen(change);
	char *out = malloc(n + 1);

	*unknown = false;
	if (out)
		*render_span(m, change, change + n, out, unknown) = '\0';
	return out;
}

/* ---- reading the model ------------------------------------------------------- */

static bool has_text(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* Inductor names its kernels triton_<kind>_fused_... (poi: pointwise, per:
 * persistent reduction, red: reduction, tem: template). */
static bool is_inductor(const char *name)
{
	return strncmp(name, "triton_", 7) == 0 &&
	       (has_text(name, "_fused") || strncmp(name, "triton_tem_", 11) == 0);
}

static bool is_libtorch(const char *name)
{
	return has_text(name, "at::native::") || has_text(name, "at::cuda::") ||
	       strncmp(name, "void at::", 9) == 0;
}

/* The precision in a kernel's name: cuBLAS (sm90_xmma_gemm_f32f32_tf32f32_...),
 * CUTLASS (cutlass_80_tensorop_bf16_s1688gemm_..., simt_sgemm), nvjet
 * (nvjet_..._h_... for 16-bit inputs), cuDNN and templated kernels
 * (c10::BFloat16, __half, __nv_bfloat16). */
static bool is_16bit(const char *name)
{
	return has_text(name, "bf16") || has_text(name, "bfloat16") || has_text(name, "BFloat16") ||
	       has_text(name, "c10::Half") || has_text(name, "__half") || has_text(name, "fp16") ||
	       has_text(name, "f16f16") || (strncmp(name, "nvjet_", 6) == 0 && has_text(name, "_h_"));
}

static bool is_tf32(const char *name)
{
	return has_text(name, "tf32");
}

bool prog_kernel__is_fp32_gemm(const char *name)
{
	return has_text(name, "sgemm") ||
	       ((has_text(name, "gemm") || has_text(name, "conv")) && has_text(name, "_ffma_"));
}

static bool is_fused_optimizer(const char *name)
{
	return has_text(name, "multi_tensor_apply") || has_text(name, "fused_adam") ||
	       has_text(name, "FusedAdam") || has_text(name, "fused_sgd");
}

/* A kernel named as a Python function is (an identifier, no C++ signature)
 * and not one of the libraries that launch through the driver too: cuBLAS
 * (nvjet_..., sm90_xmma_...), cuDNN's generated kernels, CUTLASS. */
static bool is_python_kernel_name(const char *name)
{
	static const char *const libraries[] = { "cudnn", "cublas", "cutlass", "nvjet", "xmma",
						 "ampere_", "hopper_", "volta_", "turing_", "sm" };

	for (const char *p = name; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++)
		if (strncmp(name, libraries[i], strlen(libraries[i])) == 0 &&
		    (strcmp(libraries[i], "sm") != 0 || (name[2] >= '0' && name[2] <= '9')))
			return false;
	return !has_text(name, "xmma") && !has_text(name, "cutlass");
}

/* A kernel of none of the frameworks told by name whose plain (Python)
 * name is Triton's when the driver launched it. */
static bool is_plain_kernel(const char *name)
{
	return !is_libtorch(name) && !is_inductor(name) && strncmp(name, "ncclDevKernel", 13) != 0 &&
	       strncmp(name, "ncclKernel", 10) != 0 && is_python_kernel_name(name);
}

/* Every kernel name with its launches and time; the driver's variant
 * also whether any of its launches came through the driver API. */
#define KERNEL_NAMES_SQL(OUTER, INNER)                                                             \
	"SELECT (SELECT value FROM " PROF_T_STRINGS " WHERE id = k.name), k.n, k.t" OUTER            \
	" FROM (SELECT " PROF_SQL_KERNEL_NAME_ID("") " AS name, count(*) AS n,"                        \
	"  " SUM_TOTAL_SATURATED("CASE WHEN end >= start THEN end - start END") " AS t" INNER        \
	"  FROM " PROF_T_KERNEL " GROUP BY 1) k"
#define KERNEL_NAMES_DRIVER_SQL                                                                    \
	KERNEL_NAMES_SQL(", k.driver", ", max(correlationId IN (SELECT correlationId FROM " PROF_T_DRIVER \
			 ")) AS driver")

/* The launches of kernels with a plain (Python) name of which some were
 * launched through the driver: Triton's JIT, unless the launcher is XLA.
 * Asked only of a program that may run Triton: whether each kernel's
 * id is among the driver calls' costs a pass over every driver call. */
static int count_driver_python(struct prof_store *s, int64_t *launches, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	*launches = 0;
	rc = prof_cursor__open(s, KERNEL_NAMES_DRIVER_SQL, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *name = prof_cursor__text(c, 0);

		if (name && prof_cursor__int64(c, 3) && is_plain_kernel(name))
			*launches += prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* What the kernel names of the whole capture say, whatever the program
 * is: read by the first of the file's connections to ask (the diagnosis's
 * thread ahead asks before the window is known) and shared with the rest
 * (sum_shared__take_value): a pass over every kernel by name, 0.16 s at
 * a million kernels. */
struct kernel_names {
	bool pytorch, torch_compile, nccl;
	bool bf16, tf32, fused_optimizer;
	bool python_names; /* some plain (Python) name: Triton's, maybe */
	int64_t fp32_gemm_ns;
};

static const char kernel_names_key = 0;

/* What one kernel name says, with its kernels' time. */
static void note_name(struct kernel_names *k, const char *name, int64_t time_ns)
{
	if (is_libtorch(name))
		k->pytorch = true;
	else if (is_inductor(name))
		k->torch_compile = true;
	else if (strncmp(name, "ncclDevKernel", 13) == 0 || strncmp(name, "ncclKernel", 10) == 0)
		k->nccl = true;
	k->python_names = k->python_names || is_plain_kernel(name);
	if (is_16bit(name))
		k->bf16 = true;
	if (is_tf32(name))
		k->tf32 = true;
	if (is_fused_optimizer(name))
		k->fused_optimizer = true;
	if (prog_kernel__is_fp32_gemm(name))
		k->fp32_gemm_ns = prof_add_saturated(k->fp32_gemm_ns, time_ns);
}

/* The names by KERNEL_NAMES_SQL's GROUP BY, which sorts every kernel. */
static int read_names_grouped(struct prof_store *s, struct kernel_names *k, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, KERNEL_NAMES_SQL("", ""), &c, err);

	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1)
		if (prof_cursor__text(c, 0))
			note_name(k, prof_cursor__text(c, 0), prof_cursor__int64(c, 2));
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Every kernel's name id and span as the table lies: the groups of
 * KERNEL_NAMES_SQL counted in memory. Each group's time is SQL's:
 * total() of CASE WHEN end >= start THEN end - start END, added in the
 * table's order (the GROUP BY's sort keeps a group's rows so), a
 * difference past int64 taken in double as SQLite takes it; 1 where a
 * value is no integer (a foreign file), for the statement to group. */
static int count_names(struct prof_store *s, struct id_groups *g, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, "SELECT " PROF_SQL_KERNEL_NAME_ID("") ", start, end FROM " PROF_T_KERNEL, &c,
				   err);

	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		enum prof_value_kind name = prof_cursor__kind(c, 0), sk = prof_cursor__kind(c, 1),
				     ek = prof_cursor__kind(c, 2);
		int64_t start = prof_cursor__int64(c, 1), end = prof_cursor__int64(c, 2), d;
		struct id_group *at;

		rc = 0;
		/* a kernel of no name is in a group of no string */
		if (name == PROF_VALUE_NULL)
			continue;
		if (name != PROF_VALUE_INT || (sk != PROF_VALUE_INT && sk != PROF_VALUE_NULL) ||
		    (ek != PROF_VALUE_INT && ek != PROF_VALUE_NULL)) {
			rc = 1;
			break;
		}
		at = id_groups__of(g, prof_cursor__int64(c, 0));
		if (!at) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		if (sk == PROF_VALUE_INT && ek == PROF_VALUE_INT && end >= start)
			at->total += __builtin_sub_overflow(end, start, &d) ? (double)end - (double)start : (double)d;
	}
	prof_cursor__close(c);
	return rc;
}

/* Into out (a struct kernel_names: sum_shared__value's maker): one pass
 * over the kernels, each name looked up once (0.16 s at a million
 * kernels, where the GROUP BY, which sorted every kernel, took 0.35 s). */
static int read_names(struct prof_store *s, void *out, struct prof_error *err)
{
	struct kernel_names *k = out;
	struct id_groups g = { 0 };
	struct prof_cursor *c = NULL;
	int rc;

	memset(k, 0, sizeof *k);
	rc = count_names(s, &g, err);
	if (rc == 1) {
		id_groups__exit(&g);
		return read_names_grouped(s, k, err);
	}
	if (rc == 0 && g.n)
		rc = prof_cursor__open(s, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &c, err);
	for (int i = 0; rc == 0 && i < g.n; i++) {
		prof_cursor__reset(c);
		prof_cursor__bind_int64(c, 1, g.v[i].id);
		rc = prof_cursor__next(c, err);
		if (rc == 1 && prof_cursor__text(c, 0))
			note_name(k, prof_cursor__text(c, 0), id_groups__sql_integer(g.v[i].total));
		rc = rc < 0 ? rc : 0;
	}
	prof_cursor__close(c);
	id_groups__exit(&g);
	return rc;
}

/* read_names of the capture as the store shows it, shared by the file's
 * connections where it shows every row. */
static int kernel_names_of(struct prof_store *s, struct kernel_names *k, struct prof_error *err)
{
	return sum_shared__value(s, &kernel_names_key, k, sizeof *k, read_names, err);
}

int prog_model__take_kernel_names(struct prof_store *s, struct prof_error *err)
{
	struct kernel_names k;

	return kernel_names_of(s, &k, err);
}

/* Every distinct kernel name with its launches and time, classified. */
static int read_kernel_names(struct prof_store *s, bool pytorch, struct prog_model *m,
			     struct prof_error *err)
{
	struct kernel_names k;
	int64_t other_driver = 0;
	int rc = kernel_names_of(s, &k, err);

	if (rc)
		return rc;
	m->framework[PROG_PYTORCH] = m->framework[PROG_PYTORCH] || k.pytorch;
	m->framework[PROG_TORCH_COMPILE] = m->framework[PROG_TORCH_COMPILE] || k.torch_compile;
	m->framework[PROG_NCCL] = m->framework[PROG_NCCL] || k.nccl;
	m->uses[USE_BF16] = m->uses[USE_BF16] || k.bf16;
	m->uses[USE_TF32] = m->uses[USE_TF32] || k.tf32;
	m->uses[USE_FUSED_OPTIMIZER] = m->uses[USE_FUSED_OPTIMIZER] || k.fused_optimizer;
	m->fp32_gemm_ns = prof_add_saturated(m->fp32_gemm_ns, k.fp32_gemm_ns);
	if (k.python_names && (pytorch || m->framework[PROG_PYTORCH]))
		rc = count_driver_python(s, &other_driver, err);
	if (rc == 0 && other_driver > 0)
		m->framework[PROG_TRITON] = true;
	return rc;
}

/* The first row's first n numbers (0 for none or NULL); with w, the query's
 * ?1 and ?2 are the window's start and end. */
static int read_row(struct prof_store *s, const char *sql, const struct sum_window *w,
		    int64_t *out, int n, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	for (int i = 0; i < n; i++)
		out[i] = 0;
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	if (w) {
		prof_cursor__bind_int64(c, 1, w->start_ns);
		prof_cursor__bind_int64(c, 2, w->end_ns);
	}
	rc = prof_cursor__next(c, err);
	for (int i = 0; rc == 1 && i < n; i++)
		if (!prof_cursor__is_null(c, i))
			out[i] = prof_cursor__int64(c, i);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int read_count(struct prof_store *s, const char *sql, const struct sum_window *w,
		      int64_t *out, struct prof_error *err)
{
	return read_row(s, sql, w, out, 1, err);
}

/* Copies between host and device in the window, by the host side's memory
 * kind (ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned); managed memory's copy
 * kinds (11-13: unified memory migrations). */
static int read_copies(struct prof_store *s, const struct sum_window *w, struct prog_model *m,
		       struct prof_error *err)
{
	const char *sql =
		"SELECT"
		" " SUM_TOTAL_SATURATED("bytes") ","
		" " SUM_TOTAL_SATURATED("CASE WHEN (copyKind = 1 AND srcKind = 1) OR (copyKind = 2 AND dstKind = 1) THEN bytes END") ","
		" " SUM_TOTAL_SATURATED("CASE WHEN (copyKind = 1 AND srcKind = 0) OR (copyKind = 2 AND dstKind = 0) THEN bytes END") ","
		" count(CASE WHEN copyKind = 1 THEN 1 END),"
		" count(CASE WHEN copyKind IN (11, 12, 13) THEN 1 END),"
		/* .item(), .cpu() of a scalar: a small read back to the host */
		" count(CASE WHEN copyKind = 2 AND bytes <= 65536 THEN 1 END)"
		" FROM " PROF_T_MEMCPY " WHERE copyKind IN (1, 2, 11, 12, 13) AND start >= ?1 AND start < ?2"
		" AND NOT " SUM_BAD_SPAN("");
	int64_t v[6];
	int rc;

	rc = read_row(s, sql, w, v, 6, err);
	if (rc)
		return rc;
	m->host_copy_bytes = v[0];
	m->pinned_copy_bytes = v[1];
	m->pageable_copy_bytes = v[2];
	m->h2d_copies = v[3];
	if (v[4] > 0)
		m->uses[USE_MANAGED] = true;
	m->uses[USE_HOST_READS] = v[5] > 0;
	if (m->host_copy_bytes > 0) {
		m->uses[USE_PINNED] = (double)m->pinned_copy_bytes >= 0.9 * (double)m->host_copy_bytes;
		m->uses[USE_PAGEABLE] = m->pageable_copy_bytes > 0;
	}
	return 0;
}

/* The host's time before each host-to-device copy of the window
 * (input_gaps.c). */
static int read_input_gaps(struct prof_store *s, const struct sum_window *w, const char *calls,
			   struct prog_model *m, struct prof_error *err)
{
	if (!calls || m->h2d_copies == 0)
		return 0;
	return input_gaps__total(s, w, calls, &m->input_gap_ns, err);
}

/* A (device, stream) pair as DISTINCT tells them apart: NULL is a value
 * of its own. */
struct stream_pair {
	int64_t device, stream;
	bool device_null, stream_null;
};

static int pair_cmp(const struct stream_pair *a, const struct stream_pair *b)
{
	if (a->device_null != b->device_null)
		return a->device_null ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream_null != b->stream_null)
		return a->stream_null ? -1 : 1;
	return (a->stream > b->stream) - (a->stream < b->stream);
}

/* The distinct pairs seen, sorted; at the last found for the next row,
 * which is mostly on the same stream. */
struct stream_pairs {
	struct stream_pair *v;
	int n, cap, last;
};

/* Row c's columns 0 and 1 added to the pairs: 0, or < 0 out of memory. */
static int pairs_note(struct stream_pairs *ps, struct prof_cursor *c)
{
	struct stream_pair p = { prof_cursor__int64(c, 0), prof_cursor__int64(c, 1), prof_cursor__is_null(c, 0),
				 prof_cursor__is_null(c, 1) };
	int lo = 0, hi = ps->n;

	if (ps->last < ps->n && pair_cmp(&ps->v[ps->last], &p) == 0)
		return 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, d = pair_cmp(&ps->v[mid], &p);

		if (d == 0) {
			ps->last = mid;
			return 0;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (array__grow((void **)&ps->v, &ps->cap, ps->n + 1, sizeof *ps->v))
		return -1;
	memmove(&ps->v[lo + 1], &ps->v[lo], sizeof *ps->v * (size_t)(ps->n - lo));
	ps->v[lo] = p;
	ps->n++;
	ps->last = lo;
	return 0;
}

/* The window's kernels counted (those run as graph nodes beside) and
 * their streams, then the copies' streams, into pairs: one pass over the
 * kernels where a count of the distinct streams and a count of the graph
 * nodes were a pass each (2.2 and 1.6 s of the diagnosis at 10M kernels). */
static int count_kernels_and_streams(struct prof_store *s, const struct sum_window *w,
				     struct stream_pairs *pairs, int64_t *kernels, int64_t *graph_kernels,
				     struct prof_error *err)
{
	static const char *const sql[] = {
		"SELECT deviceId, streamId, graphNodeId > 0 FROM " PROF_T_KERNEL " WHERE start >= ?1 AND start < ?2",
		"SELECT DISTINCT deviceId, streamId FROM " PROF_T_MEMCPY " WHERE start >= ?1 AND start < ?2",
	};
	int rc = 0;

	*kernels = *graph_kernels = 0;
	for (int i = 0; rc == 0 && i < 2; i++) {
		struct prof_cursor *c;

		rc = prof_cursor__open(s, sql[i], &c, err);
		if (rc)
			break;
		prof_cursor__bind_int64(c, 1, w->start_ns);
		prof_cursor__bind_int64(c, 2, w->end_ns);
		while ((rc = prof_cursor__next(c, err)) == 1) {
			if (pairs_note(pairs, c)) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				break;
			}
			if (i == 0) {
				(*kernels)++;
				*graph_kernels += prof_cursor__int64(c, 2) == 1;
			}
		}
		prof_cursor__close(c);
	}
	return rc < 0 ? rc : 0;
}

/* Streams with work in the window, and kernels run as graph nodes. Copies
 * overlap when host-device copies run on two streams or more and some of
 * their time lies under other work: the program pipelines them. */
static int read_streams(struct prof_store *s, const struct sum_window *w, struct prog_model *m,
			struct prof_error *err)
{
	const char *copy_streams_sql =
		"SELECT count(DISTINCT streamId) FROM " PROF_T_MEMCPY
		" WHERE copyKind IN (1, 2) AND start >= ?1 AND start < ?2";
	/* A copy overlaps when a kernel or another copy on another stream of its
	 * device runs while it does: sampled over at most 2000 copies. */
	const char *overlap_sql =
		"SELECT count(*), count(CASE WHEN EXISTS (SELECT 1 FROM " PROF_T_KERNEL " k"
		"  WHERE k.deviceId = c.deviceId AND k.streamId != c.streamId"
		"  AND k.start < c.end AND k.end > c.start) OR EXISTS (SELECT 1 FROM " PROF_T_MEMCPY " o"
		"  WHERE o.deviceId = c.deviceId AND o.streamId != c.streamId AND o.copyKind != c.copyKind"
		"  AND o.start < c.end AND o.end > c.start) THEN 1 END)"
		" FROM (SELECT * FROM " PROF_T_MEMCPY " WHERE copyKind IN (1, 2)"
		"  AND start >= ?1 AND start < ?2 ORDER BY start LIMIT 2000) c";
	struct stream_pairs pairs = { 0 };
	int64_t copy_streams = 0, overlap[2];
	int rc;

	rc = count_kernels_and_streams(s, w, &pairs, &m->kernels, &m->graph_kernels, err);
	m->streams = pairs.n;
	free(pairs.v);
	if (rc)
		return rc;
	if (m->graph_kernels > 0)
		m->framework[PROG_CUDA_GRAPHS] = true;
	m->uses[USE_CUDA_GRAPHS] = m->kernels > 0 && 2 * m->graph_kernels >= m->kernels;

	rc = read_count(s, copy_streams_sql, w, &copy_streams, err);
	if (rc || copy_streams < 2)
		return rc;
	/* overlap[0]: copies sampled, overlap[1]: those under other work */
	rc = read_row(s, overlap_sql, w, overlap, 2, err);
	if (rc)
		return rc;
	m->uses[USE_COPY_OVERLAP] = overlap[0] > 0 && 2 * overlap[1] >= overlap[0];
	return 0;
}

/* XLA marks each run of a compiled program with an NVTX range
 * "XlaModule:#hlo_module=...#"; a command line naming jax or torch tells
 * where kernels say nothing. */
static int read_markers(struct prof_store *s, struct prog_model *m, struct prof_error *err)
{
	const char *xla_sql =
		"SELECT 1 FROM " PROF_T_STRINGS " WHERE value LIKE 'XlaModule:%' LIMIT 1";
	const char *jax_sql =
		"SELECT 1 FROM " PROF_T_META " WHERE key = 'command' AND value LIKE '%jax%'";
	int64_t one = 0;
	int rc;

	rc = read_count(s, xla_sql, NULL, &one, err);
	if (rc)
		return rc;
	if (!one) {
		rc = read_count(s, jax_sql, NULL, &one, err);
		if (rc)
			return rc;
	}
	if (one) {
		m->framework[PROG_JAX] = true;
		m->framework[PROG_TRITON] = false; /* XLA launches its fusions by their own names */
	}
	return 0;
}

int prog_model__read_gpu(struct prof_store *s, const struct sum_window *w, bool pytorch,
			 struct prog_model *m, struct prof_error *err)
{
	int rc;

	memset(m, 0, sizeof *m);
	m->bound = -1;
	m->iterations = w->iterations;
	m->framework[PROG_PYTORCH] = pytorch;
	rc = read_kernel_names(s, pytorch, m, err);
	if (!rc)
		rc = read_copies(s, w, m, err);
	if (!rc)
		rc = read_streams(s, w, m, err);
	if (!rc)
		rc = read_markers(s, m, err);
	if (rc)
		return rc;
	m->uses[USE_TORCH_COMPILE] = m->framework[PROG_TORCH_COMPILE];
	return 0;
}

void prog_model__add_calls(struct prog_model *m, const struct prog_model *calls)
{
	for (int i = 0; i < PROG_NFRAMEWORKS; i++)
		m->framework[i] = m->framework[i] || calls->framework[i];
	for (int i = 0; i < USE_NPRACTICES; i++)
		m->uses[i] = m->uses[i] || calls->uses[i];
}

int prog_model__read_input_gaps(struct prof_store *s, const struct sum_window *w, const char *calls,
				struct prog_model *m, struct prof_error *err)
{
	return read_input_gaps(s, w, calls, m, err);
}
