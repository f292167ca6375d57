/* metrics.c - per-launch hardware metrics for the roofline and for memory
 * access efficiency (`perfkit run --metrics=roofline|memory`, env
 * PERFKIT_METRICS=roofline|memory: "memory" is duration, DRAM and L2 bytes
 * and the access counters, kept to one pass).
 *
 * The injection library forwards its CUPTI callbacks here. On the driver's
 * kernel-launch ENTER the range profiler starts; on EXIT it stops, the one
 * range (the launch, replayed once per counter pass) is decoded and one line
 * per launch is appended to $PERFKIT_METRICS_DIR/metrics-<pid>.tsv, keyed by
 * the launch's correlationId. `perfkit run` imports these lines into
 * PERFKIT_KERNEL_METRICS when the capture ends. CUPTI gives replayed
 * kernels no timestamps (their activity records end at 0 and are dropped),
 * so each line also describes the launch - host ENTER/EXIT times, grid,
 * block, registers, shared memory, stream, names - from which the import
 * rebuilds the kernel row. With
 * PERFKIT_METRICS_SAMPLE=N only every Nth launch of each kernel is profiled.
 * Kernel replay serialises the program's kernels: this mode is opt-in. */
#include "metrics.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "prof/protocol.h"
#include "range_profiler.h"

/* The roofline set needs several kernel-replay passes. Before each pass
 * after the first, CUPTI restores the kernel's memory, which leaves dirty
 * lines in L2 that the measured pass writes back: on the H100 its DRAM writes
 * come out up to the L2's size too high (a GEMM's whole output where ncu
 * counts 0) and its duration ~6 us too long, whatever the order of the
 * metrics here. The memory set (duration, DRAM and L2 bytes) fits in one
 * pass, no restore: duration and DRAM reads as ncu measures them.
 * Instruction counts do not depend on the cache.
 *
 * The access counters tell how well a kernel's global loads and stores use
 * the 32-byte sectors they pull: sectors per request (4 for 32 threads
 * reading consecutive floats, 32 when each thread's word lies in a sector of
 * its own), bytes the instructions asked for against sectors moved, and the
 * L1 and L2 sector hit rates. On the H100 each pair of them costs a pass of
 * its own, so the memory mode measures them on alternate launches of each
 * kernel, with a second set: the memory set's launches stay one-pass. The
 * roofline set measures everything on every launch. */
enum {
	M_DURATION, M_DRAM_RD, M_DRAM_WR, M_L2,
	M_LD_SECTORS, M_LD_REQUESTS, M_ST_SECTORS, M_ST_REQUESTS, M_LD_BYTES, M_ST_BYTES,
	M_L1_HIT_PCT, M_L2_HIT_PCT,
	M_DFMA, M_DADD, M_DMUL, M_FFMA, M_FADD, M_FMUL, M_HFMA, M_HADD, M_HMUL,
	M_TENSOR,
	M_TOPS_F16, M_TOPS_F16_F32, M_TOPS_BF16, M_TOPS_TF32, M_TOPS_F64, M_TOPS_F8,
	M_COUNT
};

/* Tensor-core work is counted by CUPTI's sm__ops_path_tensor_src_*: math
 * operations by source precision, an MMA's multiply-add counted as two (so
 * a 1024^3 BF16 product reads 2 * 1024^3), as ncu documents them; not by
 * sm__inst_executed_pipe_tensor times an assumed MMA shape: the shape
 * differs per instruction and architecture, and on sm_80 and newer the
 * tensor pipe also executes register moves (HFMA2.MMA), so FP32 kernels
 * show tensor instructions (the naive rollout's FP32 normalize kernel:
 * 5.6 million in 43 launches). Names differ between architectures and CUPTI
 * versions: each slot takes the first candidate this GPU offers, and a
 * slot without one is not measured ("-"). FP16 is one counter of both
 * accumulators where the GPU has it, else two. */
