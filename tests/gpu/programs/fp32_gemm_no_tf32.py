"""fp32_gemm_no_tf32.py - an MLP trained in plain fp32 with TF32 switched
off (torch.backends.cuda.matmul.allow_tf32 = False,
torch.backends.cudnn.allow_tf32 = False): 4 x Linear(4096, 4096) with ReLU
between, batch 4096, SGD, random data already on the GPU. Every product is
a 4096 x 4096 x 4096 FP32 GEMM on the CUDA cores. Each step is an NVTX
range "train_step"; 3 warm-up steps, then 20 timed.

Prints steps, warmup, tf32, gemm_tflop_per_step, loss and step_ms (the
median over blocks of steps, each block ended by torch.cuda.synchronize)."""
import math
import sys

import torch

from steptime import time_steps

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

WIDTH, LAYERS, BATCH = 4096, 4, 4096
WARMUP, STEPS = 3, 20


def main():
    torch.manual_seed(0)
    layers = []
    for i in range(LAYERS):
        layers.append(torch.nn.Linear(WIDTH, WIDTH))
        if i < LAYERS - 1:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.randn(BATCH, WIDTH, device="cuda")
    losses = []

    def step():
        with torch.cuda.nvtx.range("train_step"):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        losses.append(loss.detach())

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    values = torch.stack(losses).tolist()
    if not all(math.isfinite(v) for v in values):
        sys.exit("fp32_gemm_no_tf32: a loss is not finite")
    # forward, and the backward's two products (the first layer's input
    # needs no gradient, so its backward has one)
    gemms = LAYERS + 2 * LAYERS - 1
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("tf32", torch.backends.cuda.matmul.allow_tf32)
    print("gemm_tflop_per_step %.2f" % (gemms * 2 * BATCH * WIDTH * WIDTH / 1e12))
    print("loss %.4f" % values[-1])
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
