"""pageable_sync_copies.py - a PyTorch training loop with the host-side
habits that slow real ones: each step's batch (1024 x 8192 fp32, 32 MiB)
is copied from pageable CPU memory with .cuda() (no pin_memory, so the copy
is staged and blocks the host), and the loss is read with .item() every
step (a synchronisation) to be logged. The model is small for the batch:
Linear(8192, 2048), ReLU, Linear(2048, 2048), ReLU, Linear(2048, 100) in
bf16 autocast, SGD with momentum. Four batches are made on the CPU once
and reused in turn. Each step is an NVTX range "train_step"; 5 warm-up
steps, then 40 timed.

Two twins make one change each, as a finding would ask:
  --pinned   the batches in pinned memory, copied with non_blocking=True
             (the corpus' pageable_pinned);
  --no-item  the losses kept on the GPU and read once after the loop, no
             .item() inside it (pageable_no_item).

Prints steps, warmup, batch_mib, loss and step_ms (the median over blocks
of steps, each block ended by torch.cuda.synchronize)."""
import math
import sys

import torch

from steptime import time_steps

BATCH, FEATURES, CLASSES, HOST_BATCHES = 1024, 8192, 100, 4
WARMUP, STEPS = 5, 40


def main():
    args = sys.argv[1:]
    if any(a not in ("--pinned", "--no-item") for a in args):
        sys.exit("usage: pageable_sync_copies.py [--pinned] [--no-item]")
    pinned, no_item = "--pinned" in args, "--no-item" in args
    torch.manual_seed(0)
    inputs = [torch.randn(BATCH, FEATURES) for _ in range(HOST_BATCHES)]
    labels = [torch.randint(0, CLASSES, (BATCH,)) for _ in range(HOST_BATCHES)]
    if pinned:
        inputs = [t.pin_memory() for t in inputs]
        labels = [t.pin_memory() for t in labels]
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, CLASSES)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    history = []

    def step():
        i = len(history) % HOST_BATCHES
        with torch.cuda.nvtx.range("train_step"):
            x = inputs[i].cuda(non_blocking=pinned)
            y = labels[i].cuda(non_blocking=pinned)
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            history.append(loss.detach() if no_item else loss.item())

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    history = [float(v) for v in history]
    if not all(math.isfinite(v) for v in history):
        sys.exit("pageable_sync_copies: a loss is not finite")
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("batch_mib", BATCH * FEATURES * 4 >> 20)
    print("loss %.4f" % history[-1])
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