static const char *const tensor_op_candidates[M_COUNT][3] = {
	[M_TOPS_F16] = { "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp16.sum" },
	[M_TOPS_F16_F32] = { "sm__ops_path_tensor_src_fp16_dst_fp32.sum" },
	[M_TOPS_BF16] = { "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_bf16.sum" },
	[M_TOPS_TF32] = { "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_tf32.sum" },
	[M_TOPS_F64] = { "sm__ops_path_tensor_src_fp64.sum" },
	[M_TOPS_F8] = { "sm__ops_path_tensor_src_fp8.sum" },
};

/* The names of the metrics; the tensor-op slots are chosen when the first
 * session opens (NULL: this GPU has none of the candidates). */
static const char *metric_names[M_COUNT] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_bytes.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
	"sm__sass_data_bytes_mem_global_op_ld.sum",
	"sm__sass_data_bytes_mem_global_op_st.sum",
	"l1tex__t_sector_hit_rate.pct",
	"lts__t_sector_hit_rate.pct",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
	"sm__inst_executed_pipe_tensor.sum",
};

/* Groups of metrics, each a range of the enum. */
enum group { G_DURATION, G_MEMORY, G_ACCESS, G_FLOPS, G_TENSOR, G_TENSOR_OPS, G_NGROUPS };
static const struct { int first, end; } groups[G_NGROUPS] = {
	[G_DURATION] = { M_DURATION, M_DRAM_RD },
	[G_MEMORY] = { M_DRAM_RD, M_LD_SECTORS },
	[G_ACCESS] = { M_LD_SECTORS, M_DFMA },
	[G_FLOPS] = { M_DFMA, M_TENSOR },
	[G_TENSOR] = { M_TENSOR, M_TOPS_F16 },
	[G_TENSOR_OPS] = { M_TOPS_F16, M_COUNT },
};
#define G(g) (1u << (g))
/* The roofline sets tried in order when the first session opens: a group a
 * GPU lacks (the tensor counters, the access counters) is left out and
 * said so. The access counters are kept longest, then the tensor-core
 * FLOPs, then the tensor-pipe instructions. */
#define ROOF_CORE (G(G_DURATION) | G(G_MEMORY) | G(G_FLOPS))
static const unsigned roofline_sets[] = {
	ROOF_CORE | G(G_ACCESS) | G(G_TENSOR) | G(G_TENSOR_OPS),
	ROOF_CORE | G(G_ACCESS) | G(G_TENSOR_OPS),
	ROOF_CORE | G(G_ACCESS) | G(G_TENSOR),
	ROOF_CORE | G(G_ACCESS),
	ROOF_CORE | G(G_TENSOR) | G(G_TENSOR_OPS),
	ROOF_CORE | G(G_TENSOR_OPS),
	ROOF_CORE | G(G_TENSOR),
	ROOF_CORE,
};
#define MEMORY_SET (G(G_DURATION) | G(G_MEMORY))
#define ACCESS_SET (G(G_DURATION) | G(G_ACCESS))

/* A set of metrics as one range-profiler set: names in session order and
 * the enum value of each. */
struct metric_set {
	unsigned groups;
	const char *names[M_COUNT];
	int ids[M_COUNT], n;
};

#define MAX_CONTEXTS 16
#define SAMPLE_SLOTS 4096

static struct {
	int on;
	int was_on;                   /* stays set after metrics__exit */
	unsigned sample;              /* profile every Nth launch of a kernel */
	FILE *out;
	pthread_mutex_t lock;         /* kernel replay serialises launches anyway */
	struct { CUcontext ctx; struct rp_session *s; int failed; } ctx[MAX_CONTEXTS];
	struct { uint64_t hash; unsigned count; } seen[SAMPLE_SLOTS];
	int memory_only;              /* the one-pass memory set */
	struct metric_set sets[2];    /* chosen by the first session: the main set and,
				       * in memory mode, the access set (groups 0: none) */
	uint64_t profiled, failed;
} m = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The launch being profiled on this thread (ENTER..EXIT). */
static __thread struct rp_session *active;
static __thread uint64_t active_enter_ns;
static __thread int active_set;

