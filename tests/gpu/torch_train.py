"""torch_train.py - a small PyTorch training loop for tests/gpu/run.sh and
bench/gpu_overhead.sh.

    python3 torch_train.py plain STEPS      run (under `perfkit run` or not)
    python3 torch_train.py profiler STEPS   the same under torch.profiler
    python3 torch_train.py tiny N           N tiny ops (x.add_(1)), plain;
    python3 torch_train.py tiny_profiler N  the same under torch.profiler:
                                            prints "per_op_us X"

Prints "kernels N" (profiler mode: CUDA kernels torch.profiler recorded),
"step_ms X" (mean wall time of a training step after warm-up) and
"nvtx_ranges N" (torch.cuda.nvtx ranges pushed). Every step is wrapped in
torch.cuda.nvtx.range_push/pop("train_step")."""
import re
import sys
import time

import torch

WARMUP = 3


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512)
    y = torch.randint(0, 10, (256,))
    return model, opt, x, y


def step(model, opt, x, y):
    torch.cuda.nvtx.range_push("train_step")
    xb = x.cuda(non_blocking=False)
    yb = y.cuda()
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    return loss


def run(steps):
    model, opt, x, y = build()
    for _ in range(WARMUP):
        step(model, opt, x, y)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step(model, opt, x, y)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / steps


def tiny(n):
    """The launch-bound extreme of a framework: one tiny op after another."""
    x = torch.zeros(16, device="cuda")
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e6 / n


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if mode.startswith("tiny"):
        if mode == "tiny_profiler":
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                per_op = tiny(steps)
        else:
            per_op = tiny(steps)
        print("per_op_us %.3f" % per_op)
        return
    if mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step_ms = run(steps)
        # GPU-side events of torch.profiler are kernels, copies, memsets and
        # user annotations projected onto the GPU (Optimizer.step#SGD.step):
        # only the kernels compare with what CUPTI records as kernels.
        kernels = 0
        annotations = set()
        for evt in prof.events():
            if evt.device_type != torch.autograd.DeviceType.CUDA or \
                    evt.name.startswith(("Memcpy", "Memset")):
                continue
            if getattr(evt, "is_user_annotation", False) or \
                    re.fullmatch(r"[\w.]+#[\w.]+", evt.name):
                annotations.add(evt.name)
                continue
            kernels += 1
        print("kernels", kernels)
        print("gpu_annotations_excluded", ",".join(sorted(annotations)) or "-")
    else:
        step_ms = run(steps)
    print("step_ms %.4f" % step_ms)
    print("nvtx_ranges", steps + WARMUP)


if __name__ == "__main__":
    main()
