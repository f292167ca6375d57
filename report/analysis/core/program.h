/* program.h - the program model: what the captured program is built on and
 * what it already does, read once per capture (per rank of a job) before
 * the rules run. A rule's advice is only worth giving where the program
 * does not do it already (a CUDA-graph program told to use CUDA graphs
 * stops reading), and only in the program's own terms (a plain CUDA
 * program has no DataLoader). The model is read from what the capture
 * holds: kernel names (ATen, Inductor, NCCL, cuBLAS's precision in its
 * kernel names), the CUDA calls made and by which thread, the memory kinds
 * of the copies, graph launches, NVTX ranges XLA writes. */
#ifndef REPORT_ANALYSIS_PROGRAM_H
#define REPORT_ANALYSIS_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"
#include "model/window.h"

struct sum_window;

/* What the program is built on. */
enum prog_framework {
	PROG_PYTORCH,         /* libtorch's kernels (ATen) or a command naming torch */
	PROG_TORCH_COMPILE,   /* Inductor's generated kernels (triton_poi_fused_...) */
	PROG_CUDA_GRAPHS,     /* kernels run as graph nodes, or graph launches */
	PROG_JAX,             /* XLA's XlaModule ranges, or a command naming jax */
	PROG_TRITON,          /* kernels of a Triton program's own (driver-launched,
			       * not Inductor's, not libtorch's) */
	PROG_NCCL,            /* NCCL's kernels */
	PROG_NFRAMEWORKS
};

/* What the program already does, which no advice may tell it to do. */
enum prog_practice {
	USE_CUDA_GRAPHS,      /* most launches in the window are graph nodes */
	USE_TORCH_COMPILE,
	USE_PINNED,           /* host-side copies from pinned memory, 90% of their bytes or more */
	USE_PAGEABLE,         /* host-side copies from pageable memory */
	USE_COPY_OVERLAP,     /* copies on several streams run under kernels or each other */
	USE_MANAGED,          /* managed (unified) memory */
	USE_PREFETCH,         /* cudaMemPrefetchAsync */
	USE_FUSED_OPTIMIZER,  /* multi-tensor (foreach) or fused optimizer kernels */
	USE_BF16,             /* 16-bit kernels: bf16 or fp16 in their names */
	USE_TF32,             /* TF32 tensor-core GEMMs and convolutions */
	USE_DATALOADER,       /* a thread that only pins host memory: a DataLoader's
			       * pin_memory thread */
	USE_HOST_READS,       /* small device-to-host copies (64 KiB at most) in
			       * the step: .item(), .cpu() of a result */
	USE_NPRACTICES
};

struct prog_model {
	bool framework[PROG_NFRAMEWORKS];
	bool uses[USE_NPRACTICES];
	/* copies between host and device in the window: bytes by memory kind */
	int64_t host_copy_bytes, pinned_copy_bytes, pageable_copy_bytes;
	int64_t h2d_copies;           /* host-to-device copies in the window */
	/* The host's time before them: from the thread's previous CUDA call to
	 * the call that made each copy, summed over the window (a step that
	 * waits for its batch waits there: a DataLoader, a tokenizer). */
	int64_t input_gap_ns;
	int streams;                  /* streams with GPU work in the window */
	int64_t graph_kernels, kernels; /* kernels in the window, of them graph nodes */
	int64_t fp32_gemm_ns;         /* FP32 GEMMs on the CUDA cores (sgemm, ffma), all the capture */
	int iterations;               /* the window's steps (0: no loop found) */
	/* What the step is bound by (enum verdict_bound; -1: no verdict), set
	 * once the verdict is made: advice for another bound is not given. */
	int bound;
	/* The host's own work in a step is what launching costs (at most
	 * DISPATCH_NS_PER_LAUNCH a launch): the Python and framework dispatch
	 * that compiling or graphing the step removes, not other host work. */
	bool dispatch;
	/* The step's host work is mostly waiting for its input: the time before
	 * its uploads is a quarter of that work or more (set with the verdict,
	 * as dispatch). */
	bool input_wait;
};