/* What a kernel row needs, from the launch's parameters. */
struct launch_desc {
	CUfunction f;
	unsigned grid[3], block[3], dynamic_shared_bytes;
	CUstream stream;
};

static int describe(CUpti_CallbackId cbid, const void *params, struct launch_desc *d)
{
	const cuLaunchKernel_params *lk = params;
	const cuLaunchKernelEx_params *ex = params;

	memset(d, 0, sizeof *d);
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		if (!ex->config)
			return -1;
		d->f = ex->f;
		d->grid[0] = ex->config->gridDimX, d->grid[1] = ex->config->gridDimY;
		d->grid[2] = ex->config->gridDimZ;
		d->block[0] = ex->config->blockDimX, d->block[1] = ex->config->blockDimY;
		d->block[2] = ex->config->blockDimZ;
		d->dynamic_shared_bytes = ex->config->sharedMemBytes;
		d->stream = ex->config->hStream;
		return 0;
	default:
		/* cuLaunchKernel, its _ptsz and the cooperative launches share
		 * the leading fields */
		d->f = lk->f;
		d->grid[0] = lk->gridDimX, d->grid[1] = lk->gridDimY, d->grid[2] = lk->gridDimZ;
		d->block[0] = lk->blockDimX, d->block[1] = lk->blockDimY, d->block[2] = lk->blockDimZ;
		d->dynamic_shared_bytes = lk->sharedMemBytes;
		d->stream = lk->hStream;
		return 0;
	}
}

static void say(const char *msg)
{
	fprintf(stderr, "perfkit: metrics: %s\n", msg);
}

static int launch_cbid(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		return 1;
	default:
		return 0;
	}
}

int metrics__init(CUpti_SubscriberHandle subscriber)
{
	const char *mode = getenv(PROF_ENV_METRICS), *sample = getenv(PROF_ENV_METRICS_SAMPLE);
	const char *dir = getenv(PROF_ENV_METRICS_DIR);
	static const CUpti_CallbackId cbids[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	};
	char path[PATH_MAX];

	if (!mode || (strcmp(mode, "roofline") && strcmp(mode, "memory")))
		return 0;
	m.sample = 1;
	m.memory_only = strcmp(mode, "memory") == 0;
	if (sample && *sample) {
		long n = strtol(sample, NULL, 10);
		m.sample = n >= 1 && n <= PROF_METRICS_SAMPLE_MAX ? (unsigned)n : 1;
	}
	prof_metrics_file__path(path, sizeof path, dir && *dir ? dir : ".", (int)getpid());
	m.out = fopen(path, "w");
	if (!m.out) {
		say("cannot write the metrics file; no metrics");
		return -1;
	}
	for (size_t i = 0; i < sizeof cbids / sizeof cbids[0]; i++)
		cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbids[i]);
	m.on = 1;
	m.was_on = 1;
	say("kernel replay on: kernels run serialised and replayed, the run is slower");
	return 1;
}

/* Each tensor-op slot's first candidate the GPU of ctx offers; the slot
 * of FP16 into FP32 is left out where FP16's counter covers both. Returns
 * how many slots have one. */
static int choose_tensor_ops(CUcontext ctx)
{
	int n = 0;

	for (int id = M_TOPS_F16; id < M_COUNT; id++) {
		metric_names[id] = NULL;
		if (id == M_TOPS_F16_F32 && metric_names[M_TOPS_F16] &&
		    !strcmp(metric_names[M_TOPS_F16], tensor_op_candidates[M_TOPS_F16][0]))
			continue;
		for (int c = 0; c < 3 && tensor_op_candidates[id][c] && !metric_names[id]; c++)
			if (rp__supported(ctx, &tensor_op_candidates[id][c], 1))
				metric_names[id] = tensor_op_candidates[id][c];
		n += metric_names[id] != NULL;
	}
	return n;
}

