"""triton_softmax.py - two Triton kernels written for the occasion, a
vector add and a row softmax, in a loop of 200 steps: each step adds two
fp32 vectors of 32M elements (128 MiB each) and takes the softmax of the
sum's 8192 rows of 4096. The outputs are allocated per call
(torch.empty_like, from PyTorch's caching allocator), as Triton's tutorials
do. 5 warm-up steps (the first compiles both kernels), then 200 timed; the
result is checked against torch at the end. No NVTX.

Prints steps, warmup, rows, cols and step_ms (the median over blocks of
steps, each block ended by torch.cuda.synchronize)."""
import sys

import torch
import triton
import triton.language as tl

from steptime import time_steps

ROWS, COLS = 8192, 4096
WARMUP, STEPS = 5, 200


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def softmax(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(rows,)](out, x, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols),
                            num_warps=8)
    return out


def main():
    torch.manual_seed(0)
    x = torch.randn(ROWS * COLS, device="cuda")
    y = torch.randn(ROWS * COLS, device="cuda")
    last = {}

    def step():
        last["out"] = softmax(add(x, y).view(ROWS, COLS))

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    want_sum = x + y
    if not torch.equal(add(x, y), want_sum):
        sys.exit("triton_softmax: the add differs from torch")
    want = torch.softmax(want_sum.view(ROWS, COLS), dim=1)
    if not torch.allclose(last["out"], want, rtol=1e-4, atol=1e-6):
        sys.exit("triton_softmax: the softmax differs from torch by %.3g"
                 % float((last["out"] - want).abs().max()))
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("rows", ROWS)
    print("cols", COLS)
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
