"""python_hotspots.py - a training loop whose time goes to plain Python: an
MLP (3 Linear layers, 1024 wide, ReLU) trained with SGD on batches of 512,
where each step first builds a per-sample weight list in a Python loop
(make_weights, 40,000 math.sin calls) and ends by logging loss.item(). No
NVTX. 10 warm-up steps, then 60 timed.

Written for issue 37 before capturing it, to be read as a user reads
perfkit's output: the expected answer is in EXPECTED.md. Prints steps,
warmup, loss and step_ms."""
import math
import sys

import torch

from steptime import time_steps

WARMUP, STEPS, BATCH, WIDTH = 10, 60, 512, 1024


def make_weights(step):
    # the host's work the step waits for: per-sample weights in pure Python
    raw = [math.sin(step * 0.01 + i * 0.001) for i in range(40000)]
    return [abs(v) for v in raw[:BATCH]]


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
        torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
        torch.nn.Linear(WIDTH, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.randint(0, 10, (BATCH,), device="cuda")
    losses = []
    count = [0]

    def step():
        count[0] += 1
        w = torch.tensor(make_weights(count[0]), device="cuda")
        opt.zero_grad(set_to_none=True)
        per_sample = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
        loss = (per_sample * w).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the log line every step

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)
    if not all(math.isfinite(v) for v in losses):
        sys.exit("python_hotspots: a loss is not finite")
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("loss %.4f" % losses[-1])
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