static void set__init(struct metric_set *set, unsigned groups_in)
{
	set->groups = groups_in;
	set->n = 0;
	for (int g = 0; g < G_NGROUPS; g++)
		if (groups_in & G(g))
			for (int id = groups[g].first; id < groups[g].end; id++) {
				if (!metric_names[id])
					continue;
				set->names[set->n] = metric_names[id];
				set->ids[set->n++] = id;
			}
}

static int measured(const struct metric_set *set, int id)
{
	if (!metric_names[id])
		return 0;
	for (int g = 0; g < G_NGROUPS; g++)
		if (id >= groups[g].first && id < groups[g].end)
			return (set->groups & G(g)) != 0;
	return 0;
}

/* The first session chooses the sets: in roofline mode the first candidate
 * CUPTI accepts; in memory mode the memory set, plus the access set when
 * CUPTI accepts it. Later sessions (other contexts) open the same sets. */
static int open_session(CUcontext ctx, struct rp_session **s, char *msg, size_t cap)
{
	int chosen = m.sets[0].groups != 0;
	char line[200];

	if (m.memory_only) {
		if (!chosen)
			set__init(&m.sets[0], MEMORY_SET);
		if (rp__open(ctx, m.sets[0].names, m.sets[0].n, s, msg, cap))
			return -1;
		if (!chosen) {
			set__init(&m.sets[1], ACCESS_SET);
			if (rp__add_set(*s, m.sets[1].names, m.sets[1].n) != 1)
				m.sets[1].groups = 0;
		} else if (m.sets[1].groups && rp__add_set(*s, m.sets[1].names, m.sets[1].n) != 1) {
			rp__close(*s);
			*s = NULL;
			snprintf(msg, cap, "cannot open the access counters on another context");
			return -1;
		}
	} else if (chosen) {
		return rp__open(ctx, m.sets[0].names, m.sets[0].n, s, msg, cap);
	} else {
		size_t i, nsets = sizeof roofline_sets / sizeof *roofline_sets;
		int tensor_ops = choose_tensor_ops(ctx);
		for (i = 0; i < nsets; i++) {
			if ((roofline_sets[i] & G(G_TENSOR_OPS)) && !tensor_ops)
				continue;
			set__init(&m.sets[0], roofline_sets[i]);
			if (rp__open(ctx, m.sets[0].names, m.sets[0].n, s, msg, cap) == 0)
				break;
		}
		if (i == nsets) {
			m.sets[0].groups = 0;
			return -1;
		}
	}
	if (!chosen) {
		snprintf(line, sizeof line, "%d metrics in %d pass(es)", m.sets[0].n, rp__passes(*s, 0));
		if (m.sets[1].groups)
			snprintf(line + strlen(line), sizeof line - strlen(line),
				 "; access counters on alternate launches of each kernel: %d metrics in %d pass(es)",
				 m.sets[1].n, rp__passes(*s, 1));
		else if (!measured(&m.sets[0], M_LD_SECTORS))
			snprintf(line + strlen(line), sizeof line - strlen(line), "; no access counters");
		if (!m.memory_only && !(m.sets[0].groups & G(G_TENSOR_OPS)))
			snprintf(line + strlen(line), sizeof line - strlen(line),
				 "; no tensor-core operation counters: tensor-core FLOPs not recorded");
		say(line);
	}
	return 0;
}

static struct rp_session *session_for(CUcontext ctx)
{
	char msg[300];
	int free_slot = -1;

