"""torch_train.py - a small PyTorch training loop for tests/gpu/run.sh and
bench/gpu_overhead.sh.

    python3 torch_train.py plain STEPS      run (under `perfkit run` or not)
    python3 torch_train.py transformer STEPS
                                            a transformer encoder's training
                                            step (6 layers, d_model 512, batch
                                            32 x 256 tokens, AdamW, bf16
                                            autocast): a real model's step
    python3 torch_train.py profiler STEPS   the same under torch.profiler
    python3 torch_train.py tiny N           N tiny ops (x.add_(1)), plain;
    python3 torch_train.py tiny_profiler N  the same under torch.profiler:
                                            prints "per_op_us X"

Prints "kernels N" (profiler mode: CUDA kernels torch.profiler recorded),
"step_ms X" (wall time of a training step after warm-up: the steps run
in 10 blocks, the median block's mean) and
"nvtx_ranges N" (torch.cuda.nvtx ranges pushed). Every step is wrapped in
torch.cuda.nvtx.range_push/pop("train_step")."""
import os
import re
import sys
import time

import torch

WARMUP = 3
# Warm-up of at least this many seconds as well (bench/gpu_overhead.sh: the
# clocks ramp up); 0 keeps it to WARMUP steps, so that the kernels of two
# runs can be counted against each other.
WARMUP_S = float(os.environ.get("TORCH_TRAIN_WARMUP_S", "0"))


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


def build_transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    model = torch.nn.Sequential(torch.nn.Embedding(8192, 512),
                                torch.nn.TransformerEncoder(layer, 6),
                                torch.nn.Linear(512, 8192)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, 8192, (32, 256))
    y = torch.randint(0, 8192, (32, 256))
    return model, opt, x, y


def step_transformer(model, opt, x, y):
    torch.cuda.nvtx.range_push("train_step")
    xb = x.cuda(non_blocking=False)
    yb = y.cuda()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(xb)
    loss = torch.nn.functional.cross_entropy(logits.float().view(-1, 8192), yb.view(-1))
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    return loss


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


def warm(fn, times=WARMUP):
    """Run fn at least times times and for at least WARMUP_S seconds."""
    t0 = time.perf_counter()
    done = 0
    while done < times or time.perf_counter() - t0 < WARMUP_S:
        fn()
        done += 1
    torch.cuda.synchronize()
    return done


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


BLOCKS = 10


def run(steps, transformer=False):
    """Mean wall time of a step, in ms: the steps run in BLOCKS blocks, each
    ended by a synchronisation, and the median block gives the figure (a
    hiccup of the machine spoils one block, not the figure)."""
    model, opt, x, y = build_transformer() if transformer else build()
    one = step_transformer if transformer else step
    warmed = warm(lambda: one(model, opt, x, y))
    per, rest = divmod(steps, BLOCKS)
    blocks = []
    for b in range(BLOCKS):
        n = per + (1 if b < rest else 0)
        if not n:
            continue
        t0 = time.perf_counter()
        for _ in range(n):
            one(model, opt, x, y)
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - t0) * 1e3 / n)
    return median(blocks), warmed


def tiny(n):
    """The launch-bound extreme of a framework: one tiny op after another."""
    x = torch.zeros(16, device="cuda")
    warm(lambda: x.add_(1), times=100)
    per = max(n // BLOCKS, 1)
    blocks = []
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(per):
            x.add_(1)
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - t0) * 1e6 / per)
    return median(blocks)


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
    transformer = mode.startswith("transformer")
    if mode in ("profiler", "transformer_profiler"):
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step_ms, warmed = run(steps, transformer)
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
        step_ms, warmed = run(steps, transformer)
    print("step_ms %.4f" % step_ms)
    print("nvtx_ranges", steps + warmed)


if __name__ == "__main__":
    main()
