"""timm_resnet_dataloader.py - a timm ResNet-18 (built from its config, 100
classes, no weights) trained with SGD on images a torch DataLoader makes on
the CPU: each item is a random 3x128x128 image put through four passes of
a box blur and a per-channel normalisation in numpy (the kind of per-item
work decoding and augmentation do), about a millisecond or more of CPU a
sample. 4 workers, pin_memory=True, batch 64, fp32, NCHW. The loop is
written as usual: the batch is fetched by the `for`, and the NVTX range
"train_step" holds the copy to the GPU and the training step, not the
wait for the batch. 5 warm-up steps, then 40 timed.

Prints steps, warmup, batch, workers, loader_wait_ms (the median time the
main thread waited for a batch, timed steps), loss and step_ms (the median
over blocks of steps, each block ended by torch.cuda.synchronize)."""
import math
import sys
import time

import numpy as np
import timm
import torch

from steptime import median, time_steps

WARMUP, STEPS, BATCH, WORKERS, CLASSES = 5, 40, 64, 4, 100


class SyntheticImages(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = rng.standard_normal((3, 128, 128), dtype=np.float32)
        for _ in range(4):
            img = 0.2 * (img + np.roll(img, 1, axis=1) + np.roll(img, -1, axis=1)
                         + np.roll(img, 1, axis=2) + np.roll(img, -1, axis=2))
        img = (img - img.mean(axis=(1, 2), keepdims=True)) / (img.std(axis=(1, 2), keepdims=True) + 1e-5)
        return torch.from_numpy(np.ascontiguousarray(img, dtype=np.float32)), i % CLASSES


def main():
    torch.manual_seed(0)
    loader = torch.utils.data.DataLoader(SyntheticImages(BATCH * (WARMUP + STEPS)), batch_size=BATCH,
                                         shuffle=True, num_workers=WORKERS, pin_memory=True,
                                         drop_last=True)
    model = timm.create_model("resnet18", pretrained=False, num_classes=CLASSES).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = iter(loader)
    waits, losses = [], []

    def step():
        t0 = time.perf_counter()
        x, y = next(batches)
        waits.append(time.perf_counter() - t0)
        with torch.cuda.nvtx.range("train_step"):
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        losses.append(loss.detach())

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    step_ms = time_steps(step, STEPS, torch.cuda.synchronize)

    values = torch.stack(losses).tolist()
    if not all(math.isfinite(v) for v in values):
        sys.exit("timm_resnet_dataloader: a loss is not finite")
    print("steps", STEPS)
    print("warmup", WARMUP)
    print("batch", BATCH)
    print("workers", WORKERS)
    print("loader_wait_ms %.4f" % (median(waits[WARMUP:]) * 1e3))
    print("loss %.4f" % values[-1])
    print("step_ms %.4f" % step_ms)


if __name__ == "__main__":
    main()