	for (int i = 0; i < MAX_CONTEXTS; i++) {
		if (m.ctx[i].ctx == ctx)
			return m.ctx[i].failed ? NULL : m.ctx[i].s;
		if (!m.ctx[i].ctx && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return NULL;
	m.ctx[free_slot].ctx = ctx;
	if (open_session(ctx, &m.ctx[free_slot].s, msg, sizeof msg) == 0)
		return m.ctx[free_slot].s;
	m.ctx[free_slot].failed = 1;
	say(msg);
	return NULL;
}

/* Which launch of its kernel this is among those profiled: -1 when sampling
 * skips it, else 0, 1, 2, ... (FNV-1a of the kernel's symbol: launches of
 * one kernel share a counter). */
static long profiled_index(const char *symbol)
{
	uint64_t h = 1469598103934665603ull;
	unsigned slot;

	for (const char *p = symbol ? symbol : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (slot = (unsigned)(h % SAMPLE_SLOTS);; slot = (slot + 1) % SAMPLE_SLOTS) {
		if (m.seen[slot].hash == h || m.seen[slot].hash == 0) {
			unsigned n = m.seen[slot].count++;
			m.seen[slot].hash = h;
			return n % m.sample == 0 ? (long)(n / m.sample) : -1;
		}
	}
}

/* Registers per thread and static shared memory of the launched function.
 * Since CUDA 12 the runtime launches library kernels, and the launch's f is
 * then a CUkernel, which cuFuncGetAttribute refuses: take the context's
 * CUfunction of that kernel. Without these two, a profiled launch's
 * occupancy could not be computed. */
static void function_attributes(CUfunction f, int *regs, int *static_shared)
{
	CUfunction fn = f;

	if (!f)
		return;
	if (cuFuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) != CUDA_SUCCESS &&
	    (cuKernelGetFunction(&fn, (CUkernel)f) != CUDA_SUCCESS ||
	     cuFuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) != CUDA_SUCCESS))
		return;
	cuFuncGetAttribute(static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
}

/* The tensor-core FLOPs of the line, by precision: FP16 (both
 * accumulators), BF16, TF32, FP64, FP8; "-" where not measured. */
static void tensor_ops_fields(char *buf, size_t cap, const struct metric_set *set, const double *v)
{
	static const int slots[][2] = {
		{ M_TOPS_F16, M_TOPS_F16_F32 }, { M_TOPS_BF16, -1 }, { M_TOPS_TF32, -1 },
		{ M_TOPS_F64, -1 }, { M_TOPS_F8, -1 },
	};
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof slots / sizeof slots[0] && len < cap; i++) {
		int a = slots[i][0], b = slots[i][1];
		int have_a = measured(set, a), have_b = b >= 0 && measured(set, b);
		const char *sep = i ? "\t" : "";

		if (have_a || have_b)
			len += (size_t)snprintf(buf + len, cap - len, "%s%.0f", sep,
						(have_a ? v[a] : 0) + (have_b ? v[b] : 0));
		else
			len += (size_t)snprintf(buf + len, cap - len, "%s-", sep);
	}
}

static void write_line(const CUpti_CallbackData *cb, CUpti_CallbackId cbid, uint64_t exit_ns,
		       const struct metric_set *set, const double *v)
{
	double f64 = 2 * v[M_DFMA] + v[M_DADD] + v[M_DMUL];
	double f32 = 2 * v[M_FFMA] + v[M_FADD] + v[M_FMUL];
	double f16 = 2 * v[M_HFMA] + v[M_HADD] + v[M_HMUL];
	struct launch_desc d;
	uint32_t device = 0, stream = 0, context = 0;
	int regs = 0, static_shared = 0;
	char *demangled = NULL, counts[128], memory[96], access[200], tensor[160];
	const char *mangled = cb->symbolName ? cb->symbolName : "?";

	cuptiGetDeviceId(cb->context, &device);
	cuptiGetContextId(cb->context, &context);
	if (describe(cbid, cb->functionParams, &d) == 0) {
		cuptiGetStreamIdEx(cb->context, d.stream, 0, &stream);
		function_attributes(d.f, &regs, &static_shared);
	}
	demangled = rp__demangle(mangled);
	/* counts a set does not measure are written as "-", stored as NULL */
	if (!measured(set, M_DFMA))
		snprintf(counts, sizeof counts, "-\t-\t-\t-");
	else
		snprintf(counts, sizeof counts, "%.0f\t%.0f\t%.0f\t%.0f", f64, f32, f16, v[M_TENSOR]);
	if (!measured(set, M_DRAM_RD))
		snprintf(memory, sizeof memory, "-\t-\t-");
	else
		snprintf(memory, sizeof memory, "%.0f\t%.0f\t%.0f", v[M_DRAM_RD], v[M_DRAM_WR], v[M_L2]);
	if (!measured(set, M_LD_SECTORS))
		snprintf(access, sizeof access, "-\t-\t-\t-\t-\t-\t-\t-");
	else
		snprintf(access, sizeof access, "%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f",
			 v[M_LD_SECTORS], v[M_LD_REQUESTS], v[M_ST_SECTORS], v[M_ST_REQUESTS],
			 v[M_LD_BYTES], v[M_ST_BYTES], v[M_L1_HIT_PCT], v[M_L2_HIT_PCT]);
	tensor_ops_fields(tensor, sizeof tensor, set, v);
	fprintf(m.out,
		"%d\t%u\t%u\t%.0f\t%s\t%s"
		"\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%d\t%d\t%u\t%u\t%s\t%s\t%s\t%s\n",
		(int)getpid(), cb->correlationId, device, v[M_DURATION], counts,
		memory, (unsigned long long)active_enter_ns,
		(unsigned long long)exit_ns, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1],
		d.block[2], d.dynamic_shared_bytes, regs, static_shared, stream, context, mangled,
		demangled ? demangled : mangled, access, tensor); /* older readers stop before the access counters */
	free(demangled);
}

