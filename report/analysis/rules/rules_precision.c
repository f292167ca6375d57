/* rules_precision.c - FP32 GEMMs on the CUDA cores, from the kernels' names.
 *
 * cuBLAS and CUTLASS name their kernels by precision and core: an FP32 GEMM
 * that runs on the CUDA cores is "..._sgemm_..." or "..._ffma_..."; with
 * TF32 allowed the same product is a "..._tf32..." tensor-core kernel of
 * several times the throughput. So the names alone say that the tensor
 * cores sit idle in these GEMMs; sampled GPU metrics (rules_gpu_metrics.c)
 * confirm it by Tensor Active where the capture has them, and this rule
 * then leaves the finding to them. */
#include "rules.h"

#include "analysis/diagnose/diagnose.h"
#include "kernel_groups.h"

#include <stdlib.h>
#include <string.h>

#include "prof/saturate.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/error.h"
#include "prof/tables.h"

const char diag_change_tf32[] =
	"Run them on the tensor cores: allow TF32 for FP32 GEMMs "
	"(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), or "
	"CUBLAS_COMPUTE_32F_FAST_TF32 with cublasGemmEx/cublasLt), or keep "
	"the operands in BF16/FP16 and accumulate in FP32 (CUDA_R_16BF "
	"inputs, CUBLAS_COMPUTE_32F): several times the FP32 SIMT "
	"throughput, with TF32's 10-bit mantissa or BF16's 8 bits on the "
	"inputs.";

const char diag_pytorch_tf32[] =
	"In PyTorch: torch.backends.cuda.matmul.allow_tf32 = True and "
	"torch.backends.cudnn.allow_tf32 = True (or "
	"torch.set_float32_matmul_precision(\"high\")) run FP32 matmuls and "
	"convolutions in TF32 on the tensor cores; torch.autocast(device_type=\"cuda\", "
	"dtype=torch.bfloat16) runs them in BF16.";

/* The rule's "not run" line from rules_gpu_metrics, which this rule answers. */
static void unskip(struct diag_report *r, const char *rule_id)
{
	for (int i = 0; i < r->nskips; i++)
		if (!strcmp(r->skips[i].rule_id, rule_id)) {
			free(r->skips[i].rule_id);
			free(r->skips[i].reason);
			memmove(&r->skips[i], &r->skips[i + 1], sizeof *r->skips * (size_t)(r->nskips - i - 1));
			r->nskips--;
			return;
		}
}

static int rule_fp32_gemm_names(struct diag_context *ctx, struct prof_error *err)
{
	const struct kernel_groups *g;
	struct diag_tally t = { 0 };
	int64_t ns = 0;
	char b1[32];
	int rc;

	if (ctx->report->has_gpu_samples || !ctx->has_kernel)
		return 0;
	rc = kernel_groups__of(ctx, &g, err);
	if (rc)
		return rc;
	/* the offenders are ranked by time, count and name: the groups' order
	 * makes no difference */
	for (int i = 0; i < g->n; i++) {
		const char *name = g->v[i].name;
		struct diag_tally_entry *e;

		if (!name || !prog_kernel__is_fp32_gemm(name))
			continue;
		e = diag_tally__get(&t, name);
		if (!e) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		e->count += g->v[i].count;
		e->time_ns = prof_add_saturated(e->time_ns, g->v[i].time_ns);
		e->bytes = -1;
		ns = prof_add_saturated(ns, g->v[i].time_ns);
	}
	if (rc >= 0 && t.n && ctx->busy_ns > 0 &&
	    (double)ns >= diag__get(ctx, "tensor_idle.min_gemm_share") * (double)ctx->busy_ns) {
		unskip(ctx->report, "tensor_cores_idle");
		diag__add_ranked(ctx, &t, "tensor_cores_idle", "Tensor cores idle in FP32 GEMMs", ns, DIAG_HIGH,
				 diag__fmt("%d GEMM kernels are FP32 on the CUDA cores by their names (sgemm, "
					   "ffma: no TF32, BF16 or FP16 in them); they take %s, %.0f%% of the "
					   "GPU's busy time in the window. Without sampled GPU metrics the names "
					   "say it: `perfkit run --gpu-metrics` measures Tensor Active.",
					   t.n, diag__ns(b1, sizeof b1, ns),
					   100.0 * (double)ns / (double)ctx->busy_ns),
				 diag__with_pytorch(ctx, strdup(diag_change_tf32), diag_pytorch_tf32));
	}
	diag_tally__exit(&t);
	return rc < 0 ? rc : 0;
}

const struct diag_rule diag_rules_precision[] = {
	{ "tensor_cores_idle", "Tensor cores idle in FP32 GEMMs (by kernel names)", rule_fp32_gemm_names, false },
	{ NULL, NULL, NULL, false },
};