#define DISPATCH_NS_PER_LAUNCH 50000

/* The model of the capture's program, read in three parts, so that a
 * reader can make the first on another connection while it reads the
 * calls (diagnose/ahead.h); w is the analysis window (copies, streams and
 * graph nodes are counted inside it; the rest holds for the whole
 * capture), pytorch what diag__detect_pytorch found, calls the table or
 * view of every CUDA call (start, end, globalTid, nameId), NULL when the
 * capture has none:
 * - what the GPU work, the copies and the markers say (prog_model__read_gpu);
 * - what the calls' names say, into a model of their own
 *   (prog_model__take_call_names), added to the first
 *   (prog_model__add_calls): each practice the calls show is one they show
 *   whatever the GPU work says, so the parts are one model in any order;
 * - the host's time before the uploads, which needs the copies counted
 *   (prog_model__read_input_gaps). */
int prog_model__read_gpu(struct prof_store *s, const struct sum_window *w, bool pytorch,
			 struct prog_model *m, struct prof_error *err);
/* Reads what the kernel names of the whole capture say, the part of
 * prog_model__read_gpu that needs neither the window nor PyTorch's test,
 * for the file's other connections (shared; the diagnosis's thread ahead
 * takes it before the window is known). */
int prog_model__take_kernel_names(struct prof_store *s, struct prof_error *err);
/* What the names of every call of the capture say (the calls of
 * diag_scope__api_view's table: read from that table where table_here says
 * s's connection has it, else from the API tables themselves), shared as
 * prog_model__take_kernel_names is; an empty model where the capture has
 * no calls. */
int prog_model__take_call_names(struct prof_store *s, bool table_here, struct prog_model *m,
				struct prof_error *err);
void prog_model__add_calls(struct prog_model *m, const struct prog_model *calls);
int prog_model__read_input_gaps(struct prof_store *s, const struct sum_window *w, const char *calls,
				struct prog_model *m, struct prof_error *err);

/* A GEMM or convolution in FP32 on the CUDA cores, by its library's name:
 * cuBLAS's sgemm and ..._ffma_... kernels, CUTLASS's simt_sgemm. */
bool prog_kernel__is_fp32_gemm(const char *name);

/* Names as the JSON and the text say them: "pytorch", "torch.compile",
 * "cuda graphs", ...; "plain cuda" when no framework was seen. */
const char *prog_framework__name(enum prog_framework f);
const char *prog_practice__name(enum prog_practice p);
/* A practice or framework by its name (as change templates spell them):
 * true when the model has it. *known is false for a name that is not one.
 * Besides the frameworks' and practices' ids, templates may ask:
 *   input         the program loads input each step: a DataLoader's
 *                 pinning thread, or host-to-device copies every step
 *   input_wait    the step's host work is mostly the wait before its
 *                 uploads (see prog_model.input_wait)
 *   fp32_gemm     FP32 GEMMs run on the CUDA cores (no TF32, no 16-bit)
 *   dispatch      the step is launch/host bound and its host work is what
 *                 launching costs (see prog_model.dispatch)
 *   bound_launch, bound_gpu, bound_transfer, bound_sync, bound_comm
 *                 the step's verdict (all true while there is none) */
bool prog_model__has(const struct prog_model *m, const char *name, size_t len, bool *known);

/* A change written with conditional clauses, made for this program:
 * "{!graphs text}" keeps text only when the program does not use "graphs",
 * "{?pytorch text}" only when it does; the names are those of
 * prog_model__has. Clauses nest. Returns a new string (NULL: out of
 * memory); an unknown name keeps the clause and is reported through
 * *unknown (a programming error the tests catch). */
char *prog_model__render(const struct prog_model *m, const char *change, bool *unknown);

#endif
