"""cnn_train.py - a CNN training step for bench/gpu_overhead.sh: a timm
ResNet-18 built from its config (100 classes, no weights), batch 32 of
3x128x128 images already on the GPU, fp32, SGD with momentum. Each step is
an NVTX range "train_step"; 5 warm-up steps, then STEPS (default 30) timed.

Prints step_ms (the median over blocks of steps, each block ended by
torch.cuda.synchronize; tests/gpu/programs/steptime.py)."""
import math
import os
import sys

import timm
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "gpu", "programs"))
from steptime import time_steps  # noqa: E402

WARMUP, STEPS, BATCH, CLASSES = 5, int(os.environ.get("STEPS", 30)), 32, 100


def main():
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=CLASSES).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(BATCH, 3, 128, 128, device="cuda")
    y = torch.randint(0, CLASSES, (BATCH,), device="cuda")
    losses = []

    def step():
        with torch.cuda.nvtx.range("train_step"):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        losses.append(loss.detach())

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)
    if not all(math.isfinite(v) for v in torch.stack(losses).tolist()):
        sys.exit("cnn_train: a loss is not finite")
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
