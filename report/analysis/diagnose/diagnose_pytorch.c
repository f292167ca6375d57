/* diagnose_pytorch.c - whether the captured program is a PyTorch program,
 * and the sentence a rule's change gains when it is. A PyTorch user does
 * not call cudaMallocHost or write the kernels: each rule says how to make
 * its change through what PyTorch offers, once, only for such captures. */
#include "diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"

/* Kernels of libtorch (ATen: "void at::native::...", "at::cuda::") or of
 * torch.compile (Inductor's "triton_poi_fused_..."), and a command line that
 * names torch (torchrun, python -m torch..., a script named so). The kernel
 * names are looked for among the strings first: a capture has far fewer
 * distinct strings than kernel launches. */
int diag__detect_pytorch(struct prof_store *s, bool *pytorch, struct prof_error *err)
{
	const char *kernels_sql =
		"SELECT 1 FROM " PROF_T_STRINGS " s"
		" WHERE (s.value LIKE 'void at::%' OR s.value LIKE '%at::native::%'"
		"  OR s.value LIKE '%at::cuda::%' OR s.value LIKE 'triton!_%!_fused!_%' ESCAPE '!')"
		" AND EXISTS (SELECT 1 FROM " PROF_T_KERNEL " k"
		"  WHERE " PROF_SQL_KERNEL_NAME_ID("k.") " = s.id) LIMIT 1";
	const char *command_sql =
		"SELECT 1 FROM " PROF_T_META " WHERE key = 'command' AND value LIKE '%torch%'";
	struct prof_cursor *c;
	int rc = 0;

	*pytorch = false;
	rc = prof_cursor__open(s, kernels_sql, &c, err);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	prof_cursor__close(c);
	*pytorch = rc == 1;
	if (rc >= 0 && !*pytorch) {
		rc = prof_cursor__open(s, command_sql, &c, err);
		if (rc)
			return rc;
		rc = prof_cursor__next(c, err);
		prof_cursor__close(c);
		*pytorch = rc == 1;
	}
	return rc < 0 ? rc : 0;
}

char *diag__with_pytorch(const struct diag_context *ctx, char *change, const char *pytorch)
{
	char *both, *sentence;
	const char *rest;
	bool unknown;

	if (!change || !pytorch || !ctx->report->pytorch)
		return change;
	/* both rendered for the program here: a sentence whose every clause
	 * is something the program does already says nothing, and is left out */
	sentence = prog_model__render(&ctx->report->program, change, &unknown);
	free(change);
	change = sentence;
	sentence = change ? prog_model__render(&ctx->report->program, pytorch, &unknown) : NULL;
	if (!sentence) {
		free(change);
		return NULL;
	}
	rest = sentence;
	if (!strncmp(rest, "In PyTorch:", 11))
		rest += 11;
	rest += strspn(rest, " ");
	both = !*rest ? change : *change ? diag__fmt("%s %s", change, sentence) : strdup(sentence);
	if (both != change)
		free(change);
	free(sentence);
	return both;
}

/* ---- the sentences more than one rule gives ---------------------------- */

/* the host's own work keeps the GPU waiting: the advice for input and for
 * dispatch, then what to look for when it is neither */
#define HOST_WORK_HEAD                                                                    \
	"In PyTorch:{?input_wait {?dataloader  More DataLoader workers (num_workers) and " \
	"prefetch_factor keep batches ready when the step waits for them.}{!dataloader  " \
	"DataLoader(..., num_workers=N, persistent_workers=True{!pinned , pin_memory=True}) " \
	"prepares batches in worker processes.}}{?dispatch {!dataloader {!graphs " \
	"{!compile  torch.compile or CUDA graphs cut the Python overhead of launching the " \
	"step.}{?compile  torch.compile(mode=\"reduce-overhead\") replays the compiled step " \
	"as a CUDA graph and cuts the Python overhead of launching it.}}}}"
#define HOST_WORK_NEITHER                                                                 \
	"{!input_wait {!dispatch  The host's work between the step's CUDA calls is more than "  \
	"launching them costs and is not a wait for input: "
/* neither: the host does something else, which the trace cannot name */
const char diag_pytorch_host_work[] = HOST_WORK_HEAD HOST_WORK_NEITHER
	"find the Python that runs there (py-spy, or torch.profiler with with_stack=True).}}";
/* neither, where the capture's Python samples name the line */
const char diag_pytorch_host_work_at_line[] = HOST_WORK_HEAD HOST_WORK_NEITHER
	"start with %s, the line that runs longest there (%.0f%% of the window), and make "
	"it cheaper or move it off the step's path.}}";

/* the host blocks in synchronisation */
const char diag_pytorch_sync[] =
	"In PyTorch: {?host_reads keep .item(), .cpu(), .tolist(), printing tensors, "
	"torch.cuda.synchronize() and data-dependent Python control flow (if "
	"loss > x) out of the step; accumulate on the GPU and read back every N "
	"steps.}"
	/* nothing is read back: the waits are the program's own, or the
	 * staging of pageable copies (.cuda() of pageable memory waits) */
	"{!host_reads the step reads no result back; keep torch.cuda.synchronize() "
	"and data-dependent Python control flow out of it{?pageable , and copy from "
	"pinned memory with non_blocking=True: .cuda() of pageable memory waits for "
	"its staging}.}";

/* allocations and frees inside the loop */
const char diag_pytorch_alloc[] =
	"In PyTorch the caching allocator should make these calls rare: remove "
	"torch.cuda.empty_cache() from the loop, keep tensor shapes fixed (pad "
	"variable lengths), and set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
	"(or backend:cudaMallocAsync) against fragmentation.";

/* copies that block the host */
const char diag_pytorch_sync_copy[] =
	"In PyTorch: move inputs with .to(\"cuda\", non_blocking=True){!pinned  from pinned "
	"tensors}, and keep .item(), .cpu(), .tolist(), .numpy() and printing tensors out "
	"of the step: each is a synchronous copy (read metrics every N steps).";

/* many small launches */
const char diag_pytorch_launch[] =
	"In PyTorch:{?bound_launch {!graphs {!compile  torch.compile(model, "
	"mode=\"reduce-overhead\") fuses the small ops and replays the step as a CUDA graph "
	"(or capture it yourself with torch.cuda.graphs / torch.cuda.make_graphed_callables).}"
	"{?compile  torch.compile(model, mode=\"reduce-overhead\") replays the compiled step "
	"as a CUDA graph.}}}{!fused_optimizer  Use the fused or foreach optimizers "
	"(torch.optim.AdamW(..., fused=True)).} A larger batch gives each launch more work.";
