/* pytorch.h - what diagnose says to a PyTorch program (diagnose_pytorch.c):
 * whether the capture is of one, and the PyTorch sentences of changes. */
#ifndef REPORT_DIAG_PYTORCH_H
#define REPORT_DIAG_PYTORCH_H

#include <stdbool.h>

#include "context.h"

/* Whether the capture is of a PyTorch program: kernels from libtorch (ATen)
 * or torch.compile, or a command line naming torch. */
int diag__detect_pytorch(struct prof_store *s, bool *pytorch, struct prof_error *err);
/* The change with its PyTorch sentence appended when the capture is a
 * PyTorch program (ctx->report->pytorch); takes ownership of change. */
char *diag__with_pytorch(const struct diag_context *ctx, char *change, const char *pytorch);
/* The PyTorch sentences of changes that several rules make (a rule and the
 * critical path naming the same cause advise alike). */
extern const char diag_pytorch_host_work[], diag_pytorch_sync[], diag_pytorch_alloc[],
	diag_pytorch_sync_copy[], diag_pytorch_launch[];
/* diag_pytorch_host_work naming the line to change: a format of the line
 * ("file.py:line (function)", %s) and its share of the window in percent
 * (%.0f). */
extern const char diag_pytorch_host_work_at_line[];

#endif