void metrics__on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;

	if (!m.on || domain != CUPTI_CB_DOMAIN_DRIVER_API || !launch_cbid(cbid))
		return;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		struct rp_session *s;

		if (active)
			return; /* a launch from inside a launch: leave it alone */
		pthread_mutex_lock(&m.lock);
		long nth = profiled_index(cb->symbolName);
		s = nth >= 0 ? session_for(cb->context) : NULL;
		/* memory mode: odd profiled launches of a kernel take the access set */
		active_set = m.sets[1].groups && nth % 2 == 1 ? 1 : 0;
		if (s && rp__use(s, active_set) == 0 && rp__start(s) == 0) {
			active = s; /* the lock stays held until EXIT */
			cuptiGetTimestamp(&active_enter_ns);
			return;
		}
		pthread_mutex_unlock(&m.lock);
		return;
	}
	if (active) {
		double v[M_COUNT] = { 0 }, got[M_COUNT] = { 0 };
		uint64_t exit_ns = 0;
		struct rp_session *s = active;

		active = NULL;
		cuptiGetTimestamp(&exit_ns);
		if (rp__stop(s) == 0 && rp__collect(s, got) == 1) {
			const struct metric_set *set = &m.sets[active_set];
			for (int i = 0; i < set->n; i++)
				v[set->ids[i]] = got[i];
			write_line(cb, cbid, exit_ns, set, v);
			m.profiled++;
		} else if (m.failed++ == 0) {
			say(rp__last_error());
		}
		pthread_mutex_unlock(&m.lock);
	}
}

int metrics__replaying(void)
{
	/* The last activity buffers are drained after metrics__exit: their
	 * kernels were replayed all the same. */
	return m.was_on;
}

void metrics__exit(void)
{
	char msg[128];

	if (!m.on)
		return;
	m.on = 0;
	pthread_mutex_lock(&m.lock);
	for (int i = 0; i < MAX_CONTEXTS; i++) {
		rp__close(m.ctx[i].s);
		m.ctx[i].s = NULL;
	}
	if (m.out)
		fclose(m.out);
	m.out = NULL;
	pthread_mutex_unlock(&m.lock);
	snprintf(msg, sizeof msg, "%llu launches profiled, %llu failed", (unsigned long long)m.profiled,
		 (unsigned long long)m.failed);
	say(msg);
}
