"""compile_default.py - an MLP (4 x Linear(2048, 2048), GELU between) whose
forward pass and loss run under torch.compile in its default mode, bf16
autocast inside, trained with AdamW (its defaults: foreach, eager) on
random data already on the GPU, batch 8192. The warm-up steps include the
compilation (the forward at the first call, the backward at the first
backward). Each step is an NVTX range "train_step"; 5 warm-up steps, then
30 timed. compile_reduce_overhead.py runs the same with
mode="reduce-overhead" and a small batch.

Prints mode, batch, steps, warmup, first_step_s (the first step, with the
compilation), loss and step_ms (the median over blocks of steps, each
block ended by torch.cuda.synchronize)."""
import math
import sys
import time

import torch

from steptime import time_steps

WIDTH, WARMUP, STEPS = 2048, 5, 30


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layers = []
        for i in range(4):
            layers.append(torch.nn.Linear(WIDTH, WIDTH))
            if i < 3:
                layers.append(torch.nn.GELU())
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = self.net(x)
        return torch.nn.functional.mse_loss(out.float(), y)


def run(mode, batch):
    torch.manual_seed(0)
    model = MLP().cuda()
    compiled = torch.compile(model, mode=mode)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, WIDTH, device="cuda")
    y = torch.randn(batch, WIDTH, device="cuda")
    graphs = mode == "reduce-overhead"
    last = {}

    def step():
        if graphs:
            # a new step: the graphs may reuse the last step's outputs' memory
            torch.compiler.cudagraph_mark_step_begin()
        with torch.cuda.nvtx.range("train_step"):
            opt.zero_grad(set_to_none=True)
            loss = compiled(x, y)
            loss.backward()
            opt.step()
        last["loss"] = loss

    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_step_s = time.perf_counter() - t0
    for _ in range(WARMUP - 1):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    loss = float(last["loss"])
    if not math.isfinite(loss):
        sys.exit("torch.compile(mode=%r): the loss is not finite" % mode)
    print("mode", mode)
    print("batch", batch)
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("first_step_s %.2f" % first_step_s)
    print("loss %.4f" % loss)
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    run("default", 8192)
